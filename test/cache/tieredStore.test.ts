import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { createDefaultCache } from '../../src/cache/index.ts';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import { closeRedisClient, createRedisClient, RedisStore } from '../../src/cache/redisStore.ts';
import { type CacheTier, TieredStore } from '../../src/cache/tieredStore.ts';
import type { CachePolicy, LookupCache } from '../../src/cache/types.ts';
import { createClientCacheOptions, Web3BioClient } from '../../src/web3bio/client.ts';
import { NotFoundError } from '../../src/web3bio/errors.ts';
import { startRedisProxy } from './storeHarness.ts';

const POLICY: CachePolicy = { ttlMs: 60_000, negativeTtlMs: 10_000, staleIfErrorMs: 30_000 };
const ROOT = `web3bio-test:${randomUUID()}:`;
let admin: Redis;
const closers: (() => Promise<void>)[] = [];
let prefixCount = 0;

/** A fresh prefix shared by the "processes" of one test. */
function sharedPrefix(): string {
  prefixCount += 1;
  return `${ROOT}${prefixCount}:`;
}

/** One bot process's store: its own Redis connections, its own L1. */
async function processStore(prefix: string, options: { l1TtlMs?: number; url?: string } = {}) {
  const reads: [CacheTier, boolean][] = [];
  const l2 = new RedisStore({ client: createRedisClient(options.url ?? REDIS_URL), prefix });
  await new Promise((resolve) => l2.client.once('ready', resolve));
  const store = new TieredStore({
    l2,
    l1TtlMs: options.l1TtlMs,
    onRead: (tier, hit) => reads.push([tier, hit]),
  });
  await store.ready();
  closers.push(async () => {
    await store.close();
    await closeRedisClient(l2.client);
  });
  return { store, l2, reads };
}

function cacheOver(store: TieredStore | RedisStore): LookupCache {
  return createLookupCache({ store, ...createClientCacheOptions(), fillPollMs: 10 });
}

beforeAll(async () => {
  admin = createRedisClient(REDIS_URL);
  await new Promise((resolve) => admin.once('ready', resolve));
});

afterAll(async () => {
  for (const close of closers.splice(0)) await close();
  await deleteKeys(admin, `${ROOT}*`);
  await closeRedisClient(admin);
});

describe('TieredStore: an L1 in front of Redis', () => {
  it('answers a repeated read from the L1 without asking Redis', async () => {
    const { store, l2, reads } = await processStore(sharedPrefix());
    const entry = { value: 'v', negative: false, fetchedAt: 1, expiresAt: Date.now() + 60_000 };
    await l2.set('k', entry, 60_000);
    const remote = vi.spyOn(l2, 'get');
    expect(await store.get('k')).toEqual(entry);
    expect(await store.get('k')).toEqual(entry);
    expect(await store.get('k')).toEqual(entry);
    expect(remote).toHaveBeenCalledTimes(1);
    expect(reads).toEqual([
      ['l1', false],
      ['l2', true],
      ['l1', true],
      ['l1', true],
    ]);
  });

  it("drops another process's L1 copy when one process writes, within the pub/sub latency", async () => {
    const prefix = sharedPrefix();
    const a = await processStore(prefix);
    const b = await processStore(prefix);
    const v1 = { value: 'v1', negative: false, fetchedAt: 1, expiresAt: Date.now() + 60_000 };
    await a.store.set('k', v1, 60_000);
    expect((await b.store.get('k'))?.value).toBe('v1');
    await a.store.set('k', { ...v1, value: 'v2' }, 60_000);
    // The L1 copy would otherwise live 30 s.
    await expect
      .poll(async () => (await b.store.get('k'))?.value, { timeout: 1_000, interval: 10 })
      .toBe('v2');
    await a.store.delete('k');
    await expect.poll(() => b.store.get('k'), { timeout: 1_000, interval: 10 }).toBeUndefined();
  });

  it('lets an L1 copy live at most l1TtlMs when no invalidation comes', async () => {
    const prefix = sharedPrefix();
    const b = await processStore(prefix, { l1TtlMs: 150 });
    const v1 = { value: 'v1', negative: false, fetchedAt: 1, expiresAt: Date.now() + 60_000 };
    await admin.set(`${prefix}k`, JSON.stringify(v1), 'PX', 60_000);
    expect((await b.store.get('k'))?.value).toBe('v1');
    // Written behind the tiers' back: nothing is published.
    await admin.set(`${prefix}k`, JSON.stringify({ ...v1, value: 'v2' }), 'PX', 60_000);
    expect((await b.store.get('k'))?.value).toBe('v1');
    await new Promise((resolve) => setTimeout(resolve, 160));
    expect((await b.store.get('k'))?.value).toBe('v2');
  });
});

describe('TieredStore when Redis goes away and comes back', () => {
  it('keeps answering from the L1, and drops it on reconnect so a write it missed is seen', async () => {
    const prefix = sharedPrefix();
    const proxy = await startRedisProxy();
    const a = await processStore(prefix);
    const b = await processStore(prefix, { url: `redis://127.0.0.1:${proxy.port}` });
    const v1 = { value: 'v1', negative: false, fetchedAt: 1, expiresAt: Date.now() + 60_000 };
    // Written straight to Redis: no invalidation in flight that could drop b's copy after it is read.
    await admin.set(`${prefix}k`, JSON.stringify(v1), 'PX', 60_000);
    expect((await b.store.get('k'))?.value).toBe('v1');

    await proxy.stop();
    // Redis is out of reach for b: its L1 still answers, and the invalidation below never reaches it.
    expect((await b.store.get('k'))?.value).toBe('v1');
    await a.store.set('k', { ...v1, value: 'v2' }, 60_000);
    expect((await b.store.get('k'))?.value).toBe('v1');

    await proxy.restart();
    // Well inside the 30 s an L1 copy could otherwise live.
    await expect
      .poll(async () => (await b.store.get('k').catch(() => undefined))?.value, {
        timeout: 5_000,
        interval: 50,
      })
      .toBe('v2');
    await proxy.stop();
  });
});

describe('single-flight across processes (SET NX PX claim)', () => {
  it('costs one loader call for concurrent misses of one key in two processes', async () => {
    const prefix = sharedPrefix();
    const [a, b] = [
      cacheOver((await processStore(prefix)).store),
      cacheOver((await processStore(prefix)).store),
    ];
    let calls = 0;
    const loader = async () => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 80));
      return `answer ${calls}`;
    };
    const results = await Promise.all([a.get('k', loader, POLICY), b.get('k', loader, POLICY)]);
    expect(calls).toBe(1);
    expect(results.map((r) => r.value)).toEqual(['answer 1', 'answer 1']);
    expect(results.filter((r) => r.hit)).toHaveLength(1);
  });

  it("shares a negative answer, and a waiter loads itself when the claim's owner fails", async () => {
    const prefix = sharedPrefix();
    const [a, b] = [
      cacheOver((await processStore(prefix)).store),
      cacheOver((await processStore(prefix)).store),
    ];
    let calls = 0;
    const notFound = async (): Promise<string> => {
      calls += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new NotFoundError('nobody.eth', 404, 'http://upstream/profile/nobody.eth');
    };
    const settled = await Promise.allSettled([
      a.get('gone', notFound, POLICY),
      b.get('gone', notFound, POLICY),
    ]);
    expect(calls).toBe(1);
    for (const result of settled) {
      expect(result.status === 'rejected' && result.reason instanceof NotFoundError).toBe(true);
    }

    let failing = 0;
    const outage = async (): Promise<string> => {
      failing += 1;
      await new Promise((resolve) => setTimeout(resolve, 50));
      throw new Error('upstream down');
    };
    const started = performance.now();
    const both = await Promise.allSettled([a.get('down', outage, POLICY), b.get('down', outage, POLICY)]);
    expect(both.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(failing).toBe(2);
    // The waiter did not sit out the 10 s claim: it saw the claim released.
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('two Web3BioClients sharing one Redis', () => {
  let fake: FakeWeb3Bio;
  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ latencyMs: 50 });
    closers.push(() => fake.close());
  });

  it('send one upstream request for concurrent lookups of one identity, then both hit', async () => {
    const redisPrefix = sharedPrefix();
    const clients = [0, 1].map(
      () =>
        new Web3BioClient({
          baseUrl: fake.url,
          rateLimit: null,
          cache: createDefaultCache({ redisUrl: REDIS_URL, redisPrefix, ...createClientCacheOptions() }),
        }),
    );
    closers.push(async () => {
      for (const client of clients) await client.close();
    });
    // Let both owned connections come up (no offline queue: a write before that reaches only the L1).
    await expect
      .poll(() => admin.pubsub('NUMSUB', `${redisPrefix}invalidate`), { timeout: 5_000 })
      .toEqual([`${redisPrefix}invalidate`, 2]);
    const before = fake.requests.length;
    const answers = await Promise.all(clients.map((client) => client.getProfiles('vitalik.eth')));
    expect(fake.requests.length - before).toBe(1);
    expect(answers[0]?.data).toEqual(answers[1]?.data);
    const again = await Promise.all(clients.map((client) => client.getProfiles('vitalik.eth')));
    expect(again.map((a) => a.cached)).toEqual([true, true]);
    expect(fake.requests.length - before).toBe(1);
  });
});
