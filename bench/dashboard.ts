/**
 * The owners' dashboard (issue #28) on PostgreSQL with one server of 100,000 members and 1,000,000 audit
 * events: the overview as the bot's app serves it (session, rights, every read, the page) against the
 * same reads and page from a bare `node:http` handler in the same run; the audit log's 50th page against
 * its first (keyset paging); and the server process's memory across 1,000 overview loads. The servers run
 * in a child process (bench/dashboardServers.ts); this process is the load.
 *
 * Targets (the issue): overview p50 ≤ 150 ms and p99 ≤ 400 ms, and ≤ 1.3× the bare handler; the 50th
 * audit page as fast as the first; memory flat across 1,000 loads.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { nextMessage } from './childProcess.ts';
import type { DashboardServers, DashboardServersMessage } from './dashboardServers.ts';
import { EVENTS, MEMBERS } from './dashboardServers.ts';
import {
  type BenchTable,
  formatNumber,
  formatRatio,
  median,
  medianOfRounds,
  type Summary,
  summarize,
  verdict,
} from './stats.ts';

export interface DashboardBenchOptions {
  quick?: boolean;
  progress?: (line: string) => void;
}

const SERVERS = fileURLToPath(new URL('./dashboardServers.ts', import.meta.url));
export const P50_TARGET_MS = 150;
export const P99_TARGET_MS = 400;
export const RATIO_TARGET = 1.3;
export const PAGE_RATIO_TARGET = 1.25;
const MIB = 1024 * 1024;

interface Round {
  latency: Summary;
  perSecond: number;
  requests: number;
  failures: number;
}

async function measure(
  pool: Pool,
  path: string,
  headers: Record<string, string>,
  o: { concurrency: number; durationMs?: number; count?: number },
): Promise<Round & { samples: number[] }> {
  const samples: number[] = [];
  let failures = 0;
  let sent = 0;
  const started = performance.now();
  const more = () =>
    o.count !== undefined ? sent < o.count : performance.now() < started + (o.durationMs ?? 1_000);
  await Promise.all(
    Array.from({ length: o.concurrency }, async () => {
      while (more()) {
        sent += 1;
        const t0 = performance.now();
        const response = await pool.request({ path, method: 'GET', headers });
        await response.body.dump();
        samples.push(performance.now() - t0);
        if (response.statusCode !== 200) failures += 1;
      }
    }),
  );
  const elapsed = performance.now() - started;
  return {
    samples,
    latency: summarize(samples),
    perSecond: (samples.length / elapsed) * 1_000,
    requests: samples.length,
    failures,
  };
}

async function memory(child: ChildProcess): Promise<{ rss: number; heapAfterGc: number }> {
  const answer = nextMessage<Extract<DashboardServersMessage, { type: 'memory' }>>(child, 'memory');
  child.send({ type: 'memory' });
  return answer;
}

export async function runDashboardBench(options: DashboardBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const progress = options.progress ?? (() => {});
  const rounds = quick ? 1 : 6;
  const roundMs = quick ? 500 : 2_000;
  const concurrency = 4;
  const pageRequests = quick ? 20 : 200;
  const loads = 1_000;

  progress(
    `dashboard: seeding PostgreSQL with ${formatNumber(MEMBERS)} members and ${formatNumber(EVENTS)} events`,
  );
  const child = fork(SERVERS, { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pools: Pool[] = [];
  try {
    const { servers } = await nextMessage<Extract<DashboardServersMessage, { type: 'ready' }>>(
      child,
      'ready',
    );
    const s: DashboardServers = servers;
    const pool = (url: string) => {
      const created = new Pool(url, { connections: concurrency, pipelining: 1 });
      pools.push(created);
      return created;
    };
    const app = pool(s.appUrl);
    const bare = pool(s.bareUrl);
    const cookie = { cookie: s.cookie };
    const overview = `/dashboard/${s.guildId}`;
    const first = await app.request({ path: overview, method: 'GET', headers: cookie });
    const page = await first.body.text();
    if (first.statusCode !== 200 || !page.includes('Members with a proven identity'))
      throw new Error(`the app's overview answered ${first.statusCode}`);

    progress('dashboard: warm-up');
    await measure(app, overview, cookie, { concurrency, durationMs: quick ? 300 : 2_000 });
    await measure(bare, '/', {}, { concurrency, durationMs: quick ? 300 : 2_000 });
    const appRounds: Round[] = [];
    const bareRounds: Round[] = [];
    for (let round = 0; round < rounds; round++) {
      progress(`dashboard: overview round ${round + 1}/${rounds}`);
      appRounds.push(await measure(app, overview, cookie, { concurrency, durationMs: roundMs }));
      bareRounds.push(await measure(bare, '/', {}, { concurrency, durationMs: roundMs }));
    }
    const ratio = median(appRounds.map((r, i) => r.latency.p50 / (bareRounds[i]?.latency.p50 ?? Number.NaN)));
    const appLatency = medianOfRounds(appRounds.map((r) => r.latency));
    const bareLatency = medianOfRounds(bareRounds.map((r) => r.latency));
    const failures = [...appRounds, ...bareRounds].reduce((n, r) => n + r.failures, 0);
    const overviewOk =
      appLatency.p50 <= P50_TARGET_MS &&
      appLatency.p99 <= P99_TARGET_MS &&
      ratio <= RATIO_TARGET &&
      failures === 0;
    const row = (name: string, latency: Summary, rs: Round[], ratioCell: string, result: string) => [
      name,
      formatNumber(latency.p50, 1),
      formatNumber(latency.p99, 1),
      formatNumber(median(rs.map((r) => r.perSecond))),
      formatNumber(rs.reduce((n, r) => n + r.requests, 0)),
      formatNumber(rs.reduce((n, r) => n + r.failures, 0)),
      ratioCell,
      result,
    ];

    progress('dashboard: audit pages 1 and 50');
    const auditFirst: number[] = [];
    const auditFiftieth: number[] = [];
    for (let i = 0; i < pageRequests; i++) {
      auditFirst.push(...(await measure(app, s.auditFirst, cookie, { concurrency: 1, count: 1 })).samples);
      auditFiftieth.push(
        ...(await measure(app, s.auditFiftieth, cookie, { concurrency: 1, count: 1 })).samples,
      );
    }
    const [a1, a50] = [summarize(auditFirst), summarize(auditFiftieth)];
    const pageRatio = a50.p50 / a1.p50;

    progress(`dashboard: memory across ${loads} overview loads`);
    const before = await memory(child);
    const loaded = await measure(app, overview, cookie, { concurrency, count: loads });
    const after = await memory(child);
    const heapGrowth = after.heapAfterGc - before.heapAfterGc;
    const rssGrowth = after.rss - before.rss;
    const memoryOk = heapGrowth <= 2 * MIB && rssGrowth <= 32 * MIB && loaded.failures === 0;

    const method = [
      `PostgreSQL on 127.0.0.1 (a database of its own), one server with ${formatNumber(MEMBERS)} linked members, ${formatNumber(EVENTS)} audit events over 90 days (role given/removed, linked, unlinked, failed; 90 re-check passes), their daily counts made by the store's own rollup SQL, 300 held removals, 24 h of upstream minutes; seeding took ${formatNumber(s.seedSeconds, 1)} s`,
      `servers in one child process: the bot's web app (startWebServer with the dashboard on, its defaults, the per-client limit raised to 1e9) and a bare node:http handler doing the same store reads (the authority snapshot and readOverview) and the same renderOverview, without the framework, the session cookie or the rights check`,
      `the app's requests carry a session cookie from a real sign-in through the stand-in Discord (rights read again from it at most every 60 s: a round may include one such read)`,
      `${rounds} round(s) of ${formatNumber(roundMs)} ms per server, alternating, after a warm-up; ${concurrency} requests in flight on keep-alive undici Pools; figures are medians of rounds, the ratio the median of per-round p50 ratios`,
    ].join('; ');
    return [
      {
        suite:
          'Dashboard: the overview of a server with 100,000 members and 1,000,000 audit events (issue #28)',
        method,
        targets: [
          `p50 ≤ ${P50_TARGET_MS} ms, p99 ≤ ${P99_TARGET_MS} ms, p50 ≤ ${RATIO_TARGET}× the bare handler's`,
        ],
        columns: ['Server', 'p50 ms', 'p99 ms', 'requests/s', 'requests', 'non-200', 'p50 vs bare', 'Result'],
        rows: [
          row(
            'bot web app (GET /dashboard/{guild})',
            appLatency,
            appRounds,
            formatRatio(ratio, 1),
            verdict(overviewOk),
          ),
          row('bare node:http, same reads and page', bareLatency, bareRounds, '1.00×', ''),
        ],
        notes: [
          `Page size ${formatNumber(page.length)} bytes. The app's p50 is ${formatRatio(ratio, 1)} the bare handler's.`,
        ],
      },
      {
        suite: 'Dashboard: the audit log, first page vs 50th page (keyset paging, issue #28)',
        method: `${formatNumber(pageRequests)} sequential GETs of each, alternating, through the bot's web app with a session; page 50 is reached by a cursor 49 pages (2,450 events) back from the newest; 50 events a page, newest first, out of ${formatNumber(EVENTS)}`,
        targets: [`50th page p50 ≤ ${PAGE_RATIO_TARGET}× the first page's`],
        columns: ['Page', 'p50 ms', 'p99 ms', 'vs first page', 'Result'],
        rows: [
          ['first page', formatNumber(a1.p50, 2), formatNumber(a1.p99, 2), '1.00×', ''],
          [
            '50th page',
            formatNumber(a50.p50, 2),
            formatNumber(a50.p99, 2),
            formatRatio(pageRatio, 1),
            verdict(pageRatio <= PAGE_RATIO_TARGET),
          ],
        ],
        notes: [],
      },
      {
        suite: 'Dashboard: server memory across 1,000 overview loads (issue #28)',
        method: `the server process's RSS (process.memoryUsage) and its V8 heap after a full GC (--expose-gc), read just before and just after ${formatNumber(loads)} overview loads (${concurrency} in flight), after the rounds above`,
        targets: ['heap after GC grows ≤ 2 MiB and RSS ≤ 32 MiB across the loads'],
        columns: ['Reading', 'RSS MiB', 'heap after GC MiB', 'Result'],
        rows: [
          ['before', formatNumber(before.rss / MIB, 1), formatNumber(before.heapAfterGc / MIB, 1), ''],
          [
            `after ${formatNumber(loads)} loads`,
            formatNumber(after.rss / MIB, 1),
            formatNumber(after.heapAfterGc / MIB, 1),
            verdict(memoryOk),
          ],
          ['growth', formatNumber((after.rss - before.rss) / MIB, 1), formatNumber(heapGrowth / MIB, 2), ''],
        ],
        notes: [
          `${formatNumber(loaded.requests)} loads, ${formatNumber(loaded.failures)} non-200; p50 ${formatNumber(loaded.latency.p50, 1)} ms.`,
        ],
      },
    ];
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        child.send({ type: 'stop' });
      } catch {
        // Already gone.
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
      if (child.exitCode === null) child.kill();
    }
  }
}
