/**
 * Issues #18 and #26: HTTP interactions (INTERACTIONS=http). The replicas run with REDIS_URL on the
 * local Redis, as several replicas must (the shared replay set). Four tables:
 * 1. Cached /whois over HTTP end to end: a web replica (`startWebReplica`) in a child process pinned to
 *    one core, against a bare `node:http` endpoint in the same process that only checks the signature
 *    (the bot's node:crypto ed25519 check) and answers a constant body, against the same replica without
 *    REDIS_URL (what Redis costs), and against the same /whois through gateway mode (`startBot` +
 *    discord.js in another child pinned to the same core, driven over the stand-in gateway). Rounds of
 *    fixed length, cases alternating, a fixed number in flight. Every child runs with npm start's V8 flags.
 * 2. The memory of a web replica started as `npm start` starts it (dist/ built by scripts/build.ts, then
 *    `node <flags> dist/main.js`): RSS idle after start and after 10,000 interactions; the sources
 *    (`node src/app/main.js`) for comparison.
 * 3. Start to first answer: spawning npm start's node command until a signed /whois is first answered 200.
 * 4. Slow uploads (unsigned, and with well-formed signatures that are not Discord's) held open against a
 *    replica started as npm start starts it: its peak RSS, and Discord's signed deliveries meanwhile; from
 *    ten addresses (issue #26), and from one address stalling 32 (issue #33).
 *
 * Requests are signed before the timed rounds (with a key made here, whose public half the servers are
 * configured with), so signing is not measured; every one is a distinct interaction (its own id and
 * token), as the endpoint refuses replayed signatures.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { connect, createServer } from 'node:net';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  type APIApplicationCommandInteractionDataOption,
  ApplicationCommandOptionType,
} from 'discord-api-types/v10';
import { Pool, request } from 'undici';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/server.ts';
import { deleteKeys, REDIS_URL } from '../fakes/localRedis.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { buildDist } from '../scripts/build.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../src/cache/redisStore.ts';
import { MAX_INTERACTION_BODY_BYTES } from '../src/web/interactions.ts';
import { nextMessage, rssBytes } from './childProcess.ts';
import { deliveriesSummary, deliverMeanwhile } from './deliveriesMeanwhile.ts';
import type { HttpServersMessage, ServerMode } from './httpServers.ts';
import {
  type BenchTable,
  type Cell,
  formatBytes,
  formatNumber,
  formatRatio,
  median,
  medianOfRounds,
  rotate,
  type Summary,
  summarize,
} from './stats.ts';

export interface HttpBenchOptions {
  /** A short smoke run: one short round per case, fewer interactions, one start, main.js only. */
  quick?: boolean;
  /** Rounds per case; default 10 (quick: 1). */
  rounds?: number;
  /** Length of a round, ms; default 1,000 (quick: 300). */
  roundMs?: number;
  /** Warm-up per case before the first round, ms; default 1,500 (quick: 200). */
  warmupMs?: number;
  /** Interactions in flight; default 8. */
  concurrency?: number;
  /** Interactions sent to the replica between the two RSS readings; default 10,000 (quick: 300). */
  memoryInteractions?: number;
  /** Starts of npm start's command (and of the sources) timed to the first answer; default 5 (quick: 1). */
  starts?: number;
  progress?: (line: string) => void;
}

export const THROUGHPUT_RATIO_TARGET = 0.7;
/** Issue #37: the replica's server CPU per cached /whois at most this many times the bare endpoint's. */
export const CPU_RATIO_TARGET = 1.4;
export const RSS_TARGET_BYTES = 100 * 1024 * 1024;
export const FIRST_ANSWER_TARGET_MS = 1_000;
const HIT_IDENTITY = 'vitalik.eth';
const USER_ID = '300000000000000001';
const SERVERS = fileURLToPath(new URL('./httpServers.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The bot from its TypeScript sources, for comparison (npm start runs the bundle scripts/build.ts makes). */
const MAIN = fileURLToPath(new URL('../src/app/main.js', import.meta.url));
/** What `npm start` runs after `node`: its V8 flags and the entry point (package.json's start script). */
export function startArgs(script: string, root: string): string[] {
  const [node, ...args] = script.trim().split(/\s+/);
  if (node !== 'node') throw new Error(`the start script runs ${node}, not node`);
  return args.map((arg) => (arg.startsWith('-') ? arg : `${root}${arg}`));
}
const START_ARGS = startArgs(
  (JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { scripts: { start: string } }).scripts.start,
  ROOT,
);
/** npm start's V8 flags: the servers measured for throughput run with them too, as a replica would. */
const V8_FLAGS = START_ARGS.filter((arg) => arg.startsWith('-'));
const PATH = '/interactions';
/** Every this many answers, the body is parsed and checked (the others are read in full, not parsed). */
const CHECK_EVERY = 16;

/** One request as Discord would send it: the JSON body and its signature headers. */
export interface SignedRequest {
  body: string;
  headers: { 'x-signature-ed25519': string; 'x-signature-timestamp': string };
}

/** An ed25519 key pair for signing requests, with the public key as DISCORD_PUBLIC_KEY wants it (hex). */
export function signingKeys(): { privateKey: KeyObject; publicKeyHex: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const x = publicKey.export({ format: 'jwk' }).x ?? '';
  return { privateKey, publicKeyHex: Buffer.from(x, 'base64url').toString('hex') };
}

/** `body` signed as Discord signs: ed25519 over the timestamp (Unix seconds, as text) followed by the body. */
export function signRequest(privateKey: KeyObject, body: string, timestampSeconds: number): SignedRequest {
  const timestamp = String(timestampSeconds);
  const signature = sign(null, Buffer.from(timestamp + body, 'utf8'), privateKey);
  return {
    body,
    headers: { 'x-signature-ed25519': signature.toString('hex'), 'x-signature-timestamp': timestamp },
  };
}

/** Sign every body with one timestamp, before a timed round (so signing is not part of what is measured). */
export function presign(
  privateKey: KeyObject,
  bodies: readonly string[],
  timestampSeconds: number = Math.floor(Date.now() / 1_000),
): SignedRequest[] {
  return bodies.map((body) => signRequest(privateKey, body, timestampSeconds));
}

/** Whether an answer is what a cached /whois answers over HTTP: type 4 (a message) with an embed. */
export function isWhoisAnswer(text: string): boolean {
  try {
    const answer = JSON.parse(text) as { type?: unknown; data?: { embeds?: unknown } };
    return answer.type === 4 && Array.isArray(answer.data?.embeds) && answer.data.embeds.length > 0;
  } catch {
    return false;
  }
}

/** Whether `taskset` can pin a process here (Linux with util-linux); the core to pin to. */
export function pinning(): { command: string[]; core: number } | null {
  const probe = spawnSync('taskset', ['-V'], { stdio: 'ignore' });
  if (probe.error || probe.status !== 0) return null;
  const core = cpus().length > 1 ? 1 : 0;
  return { command: ['taskset', '-c', String(core)], core };
}

/** The affinity mask `taskset -p` reports for a process (hex, e.g. "3"), or null when it cannot be read. */
export function affinityMask(tasksetOutput: string): string | null {
  return /affinity mask:\s*([0-9a-f,]+)\s*$/i.exec(tasksetOutput.trim())?.[1] ?? null;
}

/**
 * Keep this process (the load and the stand-ins) off the servers' core while `work` runs, then give it
 * back its affinity: the servers then compete with each other only, not with the load generator.
 */
async function onOtherCore<T>(pin: ReturnType<typeof pinning>, work: () => Promise<T>): Promise<T> {
  if (!pin || cpus().length < 2) return work();
  const pid = String(process.pid);
  const before = affinityMask(spawnSync('taskset', ['-p', pid], { encoding: 'utf8' }).stdout ?? '');
  const others = cpus()
    .map((_, core) => core)
    .filter((core) => core !== pin.core)
    .join(',');
  spawnSync('taskset', ['-a', '-p', '-c', others, pid], { stdio: 'ignore' });
  try {
    return await work();
  } finally {
    if (before !== null) spawnSync('taskset', ['-a', '-p', before, pid], { stdio: 'ignore' });
  }
}

/** One round against one case. Latencies in ms. */
export interface HttpRound {
  latency: Summary;
  perSecond: number;
  requests: number;
  /** Answers other than 200. */
  failures: number;
  /** Answers checked that were not a type-4 message with an embed (or results with no embed, over the gateway). */
  wrong: number;
  checked: number;
  /** The serving process's user + system CPU time per interaction, µs. */
  cpuMicrosPerRequest: number;
  /** The pre-signed requests ran out before the end of the round (it ended early). */
  ranOut: boolean;
}

export interface Sampled {
  samples: number[];
  elapsedMs: number;
  failures: number;
  wrong: number;
  checked: number;
  ranOut: boolean;
}

/** `concurrency` workers, each POSTing the next pre-signed request once the last answer's body has arrived. */
export async function postRound(
  pool: Pool,
  requests: readonly SignedRequest[],
  concurrency: number,
  durationMs: number,
): Promise<Sampled> {
  const samples: number[] = [];
  let failures = 0;
  let wrong = 0;
  let checked = 0;
  let next = 0;
  let ranOut = false;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const request = requests[next++];
        if (!request) {
          ranOut = true;
          return;
        }
        const t0 = performance.now();
        const response = await pool.request({
          path: PATH,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...request.headers },
          body: request.body,
        });
        const text = await response.body.text();
        samples.push(performance.now() - t0);
        if (response.statusCode !== 200) failures++;
        else if (samples.length % CHECK_EVERY === 1) {
          checked++;
          if (!isWhoisAnswer(text)) wrong++;
        }
      }
    }),
  );
  return { samples, elapsedMs: performance.now() - started, failures, wrong, checked, ranOut };
}

/** The same, through the stand-in gateway: the stand-in dispatches /whois and waits for the bot's answer at its REST. */
async function gatewayRound(discord: FakeDiscord, concurrency: number, durationMs: number): Promise<Sampled> {
  const samples: number[] = [];
  let wrong = 0;
  const started = performance.now();
  const deadline = started + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        const result = await runWhois(discord);
        samples.push(performance.now() - t0);
        if ((result.message?.embeds.length ?? 0) === 0) wrong++;
      }
    }),
  );
  return {
    samples,
    elapsedMs: performance.now() - started,
    failures: 0,
    wrong,
    checked: samples.length,
    ranOut: false,
  };
}

function runWhois(discord: FakeDiscord) {
  return discord.runCommand({ name: 'whois', userId: USER_ID, options: whoisOptions() });
}

function whoisOptions(): APIApplicationCommandInteractionDataOption[] {
  return [{ name: 'identity', type: ApplicationCommandOptionType.String, value: HIT_IDENTITY }];
}

/** Distinct /whois interactions (each its own id and token) as JSON, from the stand-in's payload builder. */
function whoisBodies(discord: FakeDiscord, count: number): string[] {
  return Array.from({ length: count }, () =>
    JSON.stringify(
      discord.buildCommandInteraction({ name: 'whois', userId: USER_ID, options: whoisOptions() }),
    ),
  );
}

interface Stand {
  discord: FakeDiscord;
  upstream: FakeWeb3Bio;
  keys: ReturnType<typeof signingKeys>;
  dataDir: string;
  /** The replicas' keys in the local Redis (deleted at the end). */
  redisPrefix: string;
  close(): Promise<void>;
}

async function startStand(): Promise<Stand> {
  const discord = await startFakeDiscord();
  const upstream = await startFakeWeb3Bio();
  const guild = discord.addGuild({ name: 'Bench Guild' });
  discord.addMember(guild.id, { id: USER_ID, username: 'bench' });
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-http-'));
  const redisPrefix = `bench-http-${process.pid}-${Date.now().toString(36)}:`;
  return {
    discord,
    upstream,
    keys: signingKeys(),
    dataDir,
    redisPrefix,
    async close() {
      await Promise.allSettled([discord.close(), upstream.close()]);
      await rm(dataDir, { recursive: true, force: true });
      const redis = createRedisClient(REDIS_URL);
      await untilRedisReady(redis);
      await deleteKeys(redis, `${redisPrefix}*`).catch(() => {});
      await closeRedisClient(redis);
    },
  };
}

/**
 * The configuration every process here runs with: HTTP mode (a replica with REDIS_URL, as a deployment of
 * several runs it, so deliveries are checked against the shared replay set; `redis: false` for the
 * comparison without it) unless `gateway`.
 */
function benchEnv(
  stand: Stand,
  mode: 'http' | 'gateway',
  port = 0,
  redis = mode === 'http',
): Record<string, string> {
  const common = {
    DISCORD_TOKEN: stand.discord.token,
    DISCORD_APPLICATION_ID: stand.discord.applicationId,
    DISCORD_API_URL: stand.discord.apiUrl,
    WEB3BIO_API_URL: stand.upstream.url,
    WEB3BIO_RATE_LIMIT: 'off',
    USER_COOLDOWN_COMMANDS: '0',
    DATA_DIR: stand.dataDir,
    LOG_LEVEL: 'info',
  };
  if (mode === 'gateway') return common;
  return {
    ...common,
    ...(redis ? { REDIS_URL, REDIS_PREFIX: stand.redisPrefix } : {}),
    INTERACTIONS: 'http',
    PUBLIC_URL: 'https://bot.example.test',
    DISCORD_PUBLIC_KEY: stand.keys.publicKeyHex,
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
  };
}

/** Fork bench/httpServers.ts (pinned when it can be), with an IPC channel. */
function forkServers(mode: ServerMode, pin: ReturnType<typeof pinning>): ChildProcess {
  const [command, ...args] = [...(pin?.command ?? []), process.execPath, ...V8_FLAGS, SERVERS, mode];
  return spawn(command ?? process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    if (child.connected) child.send({ type: 'stop' });
    else child.kill('SIGTERM');
  } catch {
    child.kill('SIGTERM');
  }
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 8_000).unref())]);
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
}

async function cpuMicros(child: ChildProcess): Promise<number> {
  const answer = nextMessage<Extract<HttpServersMessage, { type: 'cpu' }>>(child, 'cpu');
  child.send({ type: 'cpu' });
  const { userMicros, systemMicros } = await answer;
  return userMicros + systemMicros;
}

type CaseName = 'replica' | 'local' | 'floor' | 'bare' | 'gateway';
type SignedCase = Exclude<CaseName, 'gateway'>;

interface Case {
  name: CaseName;
  child: ChildProcess;
  run: (durationMs: number) => Promise<Sampled>;
  rounds: HttpRound[];
}

const ROW_LABELS: Record<CaseName, string> = {
  replica: '/whois over HTTP: web replica (startWebReplica) with REDIS_URL, cache hit',
  local: 'the same replica without REDIS_URL (replay set in the process only)',
  floor: 'floor: the bare check + JSON parse, envelope, shared replay claim (Redis), constant body',
  bare: 'bare node:http: signature check + constant body',
  gateway: '/whois over the gateway: startBot + discord.js, cache hit',
};

export const THROUGHPUT_COLUMNS = [
  'Case',
  'Interactions',
  'p50 ms',
  'p99 ms',
  'interactions/s',
  'server CPU µs/interaction',
  'server CPU vs bare',
  'non-200 / wrong',
  'throughput vs bare',
  'Target',
  'Result',
] as const;

/** Median over ABAB pairs of `a`'s `measure` (interactions/s unless told) over `b`'s in the same round. */
export function pairedRatio(
  a: readonly HttpRound[],
  b: readonly HttpRound[],
  measure: 'perSecond' | 'cpuMicrosPerRequest' = 'perSecond',
): number {
  const pairs = Math.min(a.length, b.length);
  return median(
    Array.from(
      { length: pairs },
      (_, i) => (a[i]?.[measure] ?? Number.NaN) / (b[i]?.[measure] ?? Number.NaN),
    ),
  );
}

const pairedCpuRatio = (a: readonly HttpRound[], b: readonly HttpRound[]) =>
  pairedRatio(a, b, 'cpuMicrosPerRequest');

/** What the floor leaves the rest of the replica under the CPU target, against what the rest costs. */
export function floorNote(
  replica: readonly HttpRound[],
  floor: readonly HttpRound[],
  bare: readonly HttpRound[],
): string {
  const floorRatio = pairedCpuRatio(floor, bare);
  const rest = pairedCpuRatio(replica, bare) - floorRatio;
  return `The floor costs ${formatRatio(floorRatio, 1)} the bare endpoint's server CPU: under the ${CPU_RATIO_TARGET}× target that leaves ${formatNumber(Math.max(0, CPU_RATIO_TARGET - floorRatio), 2)}× for everything else a replica does (Fastify, the delivery gate, the router, its render, log line and metrics), which cost ${formatNumber(rest, 2)}× here.`;
}

/** The throughput table's rows: the replica (with its verdict), the same without Redis, the bare endpoint, the gateway. */
export function throughputRows(rounds: Readonly<Record<CaseName, readonly HttpRound[]>>): Cell[][] {
  const replicaRatio = pairedRatio(rounds.replica, rounds.bare);
  const replicaCpu = pairedCpuRatio(rounds.replica, rounds.bare);
  const row = (name: CaseName, target: string, result: string): Cell[] => {
    const list = rounds[name];
    const latency = medianOfRounds(list.map((round) => round.latency));
    const failures = list.reduce((sum, round) => sum + round.failures, 0);
    const wrong = list.reduce((sum, round) => sum + round.wrong, 0);
    return [
      ROW_LABELS[name],
      formatNumber(latency.n),
      formatNumber(latency.p50, 2),
      formatNumber(latency.p99, 2),
      formatNumber(median(list.map((round) => round.perSecond))),
      formatNumber(median(list.map((round) => round.cpuMicrosPerRequest))),
      name === 'bare' ? '1.00×' : formatRatio(pairedCpuRatio(list, rounds.bare), 1),
      `${formatNumber(failures)} / ${formatNumber(wrong)}`,
      name === 'bare' ? '1.00×' : formatRatio(pairedRatio(list, rounds.bare), 1),
      target,
      result,
    ];
  };
  const clean = (name: CaseName) => rounds[name].every((round) => round.failures === 0 && round.wrong === 0);
  const ok =
    Number.isFinite(replicaRatio) &&
    replicaRatio >= THROUGHPUT_RATIO_TARGET &&
    replicaCpu <= CPU_RATIO_TARGET &&
    clean('replica');
  return [
    row(
      'replica',
      `throughput ≥ ${THROUGHPUT_RATIO_TARGET}× bare, server CPU ≤ ${CPU_RATIO_TARGET}× bare, all 200 with the embed`,
      ok ? 'PASS' : 'FAIL',
    ),
    row('local', '', ''),
    row('floor', '', ''),
    row('bare', '', ''),
    row('gateway', '', ''),
  ];
}

async function runThroughput(
  stand: Stand,
  settings: Settings,
): Promise<{ table: BenchTable; upstreamDuringRounds: number }> {
  const { rounds, roundMs, warmupMs, concurrency, progress, pin } = settings;
  const { discord, upstream, keys } = stand;
  const replicaChild = forkServers('replica', pin);
  const localChild = forkServers('replica', pin);
  const gatewayChild = forkServers('gateway', pin);
  const pools: Pool[] = [];
  try {
    const ready = (child: ChildProcess, env: Record<string, string>) => {
      const answer = nextMessage<Extract<HttpServersMessage, { type: 'ready' }>>(child, 'ready');
      child.send({ type: 'start', env });
      return answer;
    };
    const [{ replicaUrl, bareUrl, floorUrl }, { replicaUrl: localUrl }] = await Promise.all([
      ready(replicaChild, benchEnv(stand, 'http')),
      ready(localChild, benchEnv(stand, 'http', 0, false)),
      ready(gatewayChild, benchEnv(stand, 'gateway')),
    ]);
    if (!replicaUrl || !bareUrl || !floorUrl || !localUrl)
      throw new Error('a replica child did not say where it listens');
    const pool = (url: string) => {
      const made = new Pool(url, { connections: concurrency, pipelining: 1 });
      pools.push(made);
      return made;
    };
    const replicaPool = pool(replicaUrl);
    const localPool = pool(localUrl);
    const barePool = pool(bareUrl);
    const floorPool = pool(floorUrl);

    // Warm the replicas' caches (an upstream request each), and give the bare endpoint the very same answer.
    for (const target of [replicaPool, localPool]) {
      const [first] = presign(keys.privateKey, whoisBodies(discord, 1));
      const sample = await postRound(target, first ? [first] : [], 1, 60_000);
      if (sample.failures > 0) throw new Error('a replica did not answer the first /whois with 200');
    }
    const firstAnswer = await (async () => {
      const [request] = presign(keys.privateKey, whoisBodies(discord, 1));
      if (!request) throw new Error('no request');
      const response = await replicaPool.request({
        path: PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: request.body,
      });
      return { status: response.statusCode, text: await response.body.text() };
    })();
    if (firstAnswer.status !== 200 || !isWhoisAnswer(firstAnswer.text))
      throw new Error(
        `the replica answered /whois with ${firstAnswer.status}: ${firstAnswer.text.slice(0, 200)}`,
      );
    const bodySet = nextMessage(replicaChild, 'body-set');
    replicaChild.send({ type: 'body', body: firstAnswer.text });
    await bodySet;
    // The gateway bot's cache too.
    await runWhois(discord);

    // Pre-signed requests per round: 1.5× the most a round of that case has used, and more when one ran out.
    const capacity: Record<SignedCase, number> = {
      replica: Math.ceil((6_000 * roundMs) / 1_000),
      local: Math.ceil((6_000 * roundMs) / 1_000),
      floor: Math.ceil((12_000 * roundMs) / 1_000),
      bare: Math.ceil((12_000 * roundMs) / 1_000),
    };
    const signedRound = (name: SignedCase, target: Pool) => async (durationMs: number) => {
      const requests = presign(keys.privateKey, whoisBodies(discord, capacity[name]));
      const result = await postRound(target, requests, concurrency, durationMs);
      capacity[name] = Math.max(capacity[name], Math.ceil(result.samples.length * (result.ranOut ? 2 : 1.5)));
      return result;
    };
    const cases: Case[] = [
      { name: 'replica', child: replicaChild, run: signedRound('replica', replicaPool), rounds: [] },
      { name: 'local', child: localChild, run: signedRound('local', localPool), rounds: [] },
      { name: 'floor', child: replicaChild, run: signedRound('floor', floorPool), rounds: [] },
      { name: 'bare', child: replicaChild, run: signedRound('bare', barePool), rounds: [] },
      {
        name: 'gateway',
        child: gatewayChild,
        run: (durationMs) => gatewayRound(discord, concurrency, durationMs),
        rounds: [],
      },
    ];
    progress('http: warm-up');
    for (const item of cases) await item.run(warmupMs);
    const upstreamBefore = upstream.requests.length;
    for (let round = 0; round < rounds; round++) {
      progress(`http: round ${round + 1}/${rounds}`);
      // ABAB…: every case once per round, the order rotated from one round to the next.
      for (const item of rotate(cases, round)) {
        const cpuBefore = await cpuMicros(item.child);
        const sampled = await item.run(roundMs);
        const cpu = (await cpuMicros(item.child)) - cpuBefore;
        item.rounds.push({
          latency: summarize(sampled.samples),
          perSecond: (sampled.samples.length / sampled.elapsedMs) * 1_000,
          requests: sampled.samples.length,
          failures: sampled.failures,
          wrong: sampled.wrong,
          checked: sampled.checked,
          cpuMicrosPerRequest: sampled.samples.length > 0 ? cpu / sampled.samples.length : Number.NaN,
          ranOut: sampled.ranOut,
        });
      }
    }
    const upstreamDuringRounds = upstream.requests.length - upstreamBefore;
    const [replica, local, floor, bare, gateway] = cases as [Case, Case, Case, Case, Case];
    const byName = {
      replica: replica.rounds,
      local: local.rounds,
      floor: floor.rounds,
      bare: bare.rounds,
      gateway: gateway.rounds,
    };
    const rows = throughputRows(byName);
    const checked = replica.rounds.reduce((sum, round) => sum + round.checked, 0);
    const ranOut = [...replica.rounds, ...local.rounds, ...floor.rounds, ...bare.rounds].filter(
      (round) => round.ranOut,
    ).length;
    const cpu = (list: readonly HttpRound[]) => median(list.map((round) => round.cpuMicrosPerRequest));
    const p50 = (list: readonly HttpRound[]) => medianOfRounds(list.map((r) => r.latency)).p50;
    return {
      upstreamDuringRounds,
      table: {
        suite:
          'HTTP interactions: cached /whois POSTed to a web replica vs a bare signature-checking node:http endpoint, and through the gateway (issue #18)',
        method: [
          `${rounds} round(s) of ${formatNumber(roundMs)} ms per case after ${formatNumber(warmupMs)} ms of warm-up each, the five cases alternating with the order rotated every round (ABCDE, BCDEA, …)`,
          `${concurrency} interactions in flight from this process (a keep-alive undici Pool of ${concurrency} connections per server, no pipelining); latency from sending to the end of the answer's body`,
          `servers in child processes ${pin ? `pinned to core ${pin.core} with taskset (this process, the load and the stand-ins, moved to the other core(s) meanwhile)` : 'NOT pinned (taskset unavailable)'}: the replica, the floor and the bare endpoint share one process, the replica without Redis and the gateway bot have one each on the same core; the stand-in Discord and Web3.bio run in this process, the local Redis (redis-server) is not pinned`,
          `replica = startWebReplica (INTERACTIONS=http, PROCESS_ROLE=all, no gating, REDIS_URL on the local Redis: the shared replay set, and the cache's L2 and the recent lookups there too; USER_COOLDOWN_COMMANDS=0, logs made at info then dropped); the same without REDIS_URL in a child of its own; their caches warmed first (${upstreamBefore} upstream request(s) before the rounds: one per replica, one for the gateway bot); every request a distinct interaction from the stand-in's payload builder (own id and token), signed before its round with an ed25519 key whose public half is DISCORD_PUBLIC_KEY, timestamps of that moment`,
          `bare = node:http in the replica's process: reads the body, checkDiscordSignature (the bot's node:crypto verify), answers the replica's own /whois answer (${formatNumber(Buffer.byteLength(firstAnswer.text))} bytes) as a constant`,
          `floor = node:http in the same process: the bare endpoint's read and check, then what the bot's route does before it may act (JSON parse, the route's zod envelope and its application, the shared replay claim: SharedDeliveries on the same Redis under its own prefix), then the same constant (no Fastify, no delivery gate, no router, render, log line or metrics): the least a replica that keeps issue #33's replay protection can cost`,
          `gateway = startBot against the stand-in gateway, each /whois dispatched by the stand-in (runCommand) until its type-4 callback reaches the stand-in's REST`,
          `every ${CHECK_EVERY}th 200 answer parsed and checked (type 4 with an embed; ${formatNumber(checked)} replica answers checked), every gateway result checked; figures are medians of rounds, ratios medians of the per-round ratios; server CPU = the serving child's user + system time per interaction (the replica, the floor and bare share a process: each is measured over its own rounds only); server CPU vs bare = the median of the per-round ratios`,
        ].join('; '),
        targets: [
          `replica interactions/s ≥ ${THROUGHPUT_RATIO_TARGET}× the bare endpoint's (issue #33) and server CPU per interaction ≤ ${CPU_RATIO_TARGET}× the bare endpoint's (issue #37), every answer 200 with the embed`,
        ],
        columns: THROUGHPUT_COLUMNS,
        rows,
        notes: [
          `Upstream requests during the timed rounds: ${upstreamDuringRounds} (every /whois a cache hit when 0).`,
          `REDIS_URL's cost per interaction: the replica with it ran at ${formatRatio(pairedRatio(replica.rounds, local.rounds), 1)} the throughput of the one without (paired rounds), ${formatNumber(cpu(replica.rounds) - cpu(local.rounds))} µs more server CPU per interaction (medians).`,
          floorNote(replica.rounds, floor.rounds, bare.rounds),
          `Gateway vs HTTP: the replica's p50 is ${formatRatio(p50(replica.rounds), p50(gateway.rounds))} the gateway's and its throughput ${formatRatio(pairedRatio(replica.rounds, gateway.rounds), 1)} (paired rounds). The gateway figures include the stand-in's own dispatch and REST work in this process.`,
          ...(ranOut > 0
            ? [
                `${ranOut} round(s) ran out of pre-signed requests and ended early (their rate is over their own length).`,
              ]
            : []),
        ],
      },
    };
  } finally {
    await Promise.all(pools.map((p) => p.close()));
    await Promise.all([stopChild(replicaChild), stopChild(localChild), stopChild(gatewayChild)]);
  }
}

interface Settings {
  quick: boolean;
  rounds: number;
  roundMs: number;
  warmupMs: number;
  concurrency: number;
  memoryInteractions: number;
  starts: number;
  progress: (line: string) => void;
  pin: ReturnType<typeof pinning>;
}

/** A free TCP port on 127.0.0.1 (there is a tiny window for another process to take it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The processes: as `npm start` starts it (its V8 flags included), and the entry point without them. */
export type Entry = 'main' | 'lean';
const ENTRIES: Record<Entry, { args: string[]; label: string }> = {
  main: {
    args: START_ARGS,
    label: `npm start (node ${START_ARGS.map((a) => a.replace(ROOT, '')).join(' ')})`,
  },
  lean: { args: [MAIN], label: 'node src/app/main.js (the sources: no build, no V8 flags)' },
};

interface MainProcess {
  child: ChildProcess;
  url: string;
  metricsUrl: string | undefined;
  spawnedAt: number;
  /** When the "web replica ready" log line arrived, ms after spawn (null until then). */
  readyMs: () => number | null;
  stop(): Promise<void>;
}

/**
 * An entry as `npm start` runs main.js, with only the bench's configuration in its environment (and
 * PATH), in an empty working directory (so no stray .env is read); with a loopback /metrics listener
 * when `metrics`, for the V8 heap figures.
 */
async function spawnMain(stand: Stand, entry: Entry, metrics = false): Promise<MainProcess> {
  const port = await freePort();
  const metricsPort = metrics ? await freePort() : undefined;
  const env = {
    PATH: process.env.PATH ?? '',
    ...benchEnv(stand, 'http', port),
    ...(metricsPort === undefined ? {} : { METRICS_PORT: String(metricsPort), METRICS_HOST: '127.0.0.1' }),
  };
  const spawnedAt = performance.now();
  const child = spawn(process.execPath, ENTRIES[entry].args, {
    cwd: stand.dataDir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let ready: number | null = null;
  let buffered = '';
  const errors: string[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    if (ready === null && buffered.includes('"web replica ready"')) ready = performance.now() - spawnedAt;
    if (buffered.length > 65_536) buffered = buffered.slice(-4_096);
  });
  child.stderr?.on('data', (chunk: Buffer) => errors.push(chunk.toString('utf8')));
  child.once('exit', (code) => {
    if (code !== 0 && code !== null && errors.length > 0)
      console.error(`${ENTRIES[entry].label} exited ${code}: ${errors.join('')}`);
  });
  return {
    child,
    url: `http://127.0.0.1:${port}`,
    metricsUrl: metricsPort === undefined ? undefined : `http://127.0.0.1:${metricsPort}/metrics`,
    spawnedAt,
    readyMs: () => ready,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 8_000).unref())]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** POST signed requests one after another until one is answered 200 (refused connections are retried); ms after spawn. */
async function firstAnswer(main: MainProcess, requests: readonly SignedRequest[], timeoutMs: number) {
  const pool = new Pool(main.url, { connections: 1, pipelining: 1 });
  try {
    for (const request of requests) {
      if (performance.now() - main.spawnedAt > timeoutMs) break;
      if (main.child.exitCode !== null)
        throw new Error(`the replica exited (${main.child.exitCode}) before answering`);
      try {
        const response = await pool.request({
          path: PATH,
          method: 'POST',
          headers: { 'content-type': 'application/json', ...request.headers },
          body: request.body,
        });
        const text = await response.body.text();
        if (response.statusCode === 200) {
          return { ms: performance.now() - main.spawnedAt, whois: isWhoisAnswer(text) };
        }
      } catch {
        // Not listening yet.
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  } finally {
    await pool.close();
  }
  throw new Error(`the replica did not answer a signed /whois within ${timeoutMs} ms`);
}

async function waitFor(predicate: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!predicate()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const SETTLE_MS = 2_000;
const START_TIMEOUT_MS = 60_000;

/** The V8 figures of prom-client's default metrics: heap committed and used, new space and large objects committed. */
export interface HeapFigures {
  total: number;
  used: number;
  newSpace: number;
  largeObjects: number;
}

/** Read the V8 heap figures from a Prometheus text exposition (NaN where absent). */
export function heapFigures(exposition: string): HeapFigures {
  const value = (pattern: RegExp) => Number(pattern.exec(exposition)?.[1] ?? Number.NaN);
  return {
    total: value(/^nodejs_heap_size_total_bytes ([\d.e+]+)$/m),
    used: value(/^nodejs_heap_size_used_bytes ([\d.e+]+)$/m),
    newSpace: value(/^nodejs_heap_space_size_total_bytes\{space="new"\} ([\d.e+]+)$/m),
    largeObjects: value(/^nodejs_heap_space_size_total_bytes\{space="large_object"\} ([\d.e+]+)$/m),
  };
}

async function scrapeHeap(main: MainProcess): Promise<HeapFigures> {
  if (!main.metricsUrl) return heapFigures('');
  try {
    const response = await request(main.metricsUrl);
    return heapFigures(await response.body.text());
  } catch {
    return heapFigures('');
  }
}

interface MemoryReading {
  rss: number;
  heap: HeapFigures;
}

async function reading(main: MainProcess): Promise<MemoryReading> {
  // RSS first: the scrape itself allocates.
  const rss = await rssBytes(main.child.pid ?? 0);
  return { rss, heap: await scrapeHeap(main) };
}

async function measureMemory(stand: Stand, settings: Settings, entry: Entry) {
  const { memoryInteractions, concurrency } = settings;
  // A replica as it restarts on a machine: one start before fills Node's compile cache (main.js).
  const first = await spawnMain(stand, entry);
  await waitFor(() => first.readyMs() !== null, START_TIMEOUT_MS, 'the first start');
  await first.stop();
  const main = await spawnMain(stand, entry, true);
  const pool = new Pool(main.url, { connections: concurrency, pipelining: 1 });
  try {
    await waitFor(() => main.readyMs() !== null, START_TIMEOUT_MS, 'the "web replica ready" log line');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const idle = await reading(main);
    const requests = presign(stand.keys.privateKey, whoisBodies(stand.discord, memoryInteractions));
    const sent = await postRound(pool, requests, concurrency, 600_000);
    const loaded = await reading(main);
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const settled = await reading(main);
    return { idle, loaded, settled, sent };
  } finally {
    await pool.close();
    await main.stop();
  }
}

function measureLean(stand: Stand, settings: Settings, progress: (line: string) => void) {
  progress('http: replica memory (the sources, for comparison)');
  return measureMemory(stand, settings, 'lean');
}

async function runMemory(stand: Stand, settings: Settings): Promise<BenchTable> {
  const { memoryInteractions, concurrency, progress } = settings;
  progress('http: replica memory (npm start)');
  const main = await measureMemory(stand, settings, 'main');
  const lean = settings.quick ? undefined : await measureLean(stand, settings, progress);
  const target = `≤ ${formatBytes(RSS_TARGET_BYTES)}`;
  const ok = (bytes: number) => (bytes <= RSS_TARGET_BYTES ? 'PASS' : 'FAIL');
  const rows: Cell[][] = [];
  const measured = lean
    ? ([
        ['main', main],
        ['lean', lean],
      ] as const)
    : ([['main', main]] as const);
  for (const [entry, figures] of measured) {
    // Every one of the interactions sent (the list running out is how this measurement ends), all 200.
    const clean =
      figures.sent.failures === 0 &&
      figures.sent.wrong === 0 &&
      figures.sent.samples.length === memoryInteractions;
    const judged = entry === 'main';
    const row = (what: string, at: MemoryReading, result: string): Cell[] => [
      `${ENTRIES[entry].label}: ${what}`,
      formatBytes(at.rss),
      formatBytes(at.heap.total),
      formatBytes(at.heap.used),
      formatBytes(at.heap.newSpace),
      formatBytes(at.heap.largeObjects),
      judged && result !== '' ? target : '',
      judged ? result : '',
    ];
    rows.push(row('idle after start', figures.idle, ok(figures.idle.rss)));
    rows.push(
      row(
        `right after ${formatNumber(memoryInteractions)} interactions`,
        figures.loaded,
        clean ? ok(figures.loaded.rss) : 'FAIL',
      ),
    );
    rows.push(row(`${formatNumber(SETTLE_MS)} ms later`, figures.settled, ''));
  }
  const sentLine = (entry: Entry, sent: Sampled) =>
    `${ENTRIES[entry].label}: ${formatNumber(sent.samples.length)} sent, ${formatNumber(sent.failures)} non-200, ${formatNumber(sent.wrong)} wrong of ${formatNumber(sent.checked)} checked, ${formatNumber((sent.samples.length / sent.elapsedMs) * 1_000)} interactions/s`;
  return {
    suite:
      'HTTP interactions: web replica memory, started as npm start starts it (INTERACTIONS=http, issue #18)',
    method: `node with npm start's arguments (${START_ARGS.map((a) => a.replace(ROOT, '')).join(' ')}) spawned with process.execPath (${process.version}), INTERACTIONS=http, PROCESS_ROLE=all, no gating, REDIS_URL on the local Redis, METRICS_PORT on 127.0.0.1 (for the V8 figures), logging at info to a pipe this process drains, not pinned; dist/ built first as npm start builds it (scripts/build.ts); then, for comparison only, the sources without a build or V8 flags (node src/app/main.js) the same way; each measured start preceded by one start of the same entry (a replica restarted on its machine; for the sources, Node's compile cache warm, see src/app/main.js); RSS = VmRSS from /proc/<pid>/status, read ${formatNumber(SETTLE_MS)} ms after the "web replica ready" log line with no interaction yet, then right after ${formatNumber(memoryInteractions)} distinct signed /whois interactions (${concurrency} in flight, the first a cache miss, the rest hits), and ${formatNumber(SETTLE_MS)} ms later; V8 heap committed / used, new space and large-object space committed from the process's own /metrics (prom-client defaults), scraped just after each RSS reading`,
    targets: [`RSS ${target} idle and after ${formatNumber(memoryInteractions)} interactions (npm start)`],
    columns: [
      'Measurement',
      'RSS',
      'V8 heap committed',
      'V8 heap used',
      'new space',
      'large objects',
      'Target',
      'Result',
    ],
    rows,
    notes: [
      sentLine('main', main.sent),
      ...(lean ? [sentLine('lean', lean.sent)] : ['Quick run: the run from the sources left out.']),
    ],
  };
}

/** What slow uploads may make a replica hold (issue #26: 300 of them held 301 MiB, RSS 493 MiB). */
export const FLOOD_RSS_TARGET_BYTES = 150 * 1024 * 1024;
/** Source addresses the uploads come from, round robin: each stays under the per-address connection cap (64). */
const FLOOD_SOURCES = 10;
const FLOOD_CHUNK_BYTES = 64 * 1024;
const FLOOD_CHUNK_EVERY_MS = 50;
/** How long the uploads are held once their bytes (all but the last) are sent. */
const FLOOD_HOLD_MS = 1_500;
/** One address's stalled uploads (issue #33: 32 of them held the whole budget) and how long they are held: past the body timeout (3 s). */
const STALLED_UPLOADS = 32;
const STALLED_HOLD_MS = 5_000;
/** Discord's signed deliveries during each row, one every this many ms from 127.0.0.1. */
const MEANWHILE_EVERY_MS = 100;
/** Discord's deadline for an answer, and the share of its deliveries that must meet it while one address stalls. */
const ANSWER_WITHIN_MS = 3_000;
const ANSWERED_SHARE = 0.95;

/** How one slow upload ended: answered (with the status), or still open (its body still being read) when closed. */
export type UploadOutcome = { answered: number } | 'held';

/** Counts of outcomes, e.g. "300 × 401" or "32 held open, 268 × 503". */
export function outcomeSummary(outcomes: readonly UploadOutcome[]): string {
  const held = outcomes.filter((o) => o === 'held').length;
  const byStatus = new Map<number, number>();
  for (const o of outcomes) if (o !== 'held') byStatus.set(o.answered, (byStatus.get(o.answered) ?? 0) + 1);
  const parts = [...byStatus]
    .sort(([a], [b]) => a - b)
    .map(([status, n]) => `${formatNumber(n)} × ${status}`);
  if (held > 0) parts.unshift(`${formatNumber(held)} read, still open when closed`);
  return parts.join(', ');
}

/**
 * One slow upload on a raw socket from `localAddress`: the head of a POST to /interactions announcing
 * `length` bytes, then `send` bytes of the body in 64 KiB chunks every 50 ms (all but its last byte
 * unless told), then nothing. Ends when the server answers (the status is kept) or when `close` is called.
 */
function slowUpload(
  port: number,
  localAddress: string,
  length: number,
  headers: Record<string, string>,
  send = length - 1,
) {
  const head = [
    `POST ${PATH} HTTP/1.1`,
    'Host: bot.example.test',
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ].join('\r\n');
  const socket = connect({ host: '127.0.0.1', port, localAddress });
  let text = '';
  let sent = 0;
  let timer: NodeJS.Timeout | undefined;
  socket.on('error', () => {});
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('latin1');
  });
  socket.once('connect', () => {
    socket.write(`${head}\r\n\r\n`);
    timer = setInterval(() => {
      const size = Math.min(FLOOD_CHUNK_BYTES, send - sent);
      if (size <= 0 || socket.destroyed) return void clearInterval(timer);
      socket.write(Buffer.alloc(size, 0x20));
      sent += size;
    }, FLOOD_CHUNK_EVERY_MS);
  });
  const status = () => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
  return {
    /** Sent all it will send, or was answered. */
    done: () => status() > 0 || socket.destroyed || sent >= send,
    close(): UploadOutcome {
      clearInterval(timer);
      socket.destroy();
      return status() > 0 ? { answered: status() } : 'held';
    },
  };
}

/** Fresh, well-formed signature headers that are not Discord's signature over anything. */
function invalidSignature(): Record<string, string> {
  return {
    'X-Signature-Ed25519': 'ab'.repeat(64),
    'X-Signature-Timestamp': String(Math.floor(Date.now() / 1_000)),
  };
}

interface FloodKind {
  label: string;
  length: number;
  headers: () => Record<string, string>;
  /** Body bytes each sends; default all but the last. */
  send?: number;
}

const FLOOD_KINDS = {
  unsigned: { label: 'unsigned, announcing 1 MiB each', length: 1024 * 1024, headers: () => ({}) },
  invalid: {
    label: `with well-formed signatures that are not Discord's (fresh timestamps), announcing the body limit (${formatBytes(MAX_INTERACTION_BODY_BYTES)}) each`,
    length: MAX_INTERACTION_BODY_BYTES,
    headers: invalidSignature,
  },
  stalledHeads: {
    label: `only the headers of a POST announcing ${formatBytes(MAX_INTERACTION_BODY_BYTES)}, with well-formed signatures that are not Discord's (issue #33's attack)`,
    length: MAX_INTERACTION_BODY_BYTES,
    headers: invalidSignature,
    send: 0,
  },
  stalledBodies: {
    label: `all but the last byte of ${formatBytes(MAX_INTERACTION_BODY_BYTES)} each, with well-formed signatures that are not Discord's`,
    length: MAX_INTERACTION_BODY_BYTES,
    headers: invalidSignature,
  },
} satisfies Record<string, FloodKind>;

/**
 * Opens `count` slow uploads of each kind at once (each kind from `sources` addresses starting at the
 * offset `nextSources` gives), waits until all sent what they will, holds `holdMs`, samples RSS throughout.
 */
async function flood(
  main: MainProcess,
  kinds: readonly FloodKind[],
  count: number,
  nextSources: () => number,
  { sources, holdMs }: { sources: number; holdMs: number },
) {
  const port = Number(new URL(main.url).port);
  const uploads = kinds.flatMap((kind) => {
    const first = nextSources();
    return Array.from({ length: count }, (_, i) =>
      slowUpload(
        port,
        // From 127.0.0.2 on: Discord's deliveries meanwhile come from 127.0.0.1.
        `127.0.${Math.floor((first + (i % sources)) / 250)}.${2 + ((first + (i % sources)) % 250)}`,
        kind.length,
        kind.headers(),
        kind.send,
      ),
    );
  });
  let peak = 0;
  const sample = async () => {
    peak = Math.max(peak, await rssBytes(main.child.pid ?? 0));
  };
  const deadline = performance.now() + 30_000;
  while (!uploads.every((upload) => upload.done()) && performance.now() < deadline) {
    await sample();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const holdUntil = performance.now() + holdMs;
  while (performance.now() < holdUntil) {
    await sample();
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const outcomes = uploads.map((upload) => upload.close());
  return { peak, outcomes };
}

async function runSlowUploads(stand: Stand, settings: Settings): Promise<BenchTable> {
  const count = settings.quick ? 60 : 300;
  settings.progress('http: slow uploads against a replica (npm start)');
  const main = await spawnMain(stand, 'main');
  try {
    await waitFor(() => main.readyMs() !== null, START_TIMEOUT_MS, 'the "web replica ready" log line');
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const idle = await rssBytes(main.child.pid ?? 0);
    const target = `≤ ${formatBytes(FLOOD_RSS_TARGET_BYTES)}`;
    const answeredTarget = `≥ ${ANSWERED_SHARE * 100}% × 200 within ${formatNumber(ANSWER_WITHIN_MS)} ms`;
    const rows: Cell[][] = [['idle after start', formatBytes(idle), '', '', '', '']];
    const many = { sources: FLOOD_SOURCES, holdMs: FLOOD_HOLD_MS };
    const one = { sources: 1, holdMs: STALLED_HOLD_MS };
    // The one-address rows first: RSS only grows, and the floods from ten addresses reach higher.
    const phases: [string, FloodKind[], number, typeof many][] = [
      [
        `one address, ${STALLED_UPLOADS} uploads sending ${FLOOD_KINDS.stalledHeads.label}`,
        [FLOOD_KINDS.stalledHeads],
        STALLED_UPLOADS,
        one,
      ],
      [
        `one address, ${STALLED_UPLOADS} uploads sending ${FLOOD_KINDS.stalledBodies.label}`,
        [FLOOD_KINDS.stalledBodies],
        STALLED_UPLOADS,
        one,
      ],
      [`${count} slow uploads ${FLOOD_KINDS.unsigned.label}`, [FLOOD_KINDS.unsigned], count, many],
      [`${count} slow uploads ${FLOOD_KINDS.invalid.label}`, [FLOOD_KINDS.invalid], count, many],
      [`both at once (${count * 2} uploads)`, [FLOOD_KINDS.unsigned, FLOOD_KINDS.invalid], count, many],
    ];
    // Each kind of each row from addresses of its own: refused deliveries are counted per address, and an
    // address refused 30 times in a minute is turned away unread (429) before any other check.
    let sources = 0;
    for (const [label, kinds, uploads, from] of phases) {
      const signed = presign(stand.keys.privateKey, whoisBodies(stand.discord, 1_000));
      const discord = deliverMeanwhile(main.url, PATH, signed, MEANWHILE_EVERY_MS);
      const { peak, outcomes } = await flood(main, kinds, uploads, () => (sources += from.sources), from);
      const delivered = deliveriesSummary(await discord.stop(), ANSWER_WITHIN_MS, ANSWERED_SHARE);
      const oneAddress = from === one;
      const ok = peak <= FLOOD_RSS_TARGET_BYTES && (!oneAddress || delivered.ok);
      rows.push([
        `${label}: peak while held`,
        formatBytes(peak),
        outcomeSummary(outcomes),
        delivered.text,
        oneAddress ? `${target}; Discord ${answeredTarget}` : target,
        ok ? 'PASS' : 'FAIL',
      ]);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    const after = await rssBytes(main.child.pid ?? 0);
    const pool = new Pool(main.url, { connections: 1 });
    const whois = await postRound(
      pool,
      presign(stand.keys.privateKey, whoisBodies(stand.discord, 1)),
      1,
      10_000,
    );
    await pool.close();
    const answered = whois.samples.length === 1 && whois.failures === 0 && whois.wrong === 0;
    rows.push([
      `${formatNumber(SETTLE_MS)} ms after the last closed`,
      formatBytes(after),
      `then a signed /whois: ${answered ? '200 with the embed' : 'NOT answered 200'}`,
      '',
      '',
      '',
    ]);
    return {
      suite:
        'HTTP interactions: slow uploads held open against a web replica started as npm start starts it (issues #26, #33)',
      method: `node with npm start's arguments spawned with process.execPath (INTERACTIONS=http, PROCESS_ROLE=all, no gating, REDIS_URL on the local Redis, not pinned; DELIVERY_BODY_TIMEOUT_MS and DELIVERY_MB_PER_CLIENT at their defaults, 3 s and 2 MiB); each slow upload a raw TCP connection from one of ${FLOOD_SOURCES} loopback addresses of its kind and row (127.0.0.x from .2: none reaches the per-address cap of 64 connections, and no address is refused for what another row did), or, in the one-address rows, all ${STALLED_UPLOADS} from one address of the row's own, that sends the head of a POST /interactions, then its body in ${formatBytes(FLOOD_CHUNK_BYTES)} chunks every ${FLOOD_CHUNK_EVERY_MS} ms, all but the last byte (or none, headers only), then holds it ${formatNumber(FLOOD_HOLD_MS)} ms (the one-address rows ${formatNumber(STALLED_HOLD_MS)} ms, past the body timeout); all uploads of a row opened at once; RSS = VmRSS from /proc/<pid>/status sampled every 100 ms from the first connection until they are closed, the peak shown; answers read from each socket (a status line, or none while the body was still being read); meanwhile the stand-in Discord's signed /whois deliveries from 127.0.0.1, one every ${MEANWHILE_EVERY_MS} ms from the row's start until its uploads are closed, each without waiting for the one before (a keep-alive undici Pool of 16 connections), timed to the end of the answer`,
      targets: [
        `peak RSS ${target} under each flood`,
        `one address stalling: Discord's deliveries meanwhile ${answeredTarget}`,
      ],
      columns: ['Measurement', 'RSS', 'answers', "Discord's deliveries meanwhile", 'Target', 'Result'],
      rows,
    };
  } finally {
    await main.stop();
  }
}

/** Spawn to exit of `node -e ""`: what any Node start costs here. */
function bareNodeStartMs(): number {
  const t0 = performance.now();
  spawnSync(process.execPath, ['-e', ''], { stdio: 'ignore' });
  return performance.now() - t0;
}

async function timeStart(stand: Stand, entry: Entry) {
  // Enough distinct requests to poll every 5 ms for a while; signed now, so timestamps stay fresh.
  const requests = presign(stand.keys.privateKey, whoisBodies(stand.discord, 2_000));
  const main = await spawnMain(stand, entry);
  try {
    const first = await firstAnswer(main, requests, START_TIMEOUT_MS);
    return { ...first, ready: main.readyMs() };
  } finally {
    await main.stop();
  }
}

async function runStartup(stand: Stand, settings: Settings, buildMs: number): Promise<BenchTable> {
  const { starts, progress } = settings;
  const answers: Record<Entry, number[]> = { main: [], lean: [] };
  const readies: Record<Entry, number[]> = { main: [], lean: [] };
  const bare: number[] = [];
  let notWhois = 0;
  for (let start = 0; start < starts; start++) {
    progress(`http: start to first answer ${start + 1}/${starts}`);
    bare.push(bareNodeStartMs());
    // ABAB: main.js, then the lean entry, then the other way round.
    for (const entry of rotate<Entry>(settings.quick ? ['main'] : ['main', 'lean'], start)) {
      const first = await timeStart(stand, entry);
      answers[entry].push(first.ms);
      if (first.ready !== null) readies[entry].push(first.ready);
      if (!first.whois) notWhois++;
    }
  }
  const stats = (list: readonly number[]) => [
    formatNumber(median(list)),
    formatNumber(Math.min(...list)),
    formatNumber(Math.max(...list)),
  ];
  const ok = median(answers.main) < FIRST_ANSWER_TARGET_MS && notWhois === 0;
  const target = `< ${formatNumber(FIRST_ANSWER_TARGET_MS)} ms`;
  return {
    suite: 'HTTP interactions: start to first answer (issue #18)',
    method: `${starts} start(s) of each entry, alternating (ABAB), spawned with process.execPath (INTERACTIONS=http, PROCESS_ROLE=all, no gating, REDIS_URL on the local Redis, a free port, not pinned), each timed from spawn to the first 200 answer to a signed /whois POSTed to it (one at a time, retried every 5 ms while the port refuses; the answer is a cache miss against the stand-in Web3.bio with no added latency; ${notWhois} first answer(s) without the embed); also spawn to its "web replica ready" log line, and spawn to exit of node -e "" before each pair; medians; each timed from the spawn of node, after npm start's build (scripts/build.ts: ${formatNumber(buildMs)} ms in this run, once per start of npm start; an image builds at image build time); for the sources, Node's compile cache warm (the memory measurement started them before); the sources for comparison only`,
    targets: [`first answer ${target} (median, npm start)`],
    columns: ['Measurement', 'median ms', 'min ms', 'max ms', 'Target', 'Result'],
    rows: [
      [
        `${ENTRIES.main.label}: spawn → first 200 to a signed /whois`,
        ...stats(answers.main),
        target,
        ok ? 'PASS' : 'FAIL',
      ],
      [`${ENTRIES.main.label}: spawn → "web replica ready" logged`, ...stats(readies.main), '', ''],
      ...(settings.quick
        ? []
        : [
            [`${ENTRIES.lean.label}: spawn → first 200`, ...stats(answers.lean), '', ''],
            [`${ENTRIES.lean.label}: spawn → "web replica ready" logged`, ...stats(readies.lean), '', ''],
          ]),
      ['spawn → exit of node -e "" (any Node start)', ...stats(bare), '', ''],
    ],
  };
}

export async function runHttpBench(options: HttpBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const settings: Settings = {
    quick,
    rounds: options.rounds ?? (quick ? 1 : 10),
    roundMs: options.roundMs ?? (quick ? 300 : 1_000),
    warmupMs: options.warmupMs ?? (quick ? 200 : 1_500),
    concurrency: options.concurrency ?? 8,
    memoryInteractions: options.memoryInteractions ?? (quick ? 300 : 10_000),
    starts: options.starts ?? (quick ? 1 : 5),
    progress: options.progress ?? (() => {}),
    pin: pinning(),
  };
  // What npm start runs first (its prestart script).
  settings.progress("http: npm start's build (scripts/build.ts)");
  const buildStarted = performance.now();
  await buildDist();
  const buildMs = performance.now() - buildStarted;
  const stand = await startStand();
  try {
    const throughput = await onOtherCore(settings.pin, () => runThroughput(stand, settings));
    const memory = await runMemory(stand, settings);
    const startup = await runStartup(stand, settings, buildMs);
    const uploads = await runSlowUploads(stand, settings);
    return [throughput.table, memory, startup, uploads];
  } finally {
    await stand.close();
  }
}
