import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { closeRedisClient, createRedisClient } from '../../src/cache/redisStore.ts';
import { quotaKey, SharedRateLimiter } from '../../src/web3bio/sharedRateLimiter.ts';
import { closedPort, startRedisProxy } from '../cache/storeHarness.ts';

const ROOT = `web3bio-test:${randomUUID()}:`;
const clients: Redis[] = [];
const limiters: SharedRateLimiter[] = [];

/** A client as one bot process would have it. */
function redis(url = REDIS_URL): Redis {
  const client = createRedisClient(url);
  clients.push(client);
  return client;
}

function limiter(options: Partial<ConstructorParameters<typeof SharedRateLimiter>[0]> & { prefix: string }) {
  const made = new SharedRateLimiter({
    redis: redis(),
    limit: { requests: 4, intervalMs: 200 },
    pollMs: 20,
    ...options,
  });
  limiters.push(made);
  return made;
}

function logs() {
  const lines: { level: string; msg: string; obj: object }[] = [];
  const logger = {
    info: (obj: object, msg = '') => lines.push({ level: 'info', msg, obj }),
    warn: (obj: object, msg = '') => lines.push({ level: 'warn', msg, obj }),
  };
  return { lines, logger };
}

/** Acquires `count` slots, finishing each at once; resolves with the grant times (ms since `start`) and who got them. */
async function burst(
  who: string,
  target: SharedRateLimiter,
  count: number,
  start: number,
  grants: { who: string; at: number }[],
): Promise<void> {
  await Promise.all(
    Array.from({ length: count }, () =>
      target.acquire().then((done) => {
        grants.push({ who, at: performance.now() - start });
        done();
      }),
    ),
  );
}

afterEach(() => {
  for (const made of limiters.splice(0)) made.close();
});

afterAll(async () => {
  const cleaner = redis();
  await new Promise((resolve) => cleaner.once('ready', resolve));
  await deleteKeys(cleaner, `${ROOT}*`);
  await Promise.all(clients.splice(0).map((client) => closeRedisClient(client)));
});

describe('SharedRateLimiter against the real Redis', () => {
  it('keeps two processes on one key within the limit together', async () => {
    const prefix = `${ROOT}together:`;
    const a = limiter({ prefix });
    const b = limiter({ prefix });
    const grants: { who: string; at: number }[] = [];
    const start = performance.now();
    await Promise.all([burst('a', a, 8, start, grants), burst('b', b, 8, start, grants)]);
    const times = grants.map((g) => g.at).sort((x, y) => x - y);
    expect(times).toHaveLength(16);
    // Any 5 consecutive grants span at least one window (local clocks see a grant a few ms late).
    for (let i = 4; i < times.length; i++) {
      expect((times[i] ?? 0) - (times[i - 4] ?? 0)).toBeGreaterThanOrEqual(190);
    }
    expect(times[15]).toBeGreaterThanOrEqual(3 * 190);
  });

  it('takes turns between processes: a later process is not starved by a long queue', async () => {
    const prefix = `${ROOT}fair:`;
    const a = limiter({ prefix, limit: { requests: 2, intervalMs: 100 } });
    const b = limiter({ prefix, limit: { requests: 2, intervalMs: 100 } });
    const grants: { who: string; at: number }[] = [];
    const start = performance.now();
    const first = burst('a', a, 16, start, grants);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await Promise.all([first, burst('b', b, 6, start, grants)]);
    const firstTwelve = grants
      .sort((x, y) => x.at - y.at)
      .slice(0, 12)
      .map((g) => g.who);
    expect(firstTwelve.filter((who) => who === 'b').length).toBeGreaterThanOrEqual(4);
  });

  it('keeps a slot until a window after the request finished, across processes', async () => {
    const prefix = `${ROOT}held:`;
    const a = limiter({ prefix, limit: { requests: 1, intervalMs: 100 } });
    const b = limiter({ prefix, limit: { requests: 1, intervalMs: 100 } });
    const done = await a.acquire();
    const started = performance.now();
    let grantedAt = 0;
    const waiting = b.acquire().then((finish) => {
      grantedAt = performance.now() - started;
      finish();
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(grantedAt).toBe(0);
    done();
    await waiting;
    expect(grantedAt).toBeGreaterThanOrEqual(150 + 95);
  });

  it('lets a process that gave up waiting leave the queue, so it blocks no one', async () => {
    const prefix = `${ROOT}abort:`;
    const a = limiter({ prefix, limit: { requests: 1, intervalMs: 50 } });
    const b = limiter({ prefix, limit: { requests: 1, intervalMs: 50 } });
    (await a.acquire())();
    const controller = new AbortController();
    const abandoned = b.acquire(controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort(new Error('gone'));
    await expect(abandoned).rejects.toThrow('gone');
    await new Promise((resolve) => setTimeout(resolve, 40));
    const started = performance.now();
    (await a.acquire())();
    // The queue entry b left behind would otherwise hold a for the 5 s a silent waiter is kept.
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it("lets a crashed holder's slot go after its lease (plus the window)", async () => {
    const prefix = `${ROOT}lease:`;
    const limit = { requests: 1, intervalMs: 50 };
    const crashed = limiter({ prefix, limit, leaseMs: 300 });
    await crashed.acquire();
    // The process dies holding the slot: it never reports the answer.
    crashed.close();
    const b = limiter({ prefix, limit });
    const started = performance.now();
    (await b.acquire())();
    const waited = performance.now() - started;
    expect(waited).toBeGreaterThanOrEqual(300);
    expect(waited).toBeLessThan(5_000);
  });

  it('names the quota by a hash of the API key, never the key itself', () => {
    const key = quotaKey('web3bio:', 'sk-secret-api-key-123');
    expect(key).not.toContain('sk-secret');
    expect(key).toMatch(/^web3bio:ratelimit:\{[0-9a-f]{16}\}$/);
    expect(quotaKey('web3bio:', undefined)).toBe('web3bio:ratelimit:{keyless}');
  });
});

describe('SharedRateLimiter when Redis is unreachable', () => {
  it('fails open to the local limiter, keeps its limit, and says so once without the password', async () => {
    const port = await closedPort();
    const { lines, logger } = logs();
    const changes: boolean[] = [];
    const made = new SharedRateLimiter({
      redis: redis(`redis://:hunter2-redis-pass@127.0.0.1:${port}`),
      limit: { requests: 3, intervalMs: 100 },
      logger,
      onSharedChange: (shared) => changes.push(shared),
    });
    limiters.push(made);
    const grants: { who: string; at: number }[] = [];
    const start = performance.now();
    await burst('local', made, 6, start, grants);
    const times = grants.map((g) => g.at).sort((x, y) => x - y);
    expect(times[3]).toBeGreaterThanOrEqual(95);
    expect(made.shared).toBe(false);
    expect(changes).toEqual([false]);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(lines[0]?.msg).toMatch(/unreachable.*local limiter/);
    expect(JSON.stringify(lines)).not.toContain('hunter2');
  });

  it('goes back to the shared quota when Redis comes back', async () => {
    const proxy = await startRedisProxy();
    const { lines, logger } = logs();
    const changes: boolean[] = [];
    const made = new SharedRateLimiter({
      redis: redis(`redis://127.0.0.1:${proxy.port}`),
      limit: { requests: 50, intervalMs: 1_000 },
      prefix: `${ROOT}flap:`,
      logger,
      onSharedChange: (shared) => changes.push(shared),
    });
    limiters.push(made);
    (await made.acquire())();
    expect(made.shared).toBe(true);

    await proxy.stop();
    (await made.acquire())();
    expect(made.shared).toBe(false);

    await proxy.restart();
    await expect
      .poll(
        async () => {
          (await made.acquire())();
          return made.shared;
        },
        { timeout: 5_000, interval: 100 },
      )
      .toBe(true);
    expect(changes).toEqual([false, true]);
    expect(lines.map((l) => l.level)).toEqual(['warn', 'info']);
    await proxy.stop();
  });
});
