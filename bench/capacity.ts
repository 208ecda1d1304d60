/**
 * `npm run bench -- --only capacity` (issue #37): 2,500, 10,000 and 25,000 servers of CAPACITY_GUILD's
 * shape (bench/capacityPlan.ts) in the stand-in Discord and Web3.bio (bench/guildScaleWorld.ts, its own
 * process), served by the layout an operator runs (bench/capacityLayout.ts: the REST proxy, two shard
 * managers on two halves of the shards, two web replicas, all as `npm start` runs them) on the local Redis
 * and a PostgreSQL database of the run's own. Per row: each process's RSS, time to ready, one full
 * re-check cycle (every server made due at once) with its upstream and Discord requests, and signed
 * cached /whois interactions POSTed to both replicas for a fixed time.
 */
import type { ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import pg from 'pg';
import { Pool } from 'undici';
import { deleteKeys, REDIS_URL } from '../fakes/localRedis.ts';
import { buildDist } from '../scripts/build.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../src/cache/redisStore.ts';
import { cpuSeconds, type Layout, startLayout } from './capacityLayout.ts';
import { CAPACITY_GUILD, SHARED_EVERY, shardLayout, worldRatios } from './capacityPlan.ts';
import { type CapacityRow, capacityTables } from './capacityTables.ts';
import { nextMessage, rssBytes } from './childProcess.ts';
import { botEnv, seedDatabase, startWorld } from './guildScale.ts';
import { shardRss } from './guildScaleShards.ts';
import type { WorldCounts, WorldReady } from './guildScaleWorld.ts';
import { postRound, presign, type Sampled, signingKeys } from './http.ts';

export interface CapacityBenchOptions {
  quick?: boolean;
  guilds?: readonly number[];
  progress?: (line: string) => void;
}

/** Discord's global REST limit, enforced by the stand-in. */
const DISCORD_GLOBAL_PER_SECOND = 50;
/** Interactions in flight per replica. */
const CONCURRENCY = 8;

function counts(world: ChildProcess): Promise<WorldCounts> {
  const answer = nextMessage<{ type: string; counts: WorldCounts }>(world, 'counts');
  world.send({ type: 'counts' });
  return answer.then((m) => m.counts);
}

/** Each route's requests in `after` and not in `before`, most first. */
export function routesBetween(
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): [string, number][] {
  return Object.entries(after)
    .map(([route, n]): [string, number] => [route, n - (before[route] ?? 0)])
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1]);
}

/** The re-check interval: twice what the cycle's member-list walks take at Discord's pace, at least 3 min. */
export function recheckHours(guilds: number): number {
  return Math.max(0.05, (2 * guilds) / 40 / 3_600);
}

/** Every server due at once; resolves when each logged "guild re-checked" (first to last line timed). */
async function runCycle(layout: Layout, world: WorldReady, databaseUrl: string, hours: number) {
  const pending = new Set(world.guilds.map((g) => g.id));
  let first: number | undefined;
  let last = 0;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`capacity: ${pending.size} servers not re-checked in time`)),
      600_000 + pending.size * 100,
    );
    for (const manager of layout.managers)
      manager.onLine((entry) => {
        if (entry.msg !== 'guild re-checked' || typeof entry.guildId !== 'string') return;
        first ??= performance.now();
        last = performance.now();
        pending.delete(entry.guildId);
        if (pending.size > 0) return;
        clearTimeout(timer);
        resolve();
      });
  });
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  await db.query('UPDATE guild_settings SET last_full_sync_at = $1', [Date.now() - hours * 3_600_000]);
  await db.end();
  await done;
  return last - (first ?? last);
}

/**
 * `count` copies of one interaction's JSON, each with an id (and token) of its own: the template's id
 * counted up, so each is a fresh delivery to the replicas' replay check.
 */
export function distinctInteractions(template: string, count: number): string[] {
  const id = (JSON.parse(template) as { id: string }).id;
  return Array.from({ length: count }, (_, i) => template.replaceAll(id, String(BigInt(id) + BigInt(i))));
}

/** Signed /whois POSTed to both replicas at once for `durationMs` (after a warm-up that caches the answer). */
async function runInteractions(
  layout: Layout,
  world: ChildProcess,
  keys: ReturnType<typeof signingKeys>,
  o: { durationMs: number; expectedPerSecond: number },
): Promise<CapacityRow['interactions']> {
  const { durationMs, expectedPerSecond } = o;
  const answer = nextMessage<{ type: string; bodies: string[] }>(world, 'whois');
  world.send({ type: 'whois', count: 1 });
  const [template = ''] = (await answer).bodies;
  const bodies = distinctInteractions(template, Math.ceil((durationMs / 1_000 + 2) * expectedPerSecond));
  const pools = layout.replicaUrls.map((url) => new Pool(url, { connections: CONCURRENCY }));
  try {
    const [warm, timed] = [bodies.slice(0, 200), bodies.slice(200)];
    const signed = (list: string[]) => presign(keys.privateKey, list);
    const halves = <T>(list: T[]) => [list.filter((_, i) => i % 2 === 0), list.filter((_, i) => i % 2 === 1)];
    const warmed = halves(signed(warm));
    await Promise.all(pools.map((pool, i) => postRound(pool, warmed[i] ?? [], 2, 1_000)));
    const timedHalves = halves(signed(timed));
    const pids = layout.replicas.map((r) => r.pid);
    const cpuBefore = await Promise.all(pids.map(cpuSeconds));
    const rounds: Sampled[] = await Promise.all(
      pools.map((pool, i) => postRound(pool, timedHalves[i] ?? [], CONCURRENCY, durationMs)),
    );
    const cpuAfter = await Promise.all(pids.map(cpuSeconds));
    const answered = rounds.reduce((sum, r) => sum + r.samples.length, 0);
    const elapsed = Math.max(...rounds.map((r) => r.elapsedMs));
    return {
      answered,
      failures: rounds.reduce((sum, r) => sum + r.failures + r.wrong, 0),
      perSecond: answered / (elapsed / 1_000),
      replicaCpuSeconds: cpuAfter.reduce((sum, c, i) => sum + c - (cpuBefore[i] ?? 0), 0),
      ranOut: rounds.some((r) => r.ranOut),
    };
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}

async function withRedis<T>(use: (redis: ReturnType<typeof createRedisClient>) => Promise<T>): Promise<T> {
  const redis = createRedisClient(REDIS_URL);
  try {
    await untilRedisReady(redis);
    return await use(redis);
  } finally {
    await closeRedisClient(redis);
  }
}

const clearRedis = (prefix: string) => withRedis((redis) => deleteKeys(redis, `${prefix}*`));

/** The run's keys in Redis: how many, and their MEMORY USAGE summed. */
function redisFootprint(prefix: string): Promise<{ keys: number; bytes: number }> {
  return withRedis(async (redis) => {
    let [keys, bytes, cursor] = [0, 0, '0'];
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1_000);
      cursor = next;
      keys += batch.length;
      const pipeline = redis.pipeline();
      for (const key of batch) pipeline.memory('USAGE', key);
      for (const [, size] of (await pipeline.exec()) ?? []) bytes += Number(size ?? 0);
    } while (cursor !== '0');
    return { keys, bytes };
  });
}

async function postgresBytes(url: string): Promise<number> {
  const db = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const result = await db.query<{ size: string }>('SELECT pg_database_size(current_database()) AS size');
    return Number(result.rows[0]?.size ?? 0);
  } finally {
    await db.end();
  }
}

function loadAverage(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
}

/** One row: build, seed, start the layout, one cycle, interactions, measure, stop. */
async function runRow(guilds: number, o: { durationMs: number; progress: (line: string) => void }) {
  const { shardCount, halves } = shardLayout(guilds);
  const hours = recheckHours(guilds);
  o.progress(`capacity: ${guilds} servers: the stand-ins' world (${shardCount} shards)`);
  const began = performance.now();
  const { child: world, world: ready } = await startWorld({
    guilds,
    shape: CAPACITY_GUILD,
    shardCount,
    sharedEvery: SHARED_EVERY,
    globalPerSecond: DISCORD_GLOBAL_PER_SECOND,
  });
  const worldBuildMs = performance.now() - began;
  let database: { url: string; drop: () => Promise<void> } | undefined;
  let layout: Layout | undefined;
  const redisPrefix = `bench-capacity-${process.pid}-${guilds}:`;
  try {
    o.progress(`capacity: ${guilds} servers: seeding PostgreSQL`);
    const seedStarted = performance.now();
    database = await seedDatabase(ready);
    const seedMs = performance.now() - seedStarted;
    const url = database.url;
    const db = new pg.Pool({ connectionString: url, max: 1 });
    await db.query('UPDATE guild_settings SET last_full_sync_at = $1', [Date.now()]);
    // Saving a proof leaves a due check at its time: 4 a server from a bulk seed is not what a bot carries.
    await db.query('DELETE FROM gating_due_checks');
    await db.end();
    o.progress(`capacity: ${guilds} servers: starting the proxy, two shard managers, two replicas`);
    const keys = signingKeys();
    const atStart = await counts(world);
    layout = await startLayout({
      botEnv: { ...botEnv(ready, url), LOG_LEVEL: 'info' },
      redisPrefix,
      publicKeyHex: keys.publicKeyHex,
      shardCount,
      halves,
      recheckHours: hours,
      readyTimeoutMs: 120_000 + shardCount * 10_000,
    });
    const atReady = await counts(world);
    o.progress(
      `capacity: ${guilds} servers: ready in ${(layout.readyMs / 1_000).toFixed(1)} s; one re-check cycle`,
    );
    const cycleMs = await runCycle(layout, ready, url, hours);
    const atCycle = await counts(world);
    const load = loadAverage();
    o.progress(`capacity: ${guilds} servers: cycle took ${(cycleMs / 1_000).toFixed(1)} s; interactions`);
    const rss = {
      managers: await Promise.all(layout.managers.map((m) => rssBytes(m.pid))),
      shards: (await Promise.all(layout.managers.map((m) => shardRss(m.pid)))).flat(),
      replicas: await Promise.all(layout.replicas.map((r) => rssBytes(r.pid))),
      proxy: await rssBytes(layout.proxy.pid),
    };
    const redis = await redisFootprint(redisPrefix);
    const interactions = await runInteractions(layout, world, keys, {
      durationMs: o.durationMs,
      expectedPerSecond: 7_000,
    });
    const atEnd = await counts(world);
    const row: CapacityRow = {
      guilds,
      shardCount,
      worldBuildMs,
      seedMs,
      readyMs: layout.readyMs,
      rss,
      identities: worldRatios(guilds, CAPACITY_GUILD, SHARED_EVERY).identities,
      cycle: {
        upstream: atCycle.web3bioRequests - atReady.web3bioRequests,
        discord: atCycle.discordRequests - atReady.discordRequests,
        ms: cycleMs,
        routes: routesBetween(atReady.discordRoutes, atCycle.discordRoutes),
      },
      startDiscordRequests: atReady.discordRequests - atStart.discordRequests,
      discord429s: atEnd.discord429s,
      interactions,
      postgresBytes: await postgresBytes(url),
      redis,
      loadAverage: load,
    };
    o.progress(`capacity: ${JSON.stringify(row)}`);
    return row;
  } finally {
    await layout?.stop();
    world.disconnect();
    await database?.drop();
    await clearRedis(redisPrefix);
  }
}

export async function runCapacityBench(options: CapacityBenchOptions = {}) {
  const guilds = options.guilds ?? (options.quick ? [250] : [2_500, 10_000, 25_000]);
  const progress = options.progress ?? (() => {});
  const durationMs = options.quick ? 2_000 : 8_000;
  progress("capacity: npm start's build (scripts/build.ts)");
  await buildDist();
  const rows: CapacityRow[] = [];
  for (const count of guilds) rows.push(await runRow(count, { durationMs, progress }));
  return capacityTables(rows, {
    durationMs,
    concurrency: CONCURRENCY,
    discordPerSecond: DISCORD_GLOBAL_PER_SECOND,
  });
}
