import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import whois, { WHOIS_MESSAGES_MAX, whoisMessageCount } from '../../commands/whois.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import type { CacheStore, StoredEntry } from '../../src/cache/types.ts';
import type { CommandContext } from '../../src/discord/command.ts';
import { createLogger } from '../../src/ops/log.ts';
import { createClientCacheOptions, Web3BioClient } from '../../src/web3bio/client.ts';

let fake: FakeWeb3Bio;
let client: Web3BioClient;
let ctx: CommandContext;

beforeAll(async () => {
  fake = await startFakeWeb3Bio();
  client = new Web3BioClient({ baseUrl: fake.url, rateLimit: null });
  const config = loadConfig({
    DISCORD_TOKEN: 'token',
    DISCORD_APPLICATION_ID: '100000000000000001',
    WEB3BIO_API_URL: fake.url,
  });
  const logger = createLogger({ level: 'silent', secrets: [], destination: { write: () => {} } });
  ctx = {
    deps: { config, logger, web3bio: client },
    render: { locale: 'en-US', nowSec: 1_780_000_000, ipfsGateway: 'https://ipfs.io' },
    userId: '300000000000000001',
    guildId: null,
  };
});

afterAll(async () => {
  await client.close();
  await fake.close();
});

describe('/whois on cache hits', () => {
  it('answers a repeated lookup with the message it built, universal and per platform', async () => {
    for (const options of [{ identity: 'vitalik.eth' }, { identity: 'vitalik.eth', platform: 'ens' }]) {
      const first = await whois.answer(options, ctx);
      const second = await whois.answer(options, ctx);
      expect(second).toBe(first);
      expect(Object.isFrozen(first.embeds[0])).toBe(true);
      expect(first.embeds[0]?.title).toBe('vitalik.eth');
    }
    expect(fake.requests).toHaveLength(2);
  });

  it('still answers each platform and selection with its own message', async () => {
    const ens = await whois.answer({ identity: 'vitalik.eth', platform: 'ens' }, ctx);
    const lens = await whois.answer({ identity: 'vitalik.lens', platform: 'lens' }, ctx);
    expect(ens.embeds[0]?.author?.name).toBe('ENS · vitalik.eth');
    expect(lens.embeds[0]?.author?.name).toBe('Lens · vitalik.lens');
    const select = whois.components.select;
    const second = await select(['', 'vitalik.eth'], ['1'], ctx);
    expect(second.embeds[0]?.footer?.text).toContain('profile 2 of');
    expect(await select(['', 'vitalik.eth'], ['1'], ctx)).toBe(second);
    expect(await select(['', 'vitalik.eth'], ['0'], ctx)).not.toEqual(second);
    const german = await whois.answer(
      { identity: 'vitalik.eth' },
      { ...ctx, render: { ...ctx.render, locale: 'de' } },
    );
    expect(german.embeds[0]?.fields?.find((f) => f.name === 'Follower')?.value).toBe('5.360');
  });

  it('reuses by value: entries read back as new objects (as from Redis) hit; a refetch renders anew', async () => {
    // A store that hands out a fresh copy on every read, as Redis does after JSON.
    const entries = new Map<string, string>();
    const store: CacheStore = {
      get: async (key) => {
        const text = entries.get(key);
        return text === undefined ? undefined : (JSON.parse(text) as StoredEntry);
      },
      set: async (key, entry) => void entries.set(key, JSON.stringify(entry)),
      delete: async (key) => void entries.delete(key),
    };
    const clock = { now: 2_000_000_000_000 };
    const cache = createLookupCache({ store, now: () => clock.now, ...createClientCacheOptions() });
    const shared = new Web3BioClient({ baseUrl: fake.url, rateLimit: null, cache });
    try {
      const own = { ...ctx, deps: { ...ctx.deps, web3bio: shared } };
      const first = await whois.answer({ identity: 'dwr.eth' }, own);
      const data = [await shared.getProfiles('dwr.eth'), await shared.getProfiles('dwr.eth')];
      expect(data[0]?.data).not.toBe(data[1]?.data);
      expect(await whois.answer({ identity: 'dwr.eth' }, own)).toBe(first);
      expect(whoisMessageCount()).toBeLessThanOrEqual(WHOIS_MESSAGES_MAX);

      clock.now += 3 * 3_600_000;
      const refetched = await whois.answer({ identity: 'dwr.eth' }, own);
      expect(refetched).not.toBe(first);
      expect(refetched).toEqual(first);
    } finally {
      await shared.close();
    }
  });
});
