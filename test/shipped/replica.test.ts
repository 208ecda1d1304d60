/**
 * The bundle `npm start` runs, as a lone web replica without gating (INTERACTIONS=http, PROCESS_ROLE=all:
 * no gateway connection at all), answering the stand-in Discord's signed deliveries: a /whois, a member's
 * language read from the catalogs shipped beside the bundle, numbers in it from the recorded symbols, a
 * forged delivery refused, a stalled body refused once DELIVERY_BODY_TIMEOUT_MS passes.
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { ALICE, BOB, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import { freePort, runNode } from '../e2e/processes.ts';
import { postHead, RawRequest, shapedSignature } from '../e2e/rawRequests.ts';
import { npmStart, READY, replicaEnv, type ShippedProcess, shippedMain, startShipped } from './shippedBot.ts';

describe('npm start: the bundle in dist/, as a web replica', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let bot: ShippedProcess;
  let endpoint: string;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    const guild = discord.addGuild({ name: 'Bundle Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    const port = await freePort();
    bot = await startShipped(
      {
        ...replicaEnv(discord, upstream, port),
        LOG_LEVEL: 'info',
        DELIVERY_BODY_TIMEOUT_MS: '1000',
      },
      READY.replica,
    );
    endpoint = `http://127.0.0.1:${port}/interactions`;
    discord.useInteractionsEndpoint(endpoint);
  }, 60_000);

  afterAll(async () => {
    await bot?.stop();
    await Promise.all([discord?.close(), upstream?.close()]);
  });

  it('answers a signed /whois in the response body', async () => {
    const result = await discord.runCommand({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    expect(visibleMessage(result).embeds[0]?.author?.name).toContain('vitalik.eth');
    await bot.waitForLog((line) => line.msg === 'interaction answered');
  });

  it('answers a German member in German, from the catalogs beside the bundle', async () => {
    const ask = (locale: string) =>
      discord.runCommand({
        name: 'whois',
        userId: ALICE,
        locale,
        options: toCommandOptions({ identity: 'nobody-here-at-all.eth' }),
      });
    const english = JSON.stringify(visibleMessage(await ask('en-US')));
    const german = JSON.stringify(visibleMessage(await ask('de')));
    expect(german).not.toBe(english);
    expect(german).toContain('Nichts gefunden');
  });

  it('writes follower counts in the member’s locale from the symbols recorded in the bundle', async () => {
    // 1e21 is beyond the recorded symbols' reach (its shortest form is an exponent): Intl.NumberFormat's.
    upstream.world.addProfile(
      rawProfile('ens', 'counts.eth', '0x00000000000000000000000000000000000c0de5', {
        social: { uid: null, follower: 12_345_678, following: 1e21 },
      }),
    );
    const counts = async (locale: string) => {
      const result = await discord.runCommand({
        name: 'whois',
        userId: BOB, // ALICE's lookups above count toward her cooldown (5 in 30 s)
        locale,
        options: toCommandOptions({ identity: 'counts.eth' }),
      });
      return (visibleMessage(result).embeds[0]?.fields ?? []).map((field) => field.value);
    };
    const expected = {
      de: '12.345.678',
      fr: '12\u202f345\u202f678',
      hi: '1,23,45,678',
      'es-ES': '12.345.678',
    };
    for (const [locale, followers] of Object.entries(expected)) {
      const values = await counts(locale);
      expect(values).toContain(followers);
      expect(values).toContain(new Intl.NumberFormat(locale).format(1e21));
    }
  });

  it('refuses a forged delivery with 401', async () => {
    const payload = discord.buildCommandInteraction({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    const answer = await discord.deliverInteraction({ payload, tamper: 'forged', url: endpoint });
    expect(answer.status).toBe(401);
  });

  it('refuses a body that does not come within DELIVERY_BODY_TIMEOUT_MS with 408, counted; Discord is answered meanwhile', async () => {
    const port = Number(new URL(endpoint).port);
    const stalled = new RawRequest(port, postHead(1_000, shapedSignature()), '127.0.0.2');
    const result = await discord.runCommand({
      name: 'whois',
      userId: BOB,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    expect(visibleMessage(result).embeds[0]?.author?.name).toContain('vitalik.eth');
    const answer = await stalled.answerWithin(5_000);
    stalled.close();
    expect(answer?.status).toBe(408);
    await bot.waitForLog((line) => line.refusal === 'body_timeout' && line.client === '127.0.0.2');
  });

  it('keeps the bot token out of its logs, a refused delivery and its answers included', async () => {
    // The child's lines arrive through a pipe: wait for the refusal's before reading everything.
    await bot.waitForLog((line) => line.msg === 'interaction delivery refused');
    const { stdout, stderr } = bot.output();
    for (const text of [stdout, stderr]) {
      expect(text).not.toContain(discord.token);
      expect(text).not.toContain(JSON.stringify(discord.token).slice(1, -1));
    }
  });
});

describe('npm start -- --help', () => {
  it('loads every part each kind of process runs from the bundle (the REST proxy too), and lists the configuration keys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shipped-help-'));
    try {
      const help = runNode(shippedMain(), {}, dir, npmStart().flags, ['--help']);
      expect(await help.exited).toBe(0);
      const { stdout, stderr } = help.output();
      expect(stderr).toBe('');
      expect(stdout).toContain('Usage: npm start');
      for (const key of [
        'DISCORD_TOKEN',
        'REDIS_URL',
        'DATABASE_URL',
        'SHARD_COUNT',
        'PROCESS_ROLE',
        'REST_PROXY_PORT',
      ])
        expect(stdout).toContain(`\n  ${key}\n`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
