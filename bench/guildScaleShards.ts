/**
 * The sharded rows of the guild-scale benchmark (bench/guildScale.ts): `node src/main.ts` with
 * SHARD_COUNT=4 and SHARDS_PER_PROCESS=1, 2 or 4, as an operator runs it (the discord-hybrid-sharding
 * manager and its shard processes), against the same stand-ins and database. Ready is the manager's
 * "all shards ready"; the pass is the periodic re-check (GATING_RECHECK_HOURS=0.01, every guild due some
 * 30 s after it was marked re-checked), done when every guild logged "guild re-checked".
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { rssBytes } from './childProcess.ts';
import { type BenchTable, formatNumber } from './stats.ts';

const MAIN = fileURLToPath(new URL('../src/main.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const MIB = 1024 * 1024;
export const SHARD_COUNT = 4;

export interface ShardRun {
  shardsPerProcess: number;
  processes: number;
  /** The manager's own count, from its start to every shard process ready. */
  readyMs: number;
  managerRssReady: number;
  shardRssReady: number[];
  passMs: number;
  managerRssPass: number;
  shardRssPass: number[];
}

/** The pids of a process's children (every thread's). */
async function childPids(pid: number): Promise<number[]> {
  const tasks = await readFile(`/proc/${pid}/task/${pid}/children`, 'utf8').catch(() => '');
  return tasks
    .split(/\s+/)
    .filter((p) => p !== '')
    .map(Number);
}

async function shardRss(managerPid: number): Promise<number[]> {
  return Promise.all((await childPids(managerPid)).map((pid) => rssBytes(pid).catch(() => 0)));
}

/** One sharded start: ready, RSS, one periodic pass over every guild, RSS, stop. */
export async function runShardedBot(
  env: Record<string, string>,
  o: { databaseUrl: string; guilds: number; shardsPerProcess: number; timeoutMs: number },
): Promise<ShardRun> {
  const db = new pg.Pool({ connectionString: o.databaseUrl, max: 1 });
  // Every guild re-checked just now: the periodic pass comes when the 0.01 h interval is up.
  await db.query('UPDATE guild_settings SET last_full_sync_at = $1', [Date.now()]);
  await db.end();
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      ...env,
      SHARD_COUNT: String(SHARD_COUNT),
      SHARDS_PER_PROCESS: String(o.shardsPerProcess),
      SHARD_SPAWN_DELAY_SECONDS: '0',
      GATING_RECHECK_HOURS: '0.01',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    return await measure(child, o);
  } finally {
    await stopManager(child);
  }
}

async function measure(
  child: ChildProcess,
  o: { guilds: number; shardsPerProcess: number; timeoutMs: number },
): Promise<ShardRun> {
  const pid = child.pid ?? 0;
  const rechecked = new Set<string>();
  let readyMs: number | undefined;
  let passStarted: number | undefined;
  let onLine = () => {};
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  lines.on('line', (line) => {
    const entry = parseLine(line);
    if (entry?.msg === 'all shards ready') readyMs = Number(entry.ms);
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
  await until(() => readyMs !== undefined, '"all shards ready"');
  const [managerRssReady, shardRssReady] = await Promise.all([rssBytes(pid), shardRss(pid)]);
  const passEnd = until(() => rechecked.size >= o.guilds, 'full pass');
  await passEnd;
  const passMs = performance.now() - (passStarted ?? performance.now());
  const [managerRssPass, shardRssPass] = await Promise.all([rssBytes(pid), shardRss(pid)]);
  lines.close();
  return {
    shardsPerProcess: o.shardsPerProcess,
    processes: Math.ceil(SHARD_COUNT / o.shardsPerProcess),
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

/** The sharded table, with the one-process configured row for comparison. */
export function shardTable(
  runs: ShardRun[],
  guilds: number,
  oneProcess: { readyMs: number; rssReady: number; passMs: number; rssPass: number } | undefined,
): BenchTable {
  const rows = runs.map((run) => [
    `${SHARD_COUNT} shards, ${run.shardsPerProcess} per process`,
    formatNumber(run.processes),
    formatNumber(run.readyMs / 1_000, 1),
    range(run.shardRssReady),
    mib(sum(run.shardRssReady)),
    mib(run.managerRssReady),
    formatNumber(run.passMs / 1_000, 1),
    range(run.shardRssPass),
    mib(sum(run.shardRssPass)),
    mib(sum(run.shardRssPass) + run.managerRssPass),
  ]);
  if (oneProcess) {
    rows.unshift([
      '1 process, no sharding (above)',
      '1',
      formatNumber(oneProcess.readyMs / 1_000, 1),
      mib(oneProcess.rssReady),
      mib(oneProcess.rssReady),
      '–',
      formatNumber(oneProcess.passMs / 1_000, 1),
      mib(oneProcess.rssPass),
      mib(oneProcess.rssPass),
      mib(oneProcess.rssPass),
    ]);
  }
  return {
    suite: `Guild scale: ${formatNumber(guilds)} guilds of 200 members on ${SHARD_COUNT} shards, configured caches (issue #9)`,
    method: `one run per row; \`node src/main.ts\` with SHARD_COUNT=${SHARD_COUNT}, SHARDS_PER_PROCESS as named, SHARD_SPAWN_DELAY_SECONDS=0 (the stand-in has no identify limit), PostgreSQL, the same stand-ins' process and guilds as above; "ready" = the manager's own "all shards ready" time from its start (the one-process row: startBot's); the pass is the periodic re-check (GATING_RECHECK_HOURS=0.01) over every guild, from the first to the last "guild re-checked" line; RSS = VmRSS of each process, read by the parent, without a forced GC (the one-process row's had one)`,
    targets: [],
    columns: [
      'Layout',
      'Shard processes',
      'Ready s',
      'RSS ready per shard process MiB',
      'RSS ready, shard processes MiB',
      'Manager RSS MiB',
      'Pass s',
      'RSS after pass per shard process MiB',
      'RSS after pass, shard processes MiB',
      'RSS after pass, all MiB',
    ],
    rows,
  };
}
