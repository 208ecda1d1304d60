import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import {
  MemoryRecentLookups,
  type RecentLookups,
  type RecentLookupsLimits,
} from '../../src/cache/recentLookups.ts';
import { RedisRecentLookups } from '../../src/cache/redisRecentLookups.ts';
import { closedPort } from './storeHarness.ts';

const ALICE = 'alice';
const BOB = 'bob';
const GUILD = 'guild-1';
const OTHER_GUILD = 'guild-2';

type Limits = Partial<Pick<RecentLookupsLimits, 'perUser' | 'perGuild'>>;

const root = `web3bio-test:${randomUUID()}:`;
const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
let count = 0;

afterAll(async () => {
  await deleteKeys(client, `${root}*`);
  expect(await client.keys(`${root}*`)).toEqual([]);
  await client.quit();
});

const kinds: [string, (limits: Limits) => RecentLookups][] = [
  ['MemoryRecentLookups', (limits) => new MemoryRecentLookups(limits)],
  [
    'RedisRecentLookups',
    (limits) => {
      count += 1;
      return new RedisRecentLookups({ client, prefix: `${root}${count}:`, limits });
    },
  ],
];

describe.each(kinds)('%s', (_name, create) => {
  const look = (store: RecentLookups, userId: string, identity: string, more = {}) =>
    store.remember({ userId, guildId: GUILD, identity, private: false, ...more });

  it('keeps each member’s and each server’s lookups, most recent first, without repeats', async () => {
    const store = create({});
    await look(store, ALICE, 'vitalik.eth');
    await look(store, ALICE, 'dwr.farcaster');
    await look(store, BOB, 'stani.lens');
    await look(store, ALICE, 'vitalik.eth');
    expect(await store.ofUser(ALICE)).toEqual(['vitalik.eth', 'dwr.farcaster']);
    expect(await store.ofUser(BOB)).toEqual(['stani.lens']);
    expect(await store.ofGuild(GUILD)).toEqual(['vitalik.eth', 'stani.lens', 'dwr.farcaster']);
    expect(await store.ofGuild(OTHER_GUILD)).toEqual([]);
    expect(await store.ofUser('nobody')).toEqual([]);
  });

  it('a private lookup, or one in a DM, stays in the member’s own list only', async () => {
    const store = create({});
    await look(store, ALICE, 'secret.eth', { private: true });
    await store.remember({ userId: ALICE, guildId: null, identity: 'dm.eth', private: false });
    expect(await store.ofUser(ALICE)).toEqual(['dm.eth', 'secret.eth']);
    expect(await store.ofGuild(GUILD)).toEqual([]);
  });

  it('caps the lists', async () => {
    const store = create({ perUser: 3, perGuild: 4 });
    for (let i = 0; i < 10; i += 1) await look(store, ALICE, `name${i}.eth`);
    expect(await store.ofUser(ALICE)).toEqual(['name9.eth', 'name8.eth', 'name7.eth']);
    expect(await store.ofGuild(GUILD)).toEqual(['name9.eth', 'name8.eth', 'name7.eth', 'name6.eth']);
  });

  it('forgetUser clears the member’s list and their public lookups in the servers it names, not others’', async () => {
    const store = create({});
    await look(store, ALICE, 'vitalik.eth');
    await look(store, ALICE, 'secret.eth', { private: true });
    await store.remember({ userId: ALICE, guildId: OTHER_GUILD, identity: 'there.eth', private: false });
    await look(store, BOB, 'vitalik.eth');
    await look(store, BOB, 'stani.lens');
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 3, servers: 2 });
    expect(await store.ofUser(ALICE)).toEqual([]);
    // Bob looked vitalik.eth up too: his entry stays.
    expect(await store.ofGuild(GUILD)).toEqual(['stani.lens', 'vitalik.eth']);
    expect(await store.ofGuild(OTHER_GUILD)).toEqual([]);
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 0, servers: 0 });
    await store.close();
  });
});

describe('MemoryRecentLookups', () => {
  it('the same lookup again renews its lists’ age; lists not written for ttlMs are dropped', async () => {
    const store = new MemoryRecentLookups({ ttlMs: 300 });
    const lookup = { userId: ALICE, guildId: GUILD, identity: 'vitalik.eth', private: false };
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    await store.remember(lookup);
    await sleep(200);
    await store.remember(lookup);
    await sleep(200);
    // 400 ms after the first write, 200 after the second.
    expect(await store.ofUser(ALICE)).toEqual(['vitalik.eth']);
    expect(await store.ofGuild(GUILD)).toEqual(['vitalik.eth']);
    await sleep(350);
    expect(await store.ofUser(ALICE)).toEqual([]);
    expect(await store.ofGuild(GUILD)).toEqual([]);
  });

  it('keeps at most `users` members and `guilds` servers (LRU)', async () => {
    const store = new MemoryRecentLookups({ users: 2, guilds: 1 });
    for (const userId of ['u1', 'u2', 'u3']) {
      await store.remember({ userId, guildId: userId, identity: 'vitalik.eth', private: false });
    }
    expect(await store.ofUser('u1')).toEqual([]);
    expect(await store.ofUser('u3')).toEqual(['vitalik.eth']);
    expect(await store.ofGuild('u2')).toEqual([]);
    expect(await store.ofGuild('u3')).toEqual(['vitalik.eth']);
  });
});

describe('RedisRecentLookups', () => {
  it('writes capped lists under the prefix with a TTL', async () => {
    const prefix = `${root}ttl:`;
    const store = new RedisRecentLookups({ client, prefix, limits: { ttlMs: 60_000 } });
    await store.remember({ userId: ALICE, guildId: GUILD, identity: 'vitalik.eth', private: false });
    expect((await client.keys(`${prefix}*`)).sort()).toEqual([
      `${prefix}recent:guild:${GUILD}`,
      `${prefix}recent:user:${ALICE}`,
    ]);
    const ttl = await client.pttl(`${prefix}recent:user:${ALICE}`);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it('ignores junk in a list', async () => {
    const prefix = `${root}junk:`;
    const store = new RedisRecentLookups({ client, prefix });
    await client.lpush(`${prefix}recent:user:${ALICE}`, 'not json', '{"a":1}', '["x.eth"]', '["ok.eth",""]');
    expect(await store.ofUser(ALICE)).toEqual(['ok.eth']);
  });

  it('with Redis down, fails fast (the caller falls back)', async () => {
    const port = await closedPort();
    const store = new RedisRecentLookups({ url: `redis://127.0.0.1:${port}`, prefix: `${root}down:` });
    const started = performance.now();
    await expect(store.ofUser(ALICE)).rejects.toThrow();
    await expect(
      store.remember({ userId: ALICE, guildId: GUILD, identity: 'vitalik.eth', private: false }),
    ).rejects.toThrow();
    expect(performance.now() - started).toBeLessThan(1_000);
    await store.close();
  });
});
