import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import whois from '../../commands/whois.ts';
import { loadConfig } from '../../src/config.ts';
import type { CommandContext } from '../../src/discord/command.ts';
import { createLogger } from '../../src/log.ts';
import { Web3BioClient } from '../../src/web3bio/client.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';

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
  });
});
