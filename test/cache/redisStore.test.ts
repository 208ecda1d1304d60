import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { createDefaultCache } from '../../src/cache/index.ts';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import { MalformedEntryError, parseEntry, RedisStore } from '../../src/cache/redisStore.ts';
import { closedPort } from './storeHarness.ts';

const POLICY = { ttlMs: 60_000, negativeTtlMs: 0, staleIfErrorMs: 0 };
const ENTRY = { value: { name: 'tony.base.eth' }, negative: false, fetchedAt: 1, expiresAt: 2 };

describe('parseEntry', () => {
  it('accepts a stored entry, including one whose value was undefined', () => {
    expect(parseEntry(JSON.stringify(ENTRY))).toEqual(ENTRY);
    expect(parseEntry('{"negative":true,"fetchedAt":1,"expiresAt":2}')).toEqual({
      value: undefined,
      negative: true,
      fetchedAt: 1,
      expiresAt: 2,
    });
  });

  it.each([
    ['not JSON', '{'],
    ['null', 'null'],
    ['a string', '"entry"'],
    ['missing negative', '{"value":1,"fetchedAt":1,"expiresAt":2}'],
    ['string timestamps', '{"value":1,"negative":false,"fetchedAt":"1","expiresAt":2}'],
    ['missing expiry', '{"value":1,"negative":false,"fetchedAt":1}'],
  ])('rejects %s', (_label, text) => {
    expect(parseEntry(text)).toBeUndefined();
  });
});

describe('RedisStore on a real Redis', () => {
  const root = `web3bio-test:${randomUUID()}:`;
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });

  afterAll(async () => {
    await deleteKeys(client, `${root}*`);
    await client.quit();
  });

  it('writes JSON under its prefix with PX = retainMs', async () => {
    const store = new RedisStore({ client, prefix: `${root}p:` });
    await store.set('profile:ens:tony', ENTRY, 5_000);
    expect(JSON.parse((await client.get(`${root}p:profile:ens:tony`)) ?? 'null')).toEqual(ENTRY);
    const pttl = await client.pttl(`${root}p:profile:ens:tony`);
    expect(pttl).toBeGreaterThan(4_000);
    expect(pttl).toBeLessThanOrEqual(5_000);
    await store.delete('profile:ens:tony');
    expect(await client.exists(`${root}p:profile:ens:tony`)).toBe(0);
  });

  it('uses web3bio: as the default prefix', async () => {
    const key = `${root}default`;
    const store = new RedisStore({ client });
    try {
      await store.set(key, ENTRY, 5_000);
      expect(await client.exists(`web3bio:${key}`)).toBe(1);
    } finally {
      await client.del(`web3bio:${key}`);
    }
  });

  it('rejects a malformed value, and the cache treats it as a miss', async () => {
    const store = new RedisStore({ client, prefix: `${root}m:` });
    await client.set(`${root}m:bad`, '{"value":1}', 'PX', 5_000);
    await expect(store.get('bad')).rejects.toBeInstanceOf(MalformedEntryError);

    const reported: string[] = [];
    const cache = createLookupCache({
      store,
      onStoreError: (error, operation) => reported.push(`${operation} ${(error as Error).name}`),
    });
    expect(await cache.get('bad', async () => 'fresh', POLICY)).toMatchObject({ value: 'fresh', hit: false });
    expect(reported).toEqual(['get MalformedEntryError']);
    expect(await cache.get('bad', async () => 'unused', POLICY)).toMatchObject({ value: 'fresh', hit: true });
  });

  it('leaves a client it was given open, and closes one it created', async () => {
    await new RedisStore({ client, prefix: root }).close();
    expect(await client.ping()).toBe('PONG');

    const owned = new RedisStore({ url: REDIS_URL, prefix: `${root}o:` });
    await expect
      .poll(
        async () =>
          owned.set('k', ENTRY, 5_000).then(
            () => true,
            () => false,
          ),
        { timeout: 5_000 },
      )
      .toBe(true);
    expect((await owned.get('k'))?.value).toEqual(ENTRY.value);
    await owned.close();
    await expect(owned.get('k')).rejects.toThrow();
  });

  it('backs createDefaultCache when a redisUrl is given', async () => {
    const cache = createDefaultCache({ redisUrl: REDIS_URL });
    const key = `${root}default-cache`;
    try {
      // The owned client connects in the background; until then writes reach only the L1.
      await expect
        .poll(
          async () => {
            await cache.set(key, 'v', POLICY);
            return client.exists(`web3bio:${key}`);
          },
          { timeout: 5_000 },
        )
        .toBe(1);
      expect(await cache.get(key, async () => 'unused', POLICY)).toMatchObject({ value: 'v', hit: true });
    } finally {
      await cache.close();
      await client.del(`web3bio:${key}`);
    }
  });
});

describe('Redis down', () => {
  it('still answers through the loader when the given client cannot connect', async () => {
    const port = await closedPort();
    const down = new Redis({
      host: '127.0.0.1',
      port,
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    down.on('error', () => {});
    const reported: string[] = [];
    const cache = createLookupCache({
      store: new RedisStore({ client: down }),
      onStoreError: (_error, operation, key) => reported.push(`${operation} ${key}`),
    });
    let calls = 0;
    const loader = async () => `answer ${++calls}`;

    expect(await cache.get('k', loader, POLICY)).toMatchObject({ value: 'answer 1', hit: false });
    expect(await cache.get('k', loader, POLICY)).toMatchObject({ value: 'answer 2', hit: false });
    await cache.set('k', 'x', POLICY);
    await cache.delete('k');
    expect(reported).toEqual(['get k', 'claim k', 'set k', 'get k', 'claim k', 'set k', 'set k', 'delete k']);
    await cache.close();
    down.disconnect();
  });

  it('still answers when createDefaultCache points at a closed port, and closes cleanly', async () => {
    const port = await closedPort();
    const reported: string[] = [];
    const cache = createDefaultCache({
      redisUrl: `redis://:secret-password@127.0.0.1:${port}`,
      onStoreError: (error) => reported.push(String(error)),
    });
    const started = performance.now();
    expect(await cache.get('k', async () => 'from loader', POLICY)).toMatchObject({ value: 'from loader' });
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(reported.length).toBeGreaterThan(0);
    expect(reported.join('\n')).not.toContain('secret-password');
    await cache.close();
  });
});

describe('createDefaultCache without Redis', () => {
  it('uses a memory store', async () => {
    const cache = createDefaultCache({ maxEntries: 10 });
    await cache.set('k', 'v', POLICY);
    expect(await cache.get('k', async () => 'unused', POLICY)).toMatchObject({ value: 'v', hit: true });
    await cache.close();
  });
});
