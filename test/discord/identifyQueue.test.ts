/**
 * The bot's one identify queue in Redis (issue #37): shard processes on several machines share it, so a
 * bucket's identifies are spaced whoever makes them, and the other buckets are not held. Against the
 * local Redis, with a short spacing.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { REDIS_URL } from '../../fakes/localRedis.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../../src/cache/redisStore.ts';
import { RedisIdentifyQueue, redisIdentifyThrottler } from '../../src/discord/identifyQueue.ts';
import { closedPort } from '../cache/storeHarness.ts';

const SPACING = 300;
const clients: Redis[] = [];
afterAll(async () => {
  await Promise.all(clients.map((c) => closeRedisClient(c)));
});

async function machine(key: string, url = REDIS_URL, onRedisDown?: (err: unknown) => void) {
  const redis = createRedisClient(url);
  clients.push(redis);
  await untilRedisReady(redis, 500);
  return new RedisIdentifyQueue({
    redis,
    key,
    maxConcurrency: 2,
    spacingMs: SPACING,
    ...(onRedisDown ? { onRedisDown } : {}),
  });
}

/** When each shard was let through, from `start`. */
async function identifyAll(queues: [RedisIdentifyQueue, number][]): Promise<Map<number, number>> {
  const start = Date.now();
  const at = new Map<number, number>();
  await Promise.all(
    queues.map(async ([queue, shard]) => {
      await queue.waitForIdentify(shard, new AbortController().signal);
      at.set(shard, Date.now() - start);
    }),
  );
  return at;
}

describe('RedisIdentifyQueue', () => {
  it('spaces one bucket across two machines and lets the other bucket through at once', async () => {
    const key = `identify-test:${randomUUID()}:`;
    const [a, b] = [await machine(key), await machine(key)];
    const at = await identifyAll([
      [a, 0],
      [a, 1],
      [b, 2],
      [b, 3],
    ]);
    // Buckets: shard % 2. Shards 0 and 2 share bucket 0, 1 and 3 bucket 1.
    const gap = (x: number, y: number) => Math.abs((at.get(x) ?? 0) - (at.get(y) ?? 0));
    expect(gap(0, 2)).toBeGreaterThanOrEqual(SPACING - 5);
    expect(gap(1, 3)).toBeGreaterThanOrEqual(SPACING - 5);
    expect(Math.min(at.get(0) ?? 0, at.get(2) ?? 0)).toBeLessThan(SPACING / 2);
    expect(Math.min(at.get(1) ?? 0, at.get(3) ?? 0)).toBeLessThan(SPACING / 2);
  });

  it('honest control: another bot (another key) is not held by this one', async () => {
    const [a, b] = [
      await machine(`identify-test:${randomUUID()}:`),
      await machine(`identify-test:${randomUUID()}:`),
    ];
    const at = await identifyAll([
      [a, 0],
      [b, 0],
    ]);
    expect(Math.max(...at.values())).toBeLessThan(SPACING / 2);
  });

  it('stops waiting when the shard gives up (its signal aborts)', async () => {
    const key = `identify-test:${randomUUID()}:`;
    const queue = await machine(key);
    await queue.waitForIdentify(0, new AbortController().signal);
    const controller = new AbortController();
    const waiting = queue.waitForIdentify(2, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow();
  });

  it('without Redis, spaces its own identifies and says so once', async () => {
    const down: unknown[] = [];
    const queue = await machine(
      `identify-test:${randomUUID()}:`,
      `redis://127.0.0.1:${await closedPort()}`,
      (err) => down.push(err),
    );
    const at = await identifyAll([
      [queue, 0],
      [queue, 2],
      [queue, 1],
    ]);
    expect(Math.abs((at.get(0) ?? 0) - (at.get(2) ?? 0))).toBeGreaterThanOrEqual(SPACING - 5);
    expect(at.get(1) ?? Number.POSITIVE_INFINITY).toBeLessThan(SPACING / 2);
    expect(down).toHaveLength(1);
  });
});

it("builds every shard's throttler of a process on one wait for Redis, not a listener each (16 shards)", async () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  const throttler = redisIdentifyThrottler(
    { REDIS_URL, REDIS_PREFIX: `identify-${randomUUID()}:`, DISCORD_APPLICATION_ID: '1' },
    { warn: () => {} },
  );
  const manager = { fetchGatewayInformation: async () => ({ session_start_limit: { max_concurrency: 1 } }) };
  try {
    const built = await Promise.all(Array.from({ length: 16 }, () => throttler.build(manager)));
    await new Promise((resolve) => setImmediate(resolve));
    expect(built.every((queue) => queue instanceof RedisIdentifyQueue)).toBe(true);
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
  } finally {
    process.off('warning', onWarning);
    await throttler.close();
  }
});
