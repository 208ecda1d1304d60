/**
 * The bot as `npm start` runs it: `node <the start script's flags> dist/main.js`, the bundle the shipped
 * suite's global setup built once, as a child process started from an empty folder (no `.env` to read)
 * with its environment only.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { inject } from 'vitest';
import type { FakeDiscord } from '../../fakes/discord/server.ts';
import type { FakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { npmStartCommand } from '../../scripts/npmStart.ts';
import { fakesEnv, type LogLine } from '../e2e/harness.ts';
import { type NodeProcess, runNode } from '../e2e/processes.ts';

/** npm start's command (package.json): its node flags and its entry, the bundle in dist/. */
export function npmStart(): { flags: string[]; entry: string } {
  const command = npmStartCommand();
  if (!command.entry.startsWith('dist/'))
    throw new Error(`npm start no longer runs the bundle in dist/: ${command.entry}`);
  return command;
}

/** The built entry npm start runs (`dist/main.js` of the shared build). */
export function shippedMain(): string {
  return join(dirname(inject('shippedDist')), npmStart().entry);
}

/** The stand-ins' URLs and credentials for a shipped process (which keeps its data in a folder of its own). */
export function standInsEnv(discord: FakeDiscord, upstream: FakeWeb3Bio): Record<string, string> {
  const { DATA_DIR: _ownFolder, ...env } = fakesEnv(discord, upstream, '');
  return env;
}

/** A web replica's settings (INTERACTIONS=http) on 127.0.0.1:`port`, with the stand-ins'. */
export function replicaEnv(
  discord: FakeDiscord,
  upstream: FakeWeb3Bio,
  port: number,
): Record<string, string> {
  return {
    ...standInsEnv(discord, upstream),
    INTERACTIONS: 'http',
    PUBLIC_URL: 'https://bot.example.test',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: String(port),
  };
}

export interface ShippedProcess extends NodeProcess {
  /** SIGTERM, then SIGKILL after `graceMs`; removes the process's folder. Resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

/**
 * Starts the built bot with `env` (its data under a folder of its own unless `env` says otherwise) and
 * resolves once a log line matches `ready`.
 */
export async function startShipped(
  env: Record<string, string>,
  ready: (line: LogLine) => boolean,
  timeoutMs = 60_000,
): Promise<ShippedProcess> {
  const { flags } = npmStart();
  const main = shippedMain();
  const workDir = await mkdtemp(join(tmpdir(), 'shipped-run-'));
  const child = runNode(main, { DATA_DIR: join(workDir, 'data'), ...env }, workDir, flags);
  const stop = async (graceMs = 10_000) => {
    if (child.child.exitCode === null && child.child.signalCode === null) {
      child.child.kill('SIGTERM');
      const killer = setTimeout(() => child.child.kill('SIGKILL'), graceMs);
      await child.exited;
      clearTimeout(killer);
    }
    await rm(workDir, { recursive: true, force: true });
    return child.child.exitCode;
  };
  // A process that exits before it is ready fails at once, with what it printed.
  const exitedFirst = child.exited.then((code) => {
    const { stdout, stderr } = child.output();
    throw new Error(`the bot exited (${code}) before it was ready; stdout:\n${stdout}\nstderr:\n${stderr}`);
  });
  exitedFirst.catch(() => undefined);
  try {
    await Promise.race([child.waitForLog(ready, timeoutMs), exitedFirst]);
  } catch (error) {
    await stop(0);
    throw error;
  }
  return { ...child, stop };
}

/** A log line saying the process is serving: a gateway bot, a shard manager, a web replica or the REST proxy. */
export const READY = {
  bot: (line: LogLine) => line.msg === 'bot ready',
  shards: (line: LogLine) => line.msg === 'all shards ready',
  replica: (line: LogLine) => line.msg === 'web replica ready',
  restProxy: (line: LogLine) => line.msg === 'rest proxy ready',
} as const;
