/**
 * A Redis of a test's own (the installed `redis-server`, without persistence, as compose runs it) on a
 * free loopback port, that the test may kill and start again empty on the same port: the shared Redis on
 * 6379 (localRedis.ts) is never stopped.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from './namedPort.ts';

export interface OwnRedis {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`. */
  readonly url: string;
  /** SIGKILL, as a crash: nothing saved (there is no persistence anyway). Resolves once it has exited. */
  kill(): Promise<void>;
  /** Starts a fresh, empty server on the same port (after `kill`). */
  restart(): Promise<void>;
  /** Kills it, if running. */
  close(): Promise<void>;
}

/** Starts `redis-server` and resolves once it accepts connections. */
async function spawnServer(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`redis-server exited (${code}):\n${output}`));
    });
  });
  return child;
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = await freePort();
  let child: ChildProcess | undefined = await spawnServer(port);
  const kill = async () => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    const exited = once(running, 'exit');
    running.kill('SIGKILL');
    await exited;
  };
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    kill,
    async restart() {
      await kill();
      child = await spawnServer(port);
    },
    close: kill,
  };
}
