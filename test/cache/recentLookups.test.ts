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

  it('lookups remembered at once (not one after another) end as if written in turn', async () => {
    const store = create({});
    await Promise.all([
      look(store, ALICE, 'vitalik.eth'),
      look(store, ALICE, 'dwr.farcaster'),
      look(store, BOB, 'stani.lens'),
      look(store, ALICE, 'vitalik.eth'),
      look(store, ALICE, 'secret.eth', { private: true }),
    ]);
    expect(await store.ofUser(ALICE)).toEqual(['secret.eth', 'vitalik.eth', 'dwr.farcaster']);
    expect(await store.ofGuild(GUILD)).toEqual(['vitalik.eth', 'stani.lens', 'dwr.farcaster']);
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

  it('forgetUser clears the member’s list and their public lookups in every server, not others’', async () => {
    const store = create({});
    await look(store, ALICE, 'vitalik.eth');
    await look(store, ALICE, 'secret.eth', { private: true });
    await store.remember({ userId: ALICE, guildId: OTHER_GUILD, identity: 'there.eth', private: false });
    await look(store, BOB, 'vitalik.eth');
    await look(store, BOB, 'stani.lens');
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 3, publicLookups: 2, servers: 2 });
    expect(await store.ofUser(ALICE)).toEqual([]);
    // Bob looked vitalik.eth up too: his entry stays.
    expect(await store.ofGuild(GUILD)).toEqual(['stani.lens', 'vitalik.eth']);
    expect(await store.ofGuild(OTHER_GUILD)).toEqual([]);
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 0, publicLookups: 0, servers: 0 });
    await store.close();
  });

  it('forgetUser after 25+ public lookups across servers: none of hers left in any server list, others’ untouched', async () => {
    // The default caps: 20 per member, 50 per server; her oldest public lookups are no longer in her own list.
    const store = create({});
    const guilds = ['g-a', 'g-b', 'g-c'];
    await store.remember({ userId: BOB, guildId: 'g-a', identity: 'bob-first.eth', private: false });
    for (let i = 0; i < 30; i += 1) {
      const guildId = guilds[i % guilds.length] ?? 'g-a';
      await store.remember({ userId: ALICE, guildId, identity: `alice${i}.eth`, private: false });
      if (i % 10 === 0)
        await store.remember({ userId: BOB, guildId, identity: `bob${i}.eth`, private: false });
    }
    await store.remember({ userId: ALICE, guildId: null, identity: 'in-a-dm.eth', private: false });
    expect(await store.ofUser(ALICE)).toHaveLength(20);
    // Her first public lookup fell off her own list but is still offered in its server.
    expect(await store.ofUser(ALICE)).not.toContain('alice0.eth');
    expect(await store.ofGuild('g-a')).toContain('alice0.eth');
    const bobsBefore = await Promise.all(guilds.map((g) => store.ofGuild(g)));

    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 20, publicLookups: 30, servers: 3 });
    expect(await store.ofUser(ALICE)).toEqual([]);
    for (const [i, guildId] of guilds.entries()) {
      const left = await store.ofGuild(guildId);
      expect(left.filter((name) => name.startsWith('alice'))).toEqual([]);
      expect(left).toEqual(bobsBefore[i]?.filter((name) => name.startsWith('bob')));
      expect(left.length).toBeGreaterThan(0);
    }
    expect(await store.ofUser(BOB)).toEqual(['bob20.eth', 'bob10.eth', 'bob0.eth', 'bob-first.eth']);
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 0, publicLookups: 0, servers: 0 });
    await store.close();
  });

  it('forgetUser reaches servers her own (capped) list no longer names', async () => {
    const store = create({ perUser: 2, perGuild: 3 });
    await store.remember({ userId: ALICE, guildId: 'quiet', identity: 'once.eth', private: false });
    for (let i = 0; i < 5; i += 1) await look(store, ALICE, `busy${i}.eth`);
    // Pushed out of the busy server's list by the cap: nothing of that is offered any more.
    expect(await store.ofGuild(GUILD)).toEqual(['busy4.eth', 'busy3.eth', 'busy2.eth']);
    expect(await store.ofUser(ALICE)).toEqual(['busy4.eth', 'busy3.eth']);
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 2, publicLookups: 4, servers: 2 });
    expect(await store.ofGuild('quiet')).toEqual([]);
    expect(await store.ofGuild(GUILD)).toEqual([]);
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
    const keys = [
      `${prefix}recent:guild-lookups:${GUILD}`,
      `${prefix}recent:user-guilds:${ALICE}`,
      `${prefix}recent:user:${ALICE}`,
    ];
    expect((await client.keys(`${prefix}*`)).sort()).toEqual(keys);
    for (const key of keys) {
      const ttl = await client.pttl(key);
      expect(ttl).toBeGreaterThan(50_000);
      expect(ttl).toBeLessThanOrEqual(60_000);
    }
  });

  it('a server’s entry older than ttlMs is not offered, though newer lookups keep the list alive', async () => {
    let now = 1_000_000;
    const prefix = `${root}age:`;
    const store = new RedisRecentLookups({ client, prefix, limits: { ttlMs: 10_000 }, now: () => now });
    await store.remember({ userId: ALICE, guildId: GUILD, identity: 'old.eth', private: false });
    now += 6_000;
    await store.remember({ userId: BOB, guildId: GUILD, identity: 'new.eth', private: false });
    expect(await store.ofGuild(GUILD)).toEqual(['new.eth', 'old.eth']);
    now += 6_000;
    // 12 s after hers, 6 s after his: hers is past ttlMs, and so is the set naming her servers.
    expect(await store.ofGuild(GUILD)).toEqual(['new.eth']);
    await store.remember({ userId: BOB, guildId: GUILD, identity: 'newer.eth', private: false });
    expect(await client.zcard(`${prefix}recent:guild-lookups:${GUILD}`)).toBe(2);
  });

  it('forgetUser is one script: her list, her set and every server’s entries of hers go together', async () => {
    const prefix = `${root}atomic:`;
    const store = new RedisRecentLookups({ client, prefix });
    await store.remember({ userId: ALICE, guildId: GUILD, identity: 'vitalik.eth', private: false });
    await store.remember({ userId: BOB, guildId: GUILD, identity: 'vitalik.eth', private: false });
    const removals: { command: string; source: string }[] = [];
    const monitor = await client.duplicate().monitor();
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      const [command = '', key = ''] = args.map(String);
      if (['del', 'zrem', 'srem', 'lrem'].includes(command.toLowerCase()) && key.startsWith(prefix))
        removals.push({ command: command.toLowerCase(), source });
    });
    expect(await store.forgetUser(ALICE)).toEqual({ lookups: 1, publicLookups: 1, servers: 1 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    monitor.disconnect();
    expect(removals.map((r) => r.command).sort()).toEqual(['del', 'srem', 'zrem']);
    // MONITOR names a script's own commands with the source `lua`.
    expect(removals.every((r) => r.source === 'lua')).toBe(true);
    expect(await store.ofGuild(GUILD)).toEqual(['vitalik.eth']);
    expect(await client.exists(`${prefix}recent:user-guilds:${ALICE}`)).toBe(0);
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

describe('RedisRecentLookups batches its writes', () => {
  it('writes the lookups remembered together in one script call, each the same lookup once', async () => {
    const own = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    const store = new RedisRecentLookups({ client: own, prefix: `${root}batch:` });
    const calls: number[] = [];
    const named = own as unknown as { recentLookupsRemember: (...args: unknown[]) => Promise<number> };
    const write = named.recentLookupsRemember.bind(own);
    named.recentLookupsRemember = (...args) => {
      calls.push(Number(args[0]));
      return write(...args);
    };
    const names = Array.from({ length: 8 }, (_, i) => `batch${i}.eth`);
    await Promise.all(
      [...names, ...names].map((identity) =>
        store.remember({ userId: ALICE, guildId: GUILD, identity, private: false }),
      ),
    );
    // One call: 8 distinct public lookups, 3 keys each (the repeats written once).
    expect(calls).toEqual([24]);
    expect(await store.ofUser(ALICE)).toEqual([...names].reverse());
    await store.remember({ userId: ALICE, guildId: GUILD, identity: 'later.eth', private: false });
    expect(calls).toEqual([24, 3]);
    await own.quit();
  });
});
