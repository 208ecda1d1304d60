/**
 * The sharded bot as an operator runs it: `node src/app/main.js` with SHARD_COUNT, its shard processes
 * forked by the manager, for the e2e files that play several processes.
 */
import { fileURLToPath } from 'node:url';
import { type NodeProcess, runNode } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));

/**
 * Starts the shard manager with `env`, one shard per process, all spawned at once, logging at info. Wait
 * for it with `allShardsReady` (kept apart so that the caller holds the process to kill if that fails).
 */
export function runShardManager(env: Record<string, string>, workDir: string): NodeProcess {
  return runNode(
    MAIN,
    { ...env, SHARDS_PER_PROCESS: '1', SHARD_SPAWN_DELAY_SECONDS: '0', LOG_LEVEL: 'info' },
    workDir,
  );
}

/** Resolves once the manager logs that every shard is ready (a minute at most). */
export async function allShardsReady(manager: NodeProcess): Promise<void> {
  await manager.waitForLog((l) => l.msg === 'all shards ready', 60_000);
}

/** Kills a process outright if it still runs, and waits for its exit. */
export async function killIfRunning(node: NodeProcess | undefined): Promise<void> {
  if (node && node.child.exitCode === null) {
    node.child.kill('SIGKILL');
    await node.exited;
  }
}
