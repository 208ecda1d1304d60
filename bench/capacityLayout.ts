/**
 * The processes of the capacity benchmark (bench/capacity.ts) as an operator runs them, each started as
 * `npm start` starts it (npm start's V8 flags, the bundle scripts/build.ts makes) from a folder of its
 * own: the REST proxy (PROCESS_ROLE=rest-proxy), two shard managers on two halves of the shards
 * (PROCESS_ROLE=gateway, SHARD_IDS) and two web replicas (PROCESS_ROLE=web), all with INTERACTIONS=http
 * and every one's Discord REST through the proxy.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { REDIS_URL } from '../fakes/localRedis.ts';
import { npmStartCommand } from '../scripts/npmStart.ts';
import { freePort, readyLine, stop } from './footprint.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

export interface Started {
  child: ChildProcess;
  pid: number;
  /** The ready line it logged. */
  ready: Record<string, unknown>;
  /** Calls `listener` with every JSON log line from now on (the shard processes' too, for a manager). */
  onLine(listener: (entry: Record<string, unknown>) => void): void;
  stop(): Promise<void>;
}

/** Starts the bundle with `env` and resolves once it logs `readyMsg`. */
export async function startBundle(
  env: Record<string, string>,
  readyMsg: string,
  timeoutMs = 90_000,
): Promise<Started> {
  const { flags, entry } = npmStartCommand();
  const folder = await mkdtemp(join(tmpdir(), 'bench-capacity-'));
  const child = spawn(process.execPath, [...flags, join(ROOT, entry)], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? '', DATA_DIR: join(folder, 'data'), ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const listeners: ((entry: Record<string, unknown>) => void)[] = [];
  if (child.stdout)
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (!line.startsWith('{') || listeners.length === 0) return;
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        for (const listener of listeners) listener(parsed);
      } catch {
        // Not a log line.
      }
    });
  const stopAndClean = async () => {
    await stop(child);
    await rm(folder, { recursive: true, force: true });
  };
  try {
    const ready = await readyLine(child, readyMsg, timeoutMs);
    return { child, pid: child.pid ?? 0, ready, onLine: (l) => listeners.push(l), stop: stopAndClean };
  } catch (error) {
    await stopAndClean();
    throw error;
  }
}

export interface LayoutOptions {
  /** What every bot process runs with: the stand-ins, the database, gating (guildScale's botEnv). */
  botEnv: Record<string, string>;
  redisPrefix: string;
  publicKeyHex: string;
  shardCount: number;
  halves: readonly [string, string];
  recheckHours: number;
  readyTimeoutMs: number;
}

export interface Layout {
  proxy: Started;
  managers: Started[];
  replicas: Started[];
  /** Spawn → both managers' "all shards ready". */
  readyMs: number;
  /** The replicas' URLs. */
  replicaUrls: string[];
  stop(): Promise<void>;
}

/** The proxy first, then both shard managers at once (timed), then the two replicas. */
export async function startLayout(o: LayoutOptions): Promise<Layout> {
  const started: Started[] = [];
  try {
    const proxy = await startBundle(
      {
        PROCESS_ROLE: 'rest-proxy',
        DISCORD_TOKEN: o.botEnv.DISCORD_TOKEN ?? '',
        DISCORD_API_URL: o.botEnv.DISCORD_API_URL ?? '',
        REST_PROXY_PORT: '0',
        LOG_LEVEL: 'info',
      },
      'rest proxy ready',
    );
    started.push(proxy);
    const common = {
      ...o.botEnv,
      DISCORD_API_URL: `http://127.0.0.1:${String(proxy.ready.port)}/api`,
      REDIS_URL,
      REDIS_PREFIX: o.redisPrefix,
      INTERACTIONS: 'http',
      DISCORD_PUBLIC_KEY: o.publicKeyHex,
      // The interaction tokens replicas hand to the gateway workers are sealed with it.
      TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'info',
    };
    const spawned = performance.now();
    const managers = await Promise.all(
      o.halves.map(async (ids) => {
        const manager = await startBundle(
          {
            ...common,
            PROCESS_ROLE: 'gateway',
            HTTP_PORT: String(await freePort()),
            SHARD_COUNT: String(o.shardCount),
            SHARD_IDS: ids,
            // All of a machine's shards in one process; the identify queue in Redis spaces them.
            SHARDS_PER_PROCESS: String(o.shardCount / 2),
            SHARD_SPAWN_DELAY_SECONDS: '0',
            GATING_RECHECK_HOURS: String(o.recheckHours),
          },
          'all shards ready',
          o.readyTimeoutMs,
        );
        started.push(manager);
        return manager;
      }),
    );
    const readyMs = performance.now() - spawned;
    const ports = [await freePort(), await freePort()];
    const replicas = await Promise.all(
      ports.map(async (port) => {
        const replica = await startBundle(
          { ...common, PROCESS_ROLE: 'web', HTTP_PORT: String(port), SHARD_COUNT: '' },
          'web replica ready',
        );
        started.push(replica);
        return replica;
      }),
    );
    return {
      proxy,
      managers,
      replicas,
      readyMs,
      replicaUrls: ports.map((port) => `http://127.0.0.1:${port}`),
      stop: () => stopAll(started),
    };
  } catch (error) {
    await stopAll(started);
    throw error;
  }
}

/** Web replicas and managers first, the proxy (which they send through) last. */
async function stopAll(started: readonly Started[]): Promise<void> {
  const [proxy, ...others] = started;
  await Promise.allSettled(others.map((s) => s.stop()));
  await proxy?.stop();
}

/** A process's user + system CPU time in seconds, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
