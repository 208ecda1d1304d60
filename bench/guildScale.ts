/**
 * Issue #9, guild scale: the stand-in Discord serves 2,500 guilds of 200 members (20 roles, 30 channels,
 * 15 emojis, 3 stickers each) to the real bot with gating on, every guild set up with the human rule and
 * 3 linked members. The stand-ins run in a process of their own (bench/guildScaleWorld.ts); each bot
 * process's RSS is read from /proc/<pid>/status after the bot is ready (every GUILD_CREATE received)
 * and after one re-check pass over every guild (each walk loads the guild's 200-member list): with
 * discord.js's default caches, then with the caches the bot configures (src/discord/clientCaches.ts).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { REALISTIC_GUILD } from '../fakes/discord/scale.ts';
import { gatingCredentials } from '../fakes/web3bio/builders.ts';
import type { CachePolicy } from '../src/discord/clientCaches.ts';
import { openPostgresStore } from '../src/store/postgresStore.ts';
import { RawCredentialSet, toCredentialSet } from '../src/web3bio/schemas.ts';
import { nextMessage, rssBytes } from './childProcess.ts';
import type { BotReport, BotStart } from './guildScaleBot.ts';
import { runMainBot, type ShardRun, shardTable } from './guildScaleShards.ts';
import { linkedIdentity, WORLD_API_KEY, type WorldBuild, type WorldReady } from './guildScaleWorld.ts';
import { type BenchTable, formatNumber, verdict } from './stats.ts';

export interface GuildScaleBenchOptions {
  /** 250 guilds instead of 2,500. */
  quick?: boolean;
  guilds?: number;
  progress?: (line: string) => void;
}

/** Configured caches hold RSS at or under this share of discord.js's defaults (after the pass). */
const RSS_TARGET = 0.5;
/** The target is set at this many guilds (the process floor weighs more below it). */
const TARGET_GUILDS = 2_500;
const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
const WORLD = fileURLToPath(new URL('./guildScaleWorld.ts', import.meta.url));
const BOT = fileURLToPath(new URL('./guildScaleBot.ts', import.meta.url));
const MIB = 1024 * 1024;
const PASS_CONCURRENCY = 4;

export interface BotRun {
  caches: CachePolicy;
  readyMs: number;
  rssReady: number;
  passMs: number;
  rssPass: number;
  ready: BotReport;
  passed: BotReport;
}

/** The stand-ins' process, built and ready. */
export async function startWorld(
  guilds: number | WorldBuild,
): Promise<{ child: ChildProcess; world: WorldReady }> {
  const child = fork(WORLD, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = nextMessage<{ type: string; ready: WorldReady }>(child, 'ready');
  child.send({ type: 'build', build: typeof guilds === 'number' ? { guilds } : guilds });
  return { child, world: (await ready).ready };
}

/** A PostgreSQL database of its own, with every guild set up, its members linked and marked re-checked. */
export async function seedDatabase(world: WorldReady): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `bench_guild_scale_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Pool({ connectionString: ADMIN_URL, max: 1 });
  await admin.query(`CREATE DATABASE ${name}`);
  const url = ADMIN_URL.replace(/\/test$/, `/${name}`);
  const drop = async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  };
  try {
    const store = await openPostgresStore(url);
    const now = Date.now();
    const seedGuild = async (guild: WorldReady['guilds'][number]) => {
      await store.saveGuildSettings({
        guildId: guild.id,
        enabled: true,
        humanRoleId: guild.humanRoleId,
        spamRoleId: null,
        riskyRoleId: null,
        minScore: null,
        spamRemovesHuman: true,
        logChannelId: null,
      });
      for (const [index, userId] of guild.linked.entries()) {
        const identity = guild.identities[index] ?? linkedIdentity(userId);
        const lastResult = toCredentialSet(RawCredentialSet.parse(gatingCredentials(identity)));
        await store.saveLink(
          {
            guildId: guild.id,
            userId,
            identity,
            platform: 'ens',
            address: null,
            proofMethod: 'signature',
            provenAt: now,
            lastCheckAt: now,
            lastCheckOk: true,
            lastResult,
          },
          'bench seed',
        );
      }
      // Re-checked just now: no catch-up pass at start; the benchmark runs the pass itself.
      await store.markFullSync(guild.id, now);
    };
    let next = 0;
    const lane = async () => {
      for (let guild = world.guilds[next++]; guild; guild = world.guilds[next++]) await seedGuild(guild);
    };
    await Promise.all(Array.from({ length: 8 }, lane));
    await store.close();
  } catch (error) {
    await drop();
    throw error;
  }
  return { url, drop };
}

/** The env a bot process of this benchmark runs with (add SHARD_COUNT etc. for sharded runs). */
export function botEnv(world: WorldReady, databaseUrl: string): Record<string, string> {
  return {
    DISCORD_TOKEN: world.token,
    DISCORD_APPLICATION_ID: world.applicationId,
    DISCORD_API_URL: world.discordApiUrl,
    WEB3BIO_API_URL: world.web3bioUrl,
    WEB3BIO_API_KEY: WORLD_API_KEY,
    GATING_ENABLED: 'true',
    PUBLIC_URL: 'https://verify.bench.example',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    DATABASE_URL: databaseUrl,
    LOG_LEVEL: 'warn',
  };
}

/** One bot process: ready, RSS, one pass over every guild, RSS, stop. */
async function runBot(env: Record<string, string>, caches: CachePolicy): Promise<BotRun> {
  const child = fork(BOT, { execArgv: ['--expose-gc'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    const start: BotStart = { env, caches, concurrency: PASS_CONCURRENCY };
    const readyMessage = nextMessage<{ type: string; report: BotReport }>(child, 'ready');
    child.send({ type: 'start', start });
    const ready = (await readyMessage).report;
    const pid = child.pid ?? 0;
    const rssReady = await rssBytes(pid);
    const passedMessage = nextMessage<{ type: string; report: BotReport }>(child, 'passed');
    child.send({ type: 'pass' });
    const passed = (await passedMessage).report;
    const rssPass = await rssBytes(pid);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.send({ type: 'stop' });
    await exited;
    return {
      caches,
      readyMs: ready.readyMs ?? Number.NaN,
      rssReady,
      passMs: passed.passMs ?? Number.NaN,
      rssPass,
      ready,
      passed,
    };
  } finally {
    if (child.exitCode === null) child.kill();
  }
}

const CACHE_NAMES: Record<CachePolicy, string> = {
  'discord.js-defaults': 'discord.js defaults',
  lean: 'configured (clientCaches.ts)',
};

function mib(bytes: number): string {
  return formatNumber(bytes / MIB, 0);
}

/** The one-process table: both cache policies and the ratio row. */
export function oneProcessTable(runs: BotRun[], guilds: number): BenchTable {
  const rows = runs.map((run) => [
    CACHE_NAMES[run.caches],
    formatNumber(run.ready.guilds),
    formatNumber(run.readyMs / 1_000, 1),
    mib(run.rssReady),
    formatNumber(run.passMs / 1_000, 1),
    formatNumber(run.passed.membersWalked ?? 0),
    mib(run.rssPass),
    mib(run.passed.heapUsedBytes),
    `${formatNumber(run.passed.cachedMembers)} / ${formatNumber(run.passed.cachedUsers)}`,
    '',
    '',
  ]);
  const base = runs.find((r) => r.caches === 'discord.js-defaults');
  const lean = runs.find((r) => r.caches === 'lean');
  if (base && lean) {
    const ratio = lean.rssPass / base.rssPass;
    rows.push([
      'configured ÷ defaults',
      '',
      `${formatNumber(lean.readyMs / base.readyMs, 2)}×`,
      `${formatNumber(lean.rssReady / base.rssReady, 2)}×`,
      `${formatNumber(lean.passMs / base.passMs, 2)}×`,
      '',
      `${formatNumber(ratio, 2)}×`,
      `${formatNumber(lean.passed.heapUsedBytes / base.passed.heapUsedBytes, 2)}×`,
      '',
      guilds >= TARGET_GUILDS
        ? `RSS after pass ≤ ${RSS_TARGET}×`
        : `at ${formatNumber(TARGET_GUILDS)} guilds only`,
      guilds >= TARGET_GUILDS ? verdict(ratio <= RSS_TARGET) : '',
    ]);
  }
  const shape = REALISTIC_GUILD;
  return {
    suite: `Guild scale: ${formatNumber(guilds)} guilds of ${shape.members} members to one bot process, gating on (issue #9)`,
    method: `one run per row; the stand-in Discord and Web3.bio in their own process; the bot (startBot, gating on, PostgreSQL) in a child process; each guild has ${shape.roles} roles, ${shape.channels} channels with a permission overwrite, ${shape.emojis} emojis, ${shape.stickers} stickers, the human rule set up and ${shape.linked} linked members already holding the role; "ready" = startBot resolved (every GUILD_CREATE received); the pass re-checks every guild (${PASS_CONCURRENCY} at once), each walk loading the guild's member list (one REST page of 1,000); RSS = VmRSS of the bot process, read by the parent from /proc after the process ran a memory-reducing GC (what V8 does under memory pressure, so the figure is what the process keeps, not the young generation and free pages V8 holds on to between collections); heap = V8 heap used at the same moment`,
    targets: [
      `configured caches: RSS after the pass ≤ ${RSS_TARGET}× discord.js's defaults at ${formatNumber(TARGET_GUILDS)} guilds`,
    ],
    columns: [
      'Caches',
      'Guilds',
      'Ready s',
      'RSS ready MiB',
      'Pass s',
      'Members walked',
      'RSS after pass MiB',
      'Heap after pass MiB',
      'Cached members / users',
      'Target',
      'Result',
    ],
    rows,
    notes: [
      "With the defaults every member a walk loads stays cached (with its user), so RSS grows with the guilds' members; the configured caches keep the bot's own member only, and a walk reads the list its request returned.",
    ],
  };
}

export async function runGuildScaleBench(options: GuildScaleBenchOptions = {}): Promise<BenchTable[]> {
  const guilds = options.guilds ?? (options.quick ? 250 : 2_500);
  const progress = options.progress ?? (() => {});
  progress(`guild-scale: building ${formatNumber(guilds)} guilds in the stand-ins' process`);
  const { child: worldChild, world } = await startWorld(guilds);
  let database: { url: string; drop: () => Promise<void> } | undefined;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-guild-scale-'));
  try {
    progress('guild-scale: seeding PostgreSQL');
    database = await seedDatabase(world);
    const env = botEnv(world, database.url);
    const runs: BotRun[] = [];
    for (const caches of ['discord.js-defaults', 'lean'] as const) {
      progress(`guild-scale: one process, ${CACHE_NAMES[caches]}`);
      runs.push(await runBot(env, caches));
    }
    const layouts = options.quick ? [undefined, 2] : [undefined, 1, 2, 4];
    const viaMain: ShardRun[] = [];
    for (const shardsPerProcess of layouts) {
      progress(
        `guild-scale: node src/app/main.js, ${shardsPerProcess ? `4 shards, ${shardsPerProcess} per process` : 'no sharding'}`,
      );
      viaMain.push(
        await runMainBot(env, {
          databaseUrl: database.url,
          dataDir,
          guilds,
          shardsPerProcess,
          timeoutMs: 240_000,
        }),
      );
    }
    return [oneProcessTable(runs, guilds), shardTable(viaMain, guilds)];
  } finally {
    worldChild.disconnect();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}
