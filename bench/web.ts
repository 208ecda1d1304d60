/**
 * The web tier: GET of the signing page (`/verify/<nonce>`, an open challenge) from the bot's Fastify
 * app against the same page on bare `node:http`, measured in the same run on 127.0.0.1. Both servers
 * run in one child process (bench/webServers.ts) on one in-memory SQLite store; this process is the
 * load: a keep-alive undici Pool per server with a fixed number of requests in flight, for a fixed time
 * per round, rounds alternating between the two after a warm-up. The baseline does the same work per
 * request and sends the same headers, so the difference is the framework (routing, hooks, helmet,
 * the rate limiter's bookkeeping, reply serialisation).
 *
 * The target (the web tier's issue): Fastify's p50 at most 1.3× node:http's.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { nextMessage } from './childProcess.ts';
import {
  type BenchTable,
  type Cell,
  formatNumber,
  formatRatio,
  median,
  medianOfRounds,
  type Summary,
  summarize,
  verdict,
} from './stats.ts';
import type { ServersMessage } from './webServers.ts';

export interface WebBenchOptions {
  /** A short smoke run: one short round per server. */
  quick?: boolean;
  /** Rounds per server; default 10 (quick: 1). */
  rounds?: number;
  /** Length of a round, ms; default 1,000 (quick: 300). */
  roundMs?: number;
  /** Warm-up per server before the first round, ms; default 1,500 (quick: 200). */
  warmupMs?: number;
  /** Requests in flight (and connections in each pool); default 8. */
  concurrency?: number;
  progress?: (line: string) => void;
}

export const P50_RATIO_TARGET = 1.3;
const SERVERS = fileURLToPath(new URL('./webServers.ts', import.meta.url));
/** Per connection or per response, not part of the header set the baseline copies (the CSP is made per response). */
const NOT_COPIED = new Set([
  'date',
  'content-length',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-security-policy',
]);

/** The headers of one Fastify response the baseline sends as they are: everything but per-response ones. */
export function baselineHeaders(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): Record<string, string> {
  const copied: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    if (value === undefined || NOT_COPIED.has(key)) continue;
    copied[key] = Array.isArray(value) ? value.join(', ') : value;
  }
  return copied;
}

/** The CSP of one response as a function of its nonce (every `'nonce-…'` source gets the new one). */
export function cspTemplate(csp: string): (cspNonce: string) => string {
  const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
  if (nonce === undefined) throw new Error(`no nonce in the content-security-policy "${csp}"`);
  const parts = csp.split(`'nonce-${nonce}'`);
  return (cspNonce) => parts.join(`'nonce-${cspNonce}'`);
}

/** One round against one server. Latencies in ms. */
export interface WebRound {
  latency: Summary;
  perSecond: number;
  requests: number;
  /** Answers other than 200 (e.g. a 429 would mean the limit was not raised). */
  failures: number;
  /** The server process's user + system CPU time per request, µs. */
  cpuMicrosPerRequest: number;
}

/**
 * The table's rows: Fastify, then node:http. Figures are medians of rounds; the ratios are medians of
 * the per-round ratios of rounds paired in order (the ABAB pairs).
 */
export function webRows(fastify: readonly WebRound[], baseline: readonly WebRound[]): Cell[][] {
  const pairs = Math.min(fastify.length, baseline.length);
  const paired = (pick: (round: WebRound) => number) =>
    median(
      Array.from({ length: pairs }, (_, i) => {
        const a = fastify[i];
        const b = baseline[i];
        return a && b ? pick(a) / pick(b) : Number.NaN;
      }),
    );
  const p50Ratio = paired((round) => round.latency.p50);
  const rpsRatio = paired((round) => round.perSecond);
  const failures = [...fastify, ...baseline].reduce((sum, round) => sum + round.failures, 0);
  const row = (name: string, rounds: readonly WebRound[], ratios: [string, string], result: string) => {
    const latency = medianOfRounds(rounds.map((round) => round.latency));
    return [
      name,
      formatNumber(latency.p50, 3),
      formatNumber(latency.p99, 3),
      formatNumber(median(rounds.map((round) => round.perSecond))),
      formatNumber(median(rounds.map((round) => round.cpuMicrosPerRequest))),
      formatNumber(rounds.reduce((sum, round) => sum + round.requests, 0)),
      formatNumber(rounds.reduce((sum, round) => sum + round.failures, 0)),
      ...ratios,
      result,
    ];
  };
  const ok = Number.isFinite(p50Ratio) && p50Ratio <= P50_RATIO_TARGET && failures === 0;
  return [
    row('Fastify app (startWebServer)', fastify, ratioCells(p50Ratio, rpsRatio), verdict(ok)),
    row('bare node:http', baseline, ['1.00×', '1.00×'], ''),
  ];
}

function ratioCells(p50Ratio: number, rpsRatio: number): [string, string] {
  return [formatRatio(p50Ratio, 1), formatRatio(rpsRatio, 1)];
}

export const WEB_COLUMNS = [
  'Target',
  'p50 ms',
  'p99 ms',
  'requests/s',
  'server CPU µs/req',
  'requests',
  'non-200',
  'p50 ratio vs node:http',
  'req/s ratio',
  'Result',
] as const;

/** The verdict line under the table. */
export function verdictLine(rows: readonly (readonly Cell[])[]): string {
  const fastify = rows[0] ?? [];
  const ratio = String(fastify[WEB_COLUMNS.indexOf('p50 ratio vs node:http')] ?? 'n/a');
  const result = fastify[WEB_COLUMNS.indexOf('Result')];
  const failures = String(rows.map((row) => row[WEB_COLUMNS.indexOf('non-200')]).join(' / '));
  return result === 'PASS'
    ? `Verdict: Fastify p50 is ${ratio} node:http's, within the ${P50_RATIO_TARGET}× acceptance (PASS).`
    : `Verdict: Fastify p50 is ${ratio} node:http's (non-200: ${failures}); the ${P50_RATIO_TARGET}× acceptance does not hold (MISS).`;
}

/** Where the time goes: the server's CPU time per request, which the load on other cores disturbs less than latency. */
export function cpuLine(fastify: readonly WebRound[], baseline: readonly WebRound[]): string {
  const cpu = (rounds: readonly WebRound[]) => median(rounds.map((round) => round.cpuMicrosPerRequest));
  const [a, b] = [cpu(fastify), cpu(baseline)];
  return `Server CPU per request: Fastify ${formatNumber(a)} µs, node:http ${formatNumber(b)} µs (${formatRatio(a, b)}, +${formatNumber(a - b)} µs of framework work per request).`;
}

/** One round: `concurrency` workers, each sending its next request when the last one's body has arrived. */
async function measureRound(
  pool: Pool,
  path: string,
  concurrency: number,
  durationMs: number,
): Promise<{ samples: number[]; elapsedMs: number; failures: number }> {
  const samples: number[] = [];
  let failures = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const response = await pool.request({ path, method: 'GET' });
        await response.body.dump();
        samples.push(performance.now() - t0);
        if (response.statusCode !== 200) failures++;
      }
    }),
  );
  return { samples, elapsedMs: performance.now() - started, failures };
}

async function serverCpuMicros(child: ChildProcess): Promise<number> {
  const answer = nextMessage<Extract<ServersMessage, { type: 'cpu' }>>(child, 'cpu');
  child.send({ type: 'cpu' });
  const { userMicros, systemMicros } = await answer;
  return userMicros + systemMicros;
}

/** One GET: status, header names (per-connection ones aside) and body size, to check both serve the same. */
async function sampleResponse(pool: Pool, path: string) {
  const response = await pool.request({ path, method: 'GET' });
  const body = Buffer.from(await response.body.arrayBuffer());
  const names = Object.keys(response.headers)
    .map((name) => name.toLowerCase())
    .filter((name) => !['date', 'connection', 'keep-alive'].includes(name))
    .sort();
  return { status: response.statusCode, names, bytes: body.length };
}

async function checkSameResponse(fastify: Pool, baseline: Pool, path: string): Promise<number> {
  const [a, b] = [await sampleResponse(fastify, path), await sampleResponse(baseline, path)];
  const problems: string[] = [];
  if (a.status !== 200 || b.status !== 200) problems.push(`statuses ${a.status} / ${b.status}`);
  if (a.names.join() !== b.names.join())
    problems.push(`headers differ: Fastify [${a.names.join(', ')}], node:http [${b.names.join(', ')}]`);
  if (a.bytes !== b.bytes) problems.push(`bodies of ${a.bytes} and ${b.bytes} bytes`);
  if (problems.length > 0) throw new Error(`the two servers do not answer alike: ${problems.join('; ')}`);
  return a.bytes;
}

export async function runWebBench(options: WebBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const rounds = options.rounds ?? (quick ? 1 : 10);
  const roundMs = options.roundMs ?? (quick ? 300 : 1_000);
  const warmupMs = options.warmupMs ?? (quick ? 200 : 1_500);
  const concurrency = options.concurrency ?? 8;
  const progress = options.progress ?? (() => {});

  const child = fork(SERVERS, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const pools: Pool[] = [];
  try {
    const { servers } = await nextMessage<Extract<ServersMessage, { type: 'ready' }>>(child, 'ready');
    const pool = (url: string) => {
      const created = new Pool(url, { connections: concurrency, pipelining: 1 });
      pools.push(created);
      return created;
    };
    const targets = [
      { name: 'fastify', pool: pool(servers.fastifyUrl), rounds: [] as WebRound[] },
      { name: 'node:http', pool: pool(servers.baselineUrl), rounds: [] as WebRound[] },
    ];
    const [fastify, baseline] = targets as [(typeof targets)[0], (typeof targets)[0]];
    const path = `/verify/${servers.nonce}`;
    const bytes = await checkSameResponse(fastify.pool, baseline.pool, path);

    progress('web: warm-up');
    for (const target of targets) await measureRound(target.pool, path, concurrency, warmupMs);
    for (let round = 0; round < rounds; round++) {
      progress(`web: round ${round + 1}/${rounds}`);
      for (const target of targets) {
        const cpuBefore = await serverCpuMicros(child);
        const { samples, elapsedMs, failures } = await measureRound(target.pool, path, concurrency, roundMs);
        const cpu = (await serverCpuMicros(child)) - cpuBefore;
        target.rounds.push({
          latency: summarize(samples),
          perSecond: (samples.length / elapsedMs) * 1_000,
          requests: samples.length,
          failures,
          cpuMicrosPerRequest: samples.length > 0 ? cpu / samples.length : Number.NaN,
        });
      }
    }
    const rows = webRows(fastify.rounds, baseline.rounds);
    return [
      {
        suite: 'Signing page: GET /verify/<nonce>, Fastify app vs bare node:http (web tier)',
        method: [
          `${rounds} round(s) of ${formatNumber(roundMs)} ms per server, alternating Fastify / node:http (ABAB) after ${formatNumber(warmupMs)} ms of warm-up each`,
          `${concurrency} requests in flight on a keep-alive undici Pool (${concurrency} connections, no pipelining) per server, from the bench process; both servers in one child process on 127.0.0.1, one in-memory SQLite store, one open challenge, a ${formatNumber(bytes)}-byte page`,
          `Fastify = startWebServer with its defaults (helmet headers, cookie plugin, in-memory per-client rate limit) except limits.requestsPerClientPerMinute raised to 1e9, so the limiter still counts every request but none is answered 429`,
          `node:http = the same connection timeouts, openChallenge (store.getNonce plus the used/expired check the route makes), renderVerifyPage with a fresh randomBytes(16) CSP nonce, and the ${servers.baselineHeaderNames.length} headers of one Fastify response plus content-length and the per-response CSP`,
          `latency from sending a request to the end of its body; p50, p99 and requests/s are medians of rounds, the ratios medians of the per-round ratios of ABAB pairs; server CPU = the child's user + system time per request`,
        ].join('; '),
        targets: [`Fastify p50 ≤ ${P50_RATIO_TARGET}× node:http p50, no non-200 answers`],
        columns: WEB_COLUMNS,
        rows,
        notes: [verdictLine(rows), cpuLine(fastify.rounds, baseline.rounds)],
      },
    ];
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        child.send({ type: 'stop' });
      } catch {
        // The channel is already closed: the kill below ends it.
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 5_000).unref())]);
      if (child.exitCode === null) child.kill();
    }
  }
}
