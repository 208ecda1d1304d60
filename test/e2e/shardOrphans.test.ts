/**
 * A shard process never outlives its manager: killed outright while a shard process is still starting
 * (its login hanging on a Discord that does not answer), the shard process leaves at once instead of
 * running unmanaged, and unstoppable by the manager, forever.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runNode } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));

let silent: Server;
const sockets = new Set<Socket>();
let workDir: string;

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-shard-orphan-'));
  // Accepts every connection and never answers: the shard's login waits on it.
  silent = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
  });
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
  await rm(workDir, { recursive: true, force: true });
});

describe('a shard process whose manager is gone while it starts', () => {
  it('exits by itself, saying why, though its login never finished', async () => {
    const address = silent.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const shard = runNode(
      MAIN,
      {
        // What discord-hybrid-sharding gives a forked shard process.
        CLUSTER_MANAGER_MODE: 'process',
        SHARD_LIST: '0',
        TOTAL_SHARDS: '1',
        CLUSTER_COUNT: '1',
        CLUSTER: '0',
        DISCORD_TOKEN: 'e2e-ORPHAN-TOKEN-must-not-leak',
        DISCORD_APPLICATION_ID: '100000000000000001',
        DISCORD_API_URL: `http://127.0.0.1:${port}/api`,
        DATA_DIR: join(workDir, 'data'),
        HTTP_PORT: '0',
        LOG_LEVEL: 'info',
      },
      workDir,
      [],
      [],
      { ipc: true },
    );
    try {
      // Started and waiting on Discord: the login's request reached the silent server.
      await expect.poll(() => sockets.size, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(shard.child.exitCode).toBeNull();
      shard.child.disconnect(); // the manager is gone: its end of the IPC channel closed
      const code = await Promise.race([
        shard.exited,
        new Promise<string>((resolve) => setTimeout(resolve, 10_000, 'still running')),
      ]);
      expect(code).toBe(1);
      expect(shard.logLines().map((l) => l.msg)).toContain(
        'shard manager gone while this shard process was starting: exiting',
      );
      expect(shard.output().stdout).not.toContain('e2e-ORPHAN-TOKEN');
    } finally {
      if (shard.child.exitCode === null) shard.child.kill('SIGKILL');
    }
  }, 40_000);
});
