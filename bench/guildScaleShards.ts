/**
 * The sharded rows of the guild-scale benchmark (bench/guildScale.ts): `node src/app/main.js` with
 * SHARD_COUNT=4 and SHARDS_PER_PROCESS=1, 2 or 4, as an operator runs it (the discord-hybrid-sharding
 * manager and its shard processes), against the same stand-ins and database. Ready is the manager's
 * "all shards ready"; then every guild is marked re-checked one interval ago, and the pass is the periodic
 * re-check that follows (GATING_RECHECK_HOURS=0.01), done when every guild logged "guild re-checked".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { rssBytes } from './childProcess.ts';
import { type BenchTable, formatNumber } from './stats.ts';

const MAIN = fileURLToPath(new URL('../src/app/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MIB = 1024 * 1024;
export const SHARD_COUNT = 4;
/** GATING_RECHECK_HOURS=0.01, the least it takes: the scheduler ticks every 1.5 s. */
const RECHECK_INTERVAL_MS = 36_000;

export interface ShardRun {
  /** Undefined: no SHARD_COUNT, one process as `npm start` runs by default. */
  shardsPerProcess: number | undefined;
  processes: number;
  /** From spawning `node src/app/main.js` to "all shards ready" (unsharded: "bot ready"). */
  readyMs: number;
  managerRssReady: number;
  shardRssReady: number[];
  passMs: number;
  managerRssPass: number;
  shardRssPass: number[];
}

/** The pids of a process's children (every thread's). */
export async function childPids(pid: number): Promise<number[]> {
  const tasks = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return tasks
    .split(/\s+/)
    .filter((p) => p !== '')
    .map(Number);
}

/** The RSS of each of a shard manager's shard processes. */
export async function shardRss(managerPid: number): Promise<number[]> {
  return Promise.all((await childPids(managerPid)).map((pid) => rssBytes(pid).catch(() => 0)));
}

/** One start of `node src/app/main.js` (sharded or not): ready, RSS, one periodic pass over every guild, RSS, stop. */
export async function runMainBot(
  env: Record<string, string>,
  o: {
    databaseUrl: string;
    dataDir: string;
    guilds: number;
    shardsPerProcess: number | undefined;
    timeoutMs: number;
  },
): Promise<ShardRun> {
  const db = new pg.Pool({ connectionString: o.databaseUrl, max: 1 });
  const markRechecked = async (at: number) => {
    await db.query('UPDATE guild_settings SET last_full_sync_at = $1', [at]);
  };
  // Re-checked just now: no guild is due while the shards start (nor caught up at start).
  await markRechecked(Date.now());
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      DATA_DIR: o.dataDir,
      ...(o.shardsPerProcess === undefined
        ? {}
        : {
            SHARD_COUNT: String(SHARD_COUNT),
            SHARDS_PER_PROCESS: String(o.shardsPerProcess),
            SHARD_SPAWN_DELAY_SECONDS: '0',
          }),
      GATING_RECHECK_HOURS: String(RECHECK_INTERVAL_MS / 3_600_000),
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    // Once every shard is ready: re-checked a whole interval ago, so every guild is due at the next tick.
    return await measure(child, { ...o, armPass: () => markRechecked(Date.now() - RECHECK_INTERVAL_MS) });
  } finally {
    await stopManager(child);
    await db.end();
  }
}

async function measure(
  child: ChildProcess,
  o: {
    guilds: number;
    shardsPerProcess: number | undefined;
    timeoutMs: number;
    armPass: () => Promise<void>;
  },
): Promise<ShardRun> {
  const pid = child.pid ?? 0;
  const spawned = performance.now();
  const sharded = o.shardsPerProcess !== undefined;
  const readyMessage = sharded ? 'all shards ready' : 'bot ready';
  // The bot's own processes: the shard processes, or the one process itself.
  const botRss = async () => (sharded ? shardRss(pid) : [await rssBytes(pid)]);
  const rechecked = new Set<string>();
  let readyMs: number | undefined;
  let passStarted: number | undefined;
  let onLine = () => {};
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  lines.on('line', (line) => {
    const entry = parseLine(line);
    if (entry?.msg === readyMessage) readyMs = performance.now() - spawned;
    if (entry?.msg === 'guild re-checked' && typeof entry.guildId === 'string') {
      passStarted ??= performance.now();
      rechecked.add(entry.guildId);
    }
    onLine();
  });
  const until = (done: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`sharded bot: no ${what} in time`)), o.timeoutMs);
      onLine = () => {
        if (!done()) return;
        clearTimeout(timer);
        onLine = () => {};
        resolve();
      };
      child.once('exit', (code) => reject(new Error(`sharded bot exited (${code}) before ${what}`)));
      onLine();
    });
  await until(() => readyMs !== undefined, `"${readyMessage}"`);
  const [managerRssReady, shardRssReady] = await Promise.all([sharded ? rssBytes(pid) : 0, botRss()]);
  await o.armPass();
  await until(() => rechecked.size >= o.guilds, 'full pass');
  const passMs = performance.now() - (passStarted ?? performance.now());
  const [managerRssPass, shardRssPass] = await Promise.all([sharded ? rssBytes(pid) : 0, botRss()]);
  lines.close();
  return {
    shardsPerProcess: o.shardsPerProcess,
    processes: sharded ? Math.ceil(SHARD_COUNT / (o.shardsPerProcess ?? 1)) : 1,
    readyMs: readyMs ?? Number.NaN,
    managerRssReady,
    shardRssReady,
    passMs,
    managerRssPass,
    shardRssPass,
  };
}

function parseLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

/** SIGTERM the manager (it stops its shard processes), SIGKILL what is left after 20 s. */
async function stopManager(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const shards = await childPids(child.pid ?? 0);
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  await exited;
  clearTimeout(timer);
  for (const pid of shards) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone, as it should be.
    }
  }
}

function mib(bytes: number): string {
  return formatNumber(bytes / MIB, 0);
}

function range(values: readonly number[]): string {
  if (values.length === 0) return 'n/a';
  const [low, high] = [Math.min(...values), Math.max(...values)];
  return low === high ? mib(low) : `${mib(low)} – ${mib(high)}`;
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

/** The table of `node src/app/main.js` runs: unsharded, then each shard layout. */
export function shardTable(runs: ShardRun[], guilds: number): BenchTable {
  const rows = runs.map((run) => [
    run.shardsPerProcess === undefined
      ? '1 process, no SHARD_COUNT'
      : `${SHARD_COUNT} shards, ${run.shardsPerProcess} per process`,
    formatNumber(run.processes),
    formatNumber(run.readyMs / 1_000, 1),
    range(run.shardRssReady),
    mib(sum(run.shardRssReady)),
    run.managerRssReady > 0 ? mib(run.managerRssReady) : '–',
    formatNumber(run.passMs / 1_000, 1),
    range(run.shardRssPass),
    mib(sum(run.shardRssPass)),
    mib(sum(run.shardRssPass) + run.managerRssPass),
  ]);
  return {
    suite: `Guild scale: ${formatNumber(guilds)} guilds of 200 members, one process vs ${SHARD_COUNT} shards, configured caches (issue #9)`,
    method: `one run per row; the bot from its sources, \`node src/app/main.js\` (gating on, PostgreSQL), unsharded or with SHARD_COUNT=${SHARD_COUNT} and SHARDS_PER_PROCESS as named (the discord-hybrid-sharding manager plus its shard processes; the manager serves the signing page), SHARD_SPAWN_DELAY_SECONDS=0 (the stand-in has no identify limit; each process still identifies its shards 5 s apart, as discord.js does with max_concurrency 1); the same stand-ins' process and guilds as above; "ready" = from spawn to "all shards ready" (unsharded: "bot ready"); the pass is the periodic re-check (GATING_RECHECK_HOURS=0.01; every guild made due once all shards are ready), one guild at a time per process as the scheduler runs it, from the first to the last "guild re-checked" line; RSS = VmRSS of each process read from /proc by the parent, with no forced GC (so higher than the table above, whose figures follow a memory-reducing GC)`,
    targets: [],
    columns: [
      'Layout',
      'Bot processes',
      'Ready s',
      'RSS ready per bot process MiB',
      'RSS ready, bot processes MiB',
      'Manager RSS MiB',
      'Pass s',
      'RSS after pass per bot process MiB',
      'RSS after pass, bot processes MiB',
      'RSS after pass, all MiB',
    ],
    rows,
  };
}
