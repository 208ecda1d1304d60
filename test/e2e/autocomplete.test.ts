/**
 * Autocomplete on identity options end to end: the stand-in Discord plays a user typing (an interaction
 * of type 4) and reads the bot's type-8 answer; Web3.bio is never asked while typing.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { ensProfile, nextAddress } from '../../fakes/web3bio/builders.ts';
import {
  ALICE,
  BOB,
  callbackTypes,
  type Harness,
  isEphemeral,
  startHarness,
  visibleMessage,
} from './harness.ts';

/** The values Discord would show for what `userId` typed into `/name`'s `option`. */
async function suggestions(h: Harness, name: string, option: string, typed: string, userId = ALICE) {
  const upstreamBefore = h.upstreamCount();
  const result = await h.typeIn(name, option, typed, { userId });
  expect(callbackTypes(result)).toEqual([8]);
  expect(result.ackMs).toBeLessThan(3_000);
  expect(h.upstreamCount()).toBe(upstreamBefore);
  const choices = result.callbacks[0]?.data?.choices as { name: string; value: string }[];
  expect(choices.length).toBeLessThanOrEqual(25);
  return choices.map((choice) => choice.value);
}

/** Names on the stand-in Web3.bio (so their lookups succeed and are remembered), `stem00.eth` and on. */
function knownNames(h: Harness, stem: string, count: number): string[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `${stem}${String(i).padStart(2, '0')}.eth`;
    h.upstream.world.addProfile(ensProfile(name, nextAddress()));
    return name;
  });
}

/**
 * Alice looks 25 names up publicly in the server (more than her own list keeps, 20); Bob is offered
 * them; she runs /forget-lookups; Bob, typing in the same server, is offered none of them any more.
 */
async function forgetAfter25PublicLookups(h: Harness, stem: string): Promise<void> {
  const names = knownNames(h, stem, 25);
  for (const identity of names) expect(callbackTypes(await h.run('whois', { identity }))).toEqual([4]);
  // The server's list keeps all 25 (her own keeps the last 20: the reply below counts them).
  // Each is remembered after its answer, in the background: wait for the last.
  await expect
    .poll(() => suggestions(h, 'whois', 'identity', stem, BOB))
    .toEqual(expect.arrayContaining(names));
  expect(await suggestions(h, 'avatar', 'identity', `${stem}0`, BOB)).toContain(names[0]);

  const reply = visibleMessage(await h.run('forget-lookups'));
  expect(isEphemeral(reply)).toBe(true);
  expect(reply.content).toContain('Forgot your 20 recent lookups.');
  expect(reply.content).toContain(
    'Took 25 public lookups of yours out of what other members are offered in 1 server.',
  );
  for (const typed of ['', stem, `${stem}0`, `${stem}1`, `${stem}2`]) {
    const offered = await suggestions(h, 'whois', 'identity', typed, BOB);
    expect(offered.filter((value) => names.includes(value))).toEqual([]);
  }
  const own = await suggestions(h, 'whois', 'identity', stem);
  expect(own.filter((value) => names.includes(value))).toEqual([]);
}

describe('autocomplete on identity options', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { USER_COOLDOWN_COMMANDS: '0' } });
  });
  afterAll(() => h.close());

  it('before any lookup, offers the completions of what was typed, for every identity option', async () => {
    expect(await suggestions(h, 'whois', 'identity', 'vitalik')).toEqual([
      'vitalik.eth',
      'vitalik.base.eth',
      'vitalik.linea.eth',
      'vitalik.farcaster',
      'vitalik.lens',
    ]);
    expect(await suggestions(h, 'domain', 'name', 'vitalik.e')).toEqual(['vitalik.eth']);
    for (const command of ['avatar', 'creds', 'wallet']) {
      expect(await suggestions(h, command, 'identity', 'dwr.')).toContain('dwr.farcaster');
    }
    expect(await suggestions(h, 'whois', 'identity', '<@123> **x**')).toEqual([]);
  });

  it('typing a handle (@dwr) offers its Farcaster form, which /whois reads as it reads @dwr itself', async () => {
    for (const command of ['whois', 'avatar', 'creds', 'wallet']) {
      expect(await suggestions(h, command, 'identity', '@dwr')).toEqual(['dwr.farcaster']);
    }
    expect(await suggestions(h, 'whois', 'identity', '@DWR')).toEqual(['dwr.farcaster']);
    expect(await suggestions(h, 'whois', 'identity', '@everyone')).toEqual([]);
    // Pressing enter on the typed handle, or on the offered value, opens the same Farcaster profile
    // (Bob's private lookups: Alice's list, counted below, stays as it was).
    const asBob = { userId: BOB };
    const typed = visibleMessage(await h.run('whois', { identity: '@dwr', private: true }, asBob));
    const chosen = visibleMessage(await h.run('whois', { identity: 'dwr.farcaster', private: true }, asBob));
    expect(typed.embeds[0]?.title).toBeTruthy();
    expect(typed.embeds[0]?.title).toBe(chosen.embeds[0]?.title);
    expect(JSON.stringify(typed.embeds[0])).toContain('Farcaster');
  });

  it('after Alice looks vitalik.eth up, typing "vit" offers it first, to her and to Bob in the server', async () => {
    const lookup = await h.run('whois', { identity: 'Vitalik.eth' });
    expect(callbackTypes(lookup)).toEqual([4]);
    const upstreamBefore = h.upstreamCount();
    const alice = await suggestions(h, 'avatar', 'identity', 'vit');
    expect(alice[0]).toBe('vitalik.eth');
    expect(alice).toEqual([...new Set(alice)]);
    expect((await suggestions(h, 'whois', 'identity', 'vit', BOB))[0]).toBe('vitalik.eth');
    expect(h.upstream.requests.length).toBe(upstreamBefore);
  });

  it('a private lookup is suggested to the one who made it, never to others', async () => {
    const lookup = await h.run('avatar', { identity: 'sujiyan.eth', private: true });
    expect(isEphemeral(visibleMessage(lookup))).toBe(true);
    expect((await suggestions(h, 'whois', 'identity', 'su'))[0]).toBe('sujiyan.eth');
    const bob = await suggestions(h, 'whois', 'identity', 'su', BOB);
    expect(bob).not.toContain('sujiyan.eth');
  });

  it('a failed lookup is not remembered', async () => {
    await h.run('whois', { identity: 'no-such-name-at-all.eth' });
    expect(await suggestions(h, 'whois', 'identity', 'no-such', BOB)).not.toContain(
      'no-such-name-at-all.eth',
    );
    expect(await suggestions(h, 'whois', 'identity', '')).not.toContain('no-such-name-at-all.eth');
  });

  it('/forget-lookups clears Alice’s list and her public lookups in the server, privately', async () => {
    const result = await h.run('forget-lookups');
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    expect(message.content).toMatch(/Forgot your 2 recent lookups/);
    expect(await suggestions(h, 'whois', 'identity', '')).toEqual([]);
    expect(await suggestions(h, 'whois', 'identity', 'vit', BOB)).not.toContain('vitalik.eth');
    const again = visibleMessage(await h.run('forget-lookups'));
    expect(again.content).toMatch(/no recent lookups/);
  });

  it('/forget-lookups after 25 public lookups: none is offered to another member any more', async () => {
    await forgetAfter25PublicLookups(h, 'mem');
  });
});

describe('a server that reaches the bot only through a member’s own install', () => {
  let h: Harness;
  let uninstalled: FakeGuild;
  beforeAll(async () => {
    h = await startHarness({ env: { USER_COOLDOWN_COMMANDS: '0' } });
    uninstalled = h.discord.addGuild({ name: 'Never installed the bot', botInstalled: false });
    h.discord.addMember(uninstalled.id, { id: ALICE, username: 'alice' });
    h.discord.addMember(uninstalled.id, { id: BOB, username: 'bob' });
  });
  afterAll(() => h.close());

  it('a lookup made there is never offered to that server’s members, nor in the installed server', async () => {
    const [name = ''] = knownNames(h, 'outside', 1);
    const lookup = await h.discord.runCommand({
      name: 'whois',
      userId: ALICE,
      guildId: uninstalled.id,
      options: [{ type: 3, name: 'identity', value: name }],
    });
    expect(callbackTypes(lookup)).toEqual([4]);
    expect(isEphemeral(visibleMessage(lookup))).toBe(false);
    const typed = async (userId: string, guildId: string | null) => {
      const result = await h.discord.typeInOption({
        name: 'whois',
        focused: 'identity',
        value: 'outside',
        userId,
        guildId,
        options: [],
      });
      expect(callbackTypes(result)).toEqual([8]);
      const choices = result.callbacks[0]?.data?.choices as { value: string }[] | undefined;
      if (!choices) throw new Error('no autocomplete answer');
      return choices.map((c) => c.value);
    };
    // Hers alone: she is offered it wherever she types.
    expect(await typed(ALICE, uninstalled.id)).toContain(name);
    expect(await typed(ALICE, null)).toContain(name);
    expect(await typed(BOB, uninstalled.id)).not.toContain(name);
    expect(await typed(BOB, h.guild.id)).not.toContain(name);
    // A public lookup in the server that installed the bot is offered to Bob there, as before.
    const [shared = ''] = knownNames(h, 'outsidein', 1);
    await h.run('whois', { identity: shared });
    expect(await typed(BOB, h.guild.id)).toContain(shared);
    expect(await typed(BOB, uninstalled.id)).not.toContain(shared);
  });
});

describe('autocomplete with REDIS_URL: the recent lookups live in Redis', () => {
  const prefix = `web3bio-test:${randomUUID()}:`;
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      env: { USER_COOLDOWN_COMMANDS: '0', REDIS_URL, REDIS_PREFIX: prefix },
    });
  });
  afterAll(async () => {
    await h.close();
    await deleteKeys(client, `${prefix}*`);
    await client.quit();
  });

  it('a lookup is written to the member’s and the server’s lists in Redis and suggested from there', async () => {
    await h.run('whois', { identity: 'vitalik.eth' });
    await h.run('avatar', { identity: 'sujiyan.eth', private: true });
    await expect
      .poll(() => client.zrange(`${prefix}recent:guild-lookups:${h.guild.id}`, '0', '-1'))
      .toEqual([JSON.stringify(['vitalik.eth', ALICE])]);
    // Both are remembered after their answers, in the background: wait for the second too.
    await expect
      .poll(() => client.lrange(`${prefix}recent:user:${ALICE}`, 0, -1))
      .toEqual([JSON.stringify(['sujiyan.eth', '']), JSON.stringify(['vitalik.eth', h.guild.id])]);
    expect((await suggestions(h, 'whois', 'identity', 'vit', BOB))[0]).toBe('vitalik.eth');
    expect(await suggestions(h, 'whois', 'identity', 's', BOB)).not.toContain('sujiyan.eth');
    expect(await suggestions(h, 'whois', 'identity', '')).toEqual(['sujiyan.eth', 'vitalik.eth']);
    await h.run('forget-lookups');
    expect(await client.exists(`${prefix}recent:user:${ALICE}`)).toBe(0);
    expect(await client.zrange(`${prefix}recent:guild-lookups:${h.guild.id}`, '0', '-1')).toEqual([]);
  });

  it('/forget-lookups after 25 public lookups: none is offered to another member any more', async () => {
    await forgetAfter25PublicLookups(h, 'red');
    expect(await client.keys(`${prefix}recent:*${ALICE}`)).toEqual([]);
  });
});
