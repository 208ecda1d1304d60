/**
 * Issue #9: one upstream quota for several processes. Three bot processes (child processes, each the
 * client the bot builds from config) on one API key each look up a burst of distinct identities at
 * once, against a stand-in Web3.bio that enforces the key's limit (429 past it). With REDIS_URL the
 * processes share the quota through Redis; without it each has its own local limiter at the full limit.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { deleteKeys, REDIS_URL } from '../fakes/localRedis.ts';
import { startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { closeRedisClient, createRedisClient } from '../src/cache/redisStore.ts';
import { nextMessage } from './childProcess.ts';
import { addBenchProfiles } from './profiles.ts';
import type { WorkerReport, WorkerStart } from './sharedQuotaWorker.ts';
import { type BenchTable, formatNumber, verdict } from './stats.ts';

export interface SharedQuotaBenchOptions {
  quick?: boolean;
  /** Processes on the key; default 3. */
  processes?: number;
  /** Distinct lookups each process starts at once; default 60 (quick: 10). */
  lookupsPerProcess?: number;
  /** The key's limit: requests per window; default 20 per 1 s; whole seconds, as WEB3BIO_RATE_LIMIT takes them. */
  limit?: { requests: number; windowMs: number };
  progress?: (line: string) => void;
}

const WORKER = fileURLToPath(new URL('./sharedQuotaWorker.ts', import.meta.url));
const API_KEY = 'bench-shared-quota-key';
const THROUGHPUT_TOLERANCE = 0.1;

interface Run {
  reports: WorkerReport[];
  wallMs: number;
  upstreamRequests: number;
  /** Most requests the stand-in saw in any window of the key's length. */
  busiestWindow: number;
}

/** One run: `processes` children, each looking up its own slice of `identities` at the same moment. */
async function runOnce(
  shared: boolean,
  options: Required<Omit<SharedQuotaBenchOptions, 'quick' | 'progress'>>,
): Promise<Run> {
  const { processes, lookupsPerProcess, limit } = options;
  const upstream = await startFakeWeb3Bio({ apiKeys: { [API_KEY]: 'full' }, globalRateLimit: limit });
  const identities = addBenchProfiles(upstream.world, 0, processes * lookupsPerProcess);
  const prefix = `web3bio-bench:${randomUUID()}:`;
  const env: Record<string, string> = {
    DISCORD_TOKEN: 'bench',
    DISCORD_APPLICATION_ID: '100000000000000001',
    WEB3BIO_API_URL: upstream.url,
    WEB3BIO_API_KEY: API_KEY,
    WEB3BIO_RATE_LIMIT: `${limit.requests}/${limit.windowMs / 1_000}s`,
    LOG_LEVEL: 'warn',
    ...(shared ? { REDIS_URL, REDIS_PREFIX: prefix } : {}),
  };
  const children: ChildProcess[] = [];
  try {
    for (let i = 0; i < processes; i++)
      children.push(fork(WORKER, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
    await Promise.all(
      children.map((child, i) => {
        const start: WorkerStart = {
          env,
          identities: identities.slice(i * lookupsPerProcess, (i + 1) * lookupsPerProcess),
        };
        child.send({ type: 'start', start });
        return nextMessage(child, 'ready');
      }),
    );
    const before = upstream.requests.length;
    const began = performance.now();
    const done = children.map((child) => nextMessage<{ type: string; report: WorkerReport }>(child, 'done'));
    for (const child of children) child.send({ type: 'go' });
    const reports = (await Promise.all(done)).map((m) => m.report);
    const wallMs = performance.now() - began;
    const seen = upstream.requests.slice(before).map((r) => r.at);
    return {
      reports,
      wallMs,
      upstreamRequests: seen.length,
      busiestWindow: busiestWindow(seen, limit.windowMs),
    };
  } finally {
    for (const child of children) if (child.exitCode === null) child.kill();
    await upstream.close();
    if (shared) {
      const admin = createRedisClient(REDIS_URL);
      await new Promise((resolve) => admin.once('ready', resolve));
      await deleteKeys(admin, `${prefix}*`);
      await closeRedisClient(admin);
    }
  }
}

/** The most arrival times within any half-open window of `windowMs`. */
function busiestWindow(times: readonly number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let most = 0;
  let from = 0;
  for (let to = 0; to < sorted.length; to++) {
    while ((sorted[to] ?? 0) - (sorted[from] ?? 0) >= windowMs) from++;
    most = Math.max(most, to - from + 1);
  }
  return most;
}

export async function runSharedQuotaBench(options: SharedQuotaBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const settings = {
    processes: options.processes ?? 3,
    lookupsPerProcess: options.lookupsPerProcess ?? (quick ? 10 : 60),
    limit: options.limit ?? { requests: 20, windowMs: 1_000 },
  };
  const progress = options.progress ?? (() => {});
  const { processes, lookupsPerProcess, limit } = settings;
  const limitPerSecond = (limit.requests * 1_000) / limit.windowMs;
  const rows: string[][] = [];
  for (const shared of [true, false]) {
    progress(`shared-quota: ${shared ? 'shared through Redis' : 'local limiters'}`);
    const run = await runOnce(shared, settings);
    const total = processes * lookupsPerProcess;
    const answered = run.reports.reduce((sum, r) => sum + r.answered, 0);
    const tooMany = run.reports.reduce((sum, r) => sum + (r.statuses['429'] ?? 0), 0);
    // The earliest the last lookup can be sent: the limit lets a window's worth go at once, then one more per window.
    const floorMs = (Math.ceil(total / limit.requests) - 1) * limit.windowMs;
    const rate = (answered * 1_000) / run.wallMs;
    const rateRatio = floorMs / run.wallMs;
    const perProcess = run.reports.map((r) => r.lastAnswerMs / 1_000);
    const ok =
      tooMany === 0 &&
      answered === total &&
      Math.abs(1 - rateRatio) <= THROUGHPUT_TOLERANCE &&
      run.reports.every((r) => r.shared);
    rows.push([
      shared ? 'shared (REDIS_URL)' : 'local limiter per process',
      formatNumber(total),
      formatNumber(answered),
      formatNumber(run.upstreamRequests),
      formatNumber(tooMany),
      `${formatNumber(run.busiestWindow)} / ${formatNumber(limit.requests)}`,
      formatNumber(run.wallMs / 1_000, 2),
      formatNumber(floorMs / 1_000, 2),
      formatNumber(rate, 1),
      `${formatNumber(rateRatio, 2)}×`,
      `${formatNumber(Math.min(...perProcess), 2)} – ${formatNumber(Math.max(...perProcess), 2)}`,
      shared ? `0 429s, floor ÷ wall ≥ ${1 - THROUGHPUT_TOLERANCE}` : '',
      shared ? verdict(ok) : '',
    ]);
  }
  return [
    {
      suite: `Shared upstream quota: ${processes} processes on one API key, a burst of distinct lookups in each (issue #9)`,
      method: `one run per row; ${processes} child processes, each the client the bot builds from config (createWeb3BioFromConfig, WEB3BIO_RATE_LIMIT=${limit.requests}/${limit.windowMs / 1_000}s), each starting ${formatNumber(lookupsPerProcess)} getProfiles of distinct identities at the same moment; the stand-in Web3.bio (in the parent) answers 429 past ${limit.requests} requests per ${limit.windowMs} ms on the key, latency 0 ms; 429s counted by the processes' own metrics (web3bio_requests_total{status="429"}), retried by the client (3 retries) before a lookup fails; floor = (⌈lookups / ${limit.requests}⌉ − 1) × ${limit.windowMs} ms, the earliest the last lookup can be sent under the limit (its first window goes at once), so floor ÷ wall is the throughput as a share of the limit; "busiest window" = most arrivals at the stand-in in any ${limit.windowMs} ms`,
      targets: [
        `shared: 0 upstream 429s and total rate within ${THROUGHPUT_TOLERANCE * 100}% of the limit (${formatNumber(limitPerSecond)}/s)`,
      ],
      columns: [
        'Limiter',
        'Lookups',
        'Answered',
        'Upstream requests',
        'Upstream 429s',
        'Busiest window',
        'Wall s',
        'Floor s',
        'Rate /s',
        'Floor ÷ wall',
        'Per-process finish s (min – max)',
        'Target',
        'Result',
      ],
      rows,
    },
  ];
}
