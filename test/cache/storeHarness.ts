import { randomUUID } from 'node:crypto';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { MemoryStore } from '../../src/cache/memoryStore.ts';
import { RedisStore } from '../../src/cache/redisStore.ts';
import type { CacheStore } from '../../src/cache/types.ts';

/** Makes fresh, isolated stores of one kind and removes whatever they left behind. */
export interface StoreHarness {
  name: string;
  create(): CacheStore;
  cleanup(): Promise<void>;
}

export function memoryHarness(): StoreHarness {
  return { name: 'MemoryStore', create: () => new MemoryStore(), cleanup: async () => {} };
}

/** Every store gets its own prefix under one per-run root, so runs and tests never see each other's keys. */
export function redisHarness(): StoreHarness & { client: Redis; root: string } {
  const root = `web3bio-test:${randomUUID()}:`;
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let count = 0;
  return {
    name: 'RedisStore',
    client,
    root,
    create: () => {
      count += 1;
      return new RedisStore({ client, prefix: `${root}${count}:` });
    },
    cleanup: async () => {
      await deleteKeys(client, `${root}*`);
      await client.quit();
    },
  };
}

/** A loopback port with nothing listening on it. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return address.port;
}

/** A TCP proxy to the real Redis that the test can take down and bring back on the same port. */
export async function startRedisProxy(): Promise<{
  port: number;
  stop(): Promise<void>;
  restart(): Promise<void>;
}> {
  const sockets = new Set<Socket>();
  let server: Server;
  let port = 0;
  const listen = async () => {
    server = createServer((client) => {
      const upstream = createConnection(6379, '127.0.0.1');
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => socket.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('no TCP address');
    port = address.port;
  };
  await listen();
  return {
    get port() {
      return port;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
    restart: listen,
  };
}
