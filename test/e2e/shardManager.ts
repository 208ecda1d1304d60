/**
 * The sharded bot as an operator runs it: `node src/app/main.js` with SHARD_COUNT, its shard processes
 * forked by the manager, for the e2e files that play several processes.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeDiscord } from '../../fakes/discord/server.ts';
import type { FakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { dropPostgresSchema, POSTGRES_URL } from '../store/harness.ts';
import { type NodeProcess, runNode } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));

/**
 * Starts the shard manager against the stand-ins, its data in `workDir`, HTTP on loopback, one shard per
 * process, all spawned at once, logging at info; `env` adds the rest (SHARD_COUNT, HTTP_PORT…). Wait for
 * it with `allShardsReady` (kept apart so that the caller holds the process to kill if that fails).
 */
export function runShardManager(
  fakes: { discord: FakeDiscord; upstream: FakeWeb3Bio },
  workDir: string,
  env: Record<string, string>,
): NodeProcess {
  const { discord, upstream } = fakes;
  return runNode(
    MAIN,
    {
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      DISCORD_API_URL: discord.apiUrl,
      WEB3BIO_API_URL: upstream.url,
      DATA_DIR: join(workDir, 'data'),
      HTTP_HOST: '127.0.0.1',
      ...env,
      SHARDS_PER_PROCESS: '1',
      SHARD_SPAWN_DELAY_SECONDS: '0',
      LOG_LEVEL: 'info',
    },
    workDir,
  );
}

/** DATABASE_URL for a bot whose tables live in `schema` of the test database. */
export function schemaDatabaseUrl(schema: string): string {
  return `${POSTGRES_URL}?options=-c%20search_path%3D${schema}`;
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

/**
 * The end of a sharded file: the manager killed, the stand-ins closed, the schema dropped (when it ran on
 * one) and its folder removed. Each part may be missing, after a start that failed half-way.
 */
export async function tearDownShardedRun(run: {
  manager?: NodeProcess;
  discord?: FakeDiscord;
  upstream?: FakeWeb3Bio;
  schema?: string;
  workDir?: string;
}): Promise<void> {
  await killIfRunning(run.manager);
  await run.discord?.close();
  await run.upstream?.close();
  if (run.schema !== undefined) await dropPostgresSchema(run.schema);
  if (run.workDir !== undefined) await rm(run.workDir, { recursive: true, force: true });
}
