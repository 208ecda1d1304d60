/**
 * The lookup bot end to end: each interaction goes in over the stand-in gateway to the real discord.js
 * client and the bot, and the answer is read where it comes out, on the stand-in Discord REST.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import type { FakeMessage, InteractionResult } from '../../fakes/discord/server.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { EDGE } from '../../fakes/web3bio/edgeCases.ts';
import { readFixture } from '../../fakes/web3bio/seed.ts';
import type { Command } from '../../src/discord/command.ts';
import type { MessagePayload } from '../../src/render/types.ts';
import { MAX_IDENTITY_LENGTH, parseIdentity } from '../../src/web3bio/identity.ts';
import { assertWithinDiscordLimits, visibleText } from '../render/limits.ts';
import {
  ALICE,
  BOB,
  callbackTypes,
  type Harness,
  isEphemeral,
  messageBodies,
  startHarness,
  visibleMessage,
} from './harness.ts';

const VITALIK_ADDRESS = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';

function firstEmbed(message: FakeMessage): APIEmbed {
  const embed = message.embeds[0];
  if (!embed) throw new Error(`message ${message.id} has no embed`);
  return embed;
}

function fieldValue(embed: APIEmbed, name: string): string | undefined {
  return embed.fields?.find((field) => field.name === name)?.value;
}

/** The components of the message's first action row, as plain JSON. */
function firstRow(message: FakeMessage): unknown[] {
  const row = message.components?.[0] as { components?: unknown[] } | undefined;
  return row?.components ?? [];
}

interface SelectShape {
  custom_id: string;
  options: { label: string; value: string; default?: boolean }[];
}

function selectMenu(message: FakeMessage): SelectShape {
  const component = firstRow(message)[0] as SelectShape | undefined;
  if (!component?.options) throw new Error(`message ${message.id} has no select menu`);
  return component;
}

interface ButtonShape {
  custom_id: string;
  label: string;
  disabled?: boolean;
}

function buttons(message: FakeMessage): ButtonShape[] {
  return firstRow(message) as ButtonShape[];
}

/** Every message body the bot sent for the interaction meets Discord's limits and pings nobody. */
function expectSafeMessages(h: Harness, result: InteractionResult): void {
  const bodies = messageBodies(h.discord, result.interactionId);
  expect(bodies.length).toBeGreaterThan(0);
  for (const body of bodies) {
    expect(body.allowed_mentions).toEqual({ parse: [] });
    assertWithinDiscordLimits({ components: [], embeds: [], ...body } as unknown as MessagePayload);
  }
  const message = visibleMessage(result);
  expect(message.mentions).toEqual([]);
  expect(message.mention_roles).toEqual([]);
  expect(message.mention_everyone).toBe(false);
}

/** The error embed a user sees: private, one embed, the expected title. */
function expectErrorReply(result: InteractionResult, title: string): APIEmbed {
  const message = visibleMessage(result);
  expect(isEphemeral(message)).toBe(true);
  expect(message.embeds).toHaveLength(1);
  const embed = firstEmbed(message);
  expect(embed.title).toBe(title);
  return embed;
}

describe('lookup commands', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { USER_COOLDOWN_COMMANDS: '0' } });
  });
  afterAll(() => h.close());
  afterEach(() => {
    h.upstream.clearFaults();
    h.upstream.setLatency(0);
  });

  it('answers the first interaction after start directly, well inside the deferral window', async () => {
    // startBot warmed ENS normalisation up: its first use would block the event loop for 0.3-2 s.
    const started = performance.now();
    parseIdentity('warm-up-check.eth');
    expect(performance.now() - started).toBeLessThan(100);
    const result = await h.run('whois', { identity: 'sujiyan.eth' });
    expect(callbackTypes(result)).toEqual([4]);
    expect(result.ackMs).toBeLessThan(h.config.DEFER_AFTER_MS);
  });

  it('/whois vitalik.eth: the best match as an embed, one select option per platform', async () => {
    const result = await h.run('whois', { identity: 'vitalik.eth' });
    expect(callbackTypes(result)).toEqual([4]);
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(false);
    const embed = firstEmbed(message);
    expect(embed.author?.name).toBe('ENS · vitalik.eth');
    expect(embed.title).toBe('vitalik.eth');
    expect(embed.url).toBe('https://web3.bio/vitalik.eth');
    expect(embed.color).toBe(0x5298ff);
    expect(embed.thumbnail?.url).toBe('https://euc.li/vitalik.eth');
    expect(embed.image?.url).toMatch(/^https:\/\//);
    expect(fieldValue(embed, 'Address')).toBe(`\`${VITALIK_ADDRESS}\``);
    expect(fieldValue(embed, 'Followers')).toMatch(/^\d{1,3}(,\d{3})*$/);
    expect(fieldValue(embed, 'Content')).toContain('https://ipfs.io/ipfs/');
    expect(fieldValue(embed, 'Links')).toContain('**GitHub**: [vbuterin](https://github.com/vbuterin)');
    expect(embed.footer?.text).toBe('Web3.bio · profile 1 of 3');

    const select = selectMenu(message);
    expect(select.options.map((o) => o.label)).toEqual([
      'ENS: vitalik.eth',
      'Farcaster: vitalik.eth',
      'Lens: vitalik.lens',
    ]);
    expect(select.options.map((o) => o.default === true)).toEqual([true, false, false]);
    expectSafeMessages(h, result);
    expect(h.upstream.requests.at(-1)?.path).toBe('/profile/vitalik.eth');
  });

  it('formats numbers in the locale of the interaction', async () => {
    const english = firstEmbed(visibleMessage(await h.run('whois', { identity: 'vitalik.eth' })));
    const german = firstEmbed(
      visibleMessage(await h.run('whois', { identity: 'vitalik.eth' }, { locale: 'de' })),
    );
    expect(fieldValue(english, 'Followers')).toBe('5,360');
    expect(fieldValue(german, 'Follower')).toBe('5.360');
  });

  it('picking another platform in the select updates the message in place (type 7)', async () => {
    const reply = visibleMessage(await h.run('whois', { identity: 'vitalik.eth' }));
    const click = await h.click(reply, selectMenu(reply).custom_id, ['1']);
    expect(callbackTypes(click)).toEqual([7]);
    const updated = visibleMessage(click);
    expect(updated.id).toBe(reply.id);
    expect(h.discord.state.messages.get(reply.id)?.embeds[0]?.author?.name).toBe('Farcaster · vitalik.eth');
    expect(firstEmbed(updated).title).toBe('Vitalik Buterin');
    expect(firstEmbed(updated).footer?.text).toBe('Web3.bio · profile 2 of 3');
    expect(selectMenu(updated).options.find((o) => o.default)?.value).toBe('1');
    expectSafeMessages(h, click);
  });

  it('only the invoker can use the select: another user gets a private note, the message stays', async () => {
    const reply = visibleMessage(await h.run('whois', { identity: 'vitalik.eth' }));
    const before = structuredClone(h.discord.state.messages.get(reply.id));
    const click = await h.click(reply, selectMenu(reply).custom_id, ['2'], { userId: BOB });
    expect(callbackTypes(click)).toEqual([4]);
    const note = visibleMessage(click);
    expect(note.id).not.toBe(reply.id);
    expect(isEphemeral(note)).toBe(true);
    expect(note.content).toContain('Only the person who ran this command');
    expect(h.discord.state.messages.get(reply.id)).toEqual(before);
  });

  it('an identity of the maximum length switches platforms like any other', async () => {
    const long = `${'name'.repeat(63)}.eth`;
    expect(long).toHaveLength(MAX_IDENTITY_LENGTH);
    const address = `0x${'10e'.padStart(40, '0')}`;
    h.upstream.world.addProfile(rawProfile('ens', long, address, { displayName: 'Long ENS' }));
    h.upstream.world.addProfile(rawProfile('farcaster', 'longname', address, { displayName: 'Long FC' }));
    const reply = visibleMessage(await h.run('whois', { identity: long }));
    const select = selectMenu(reply);
    expect(select.custom_id.length).toBeLessThanOrEqual(100);
    expect(select.options).toHaveLength(2);
    const click = await h.click(reply, select.custom_id, ['1']);
    expect(callbackTypes(click)).toEqual([7]);
    expect(firstEmbed(visibleMessage(click)).title).toBe('Long FC');
    expect(firstEmbed(visibleMessage(click)).footer?.text).toBe('Web3.bio · profile 2 of 2');
    expectSafeMessages(h, click);
  });

  it('a menu whose kept identity is gone (sent before a restart) says the controls expired, privately', async () => {
    const reply = visibleMessage(await h.run('whois', { identity: 'vitalik.eth' }));
    // As Discord would hold a message the previous process sent: its menu names a kept arg this one lacks.
    const gone = `whois|select||~${'A'.repeat(22)}`;
    const stored = h.discord.state.messages.get(reply.id);
    const select = (stored?.components?.[0] as { components?: { custom_id?: string }[] } | undefined)
      ?.components?.[0];
    if (!stored || !select) throw new Error('no stored select');
    select.custom_id = gone;
    const before = structuredClone(stored);
    const click = await h.click(stored, gone, ['1']);
    expect(callbackTypes(click)).toEqual([4]);
    const note = visibleMessage(click);
    expect(isEphemeral(note)).toBe(true);
    expect(note.content).toBe('These controls have expired. Run `/whois` again.');
    expect(h.discord.state.messages.get(reply.id)).toEqual(before);
  });

  it('/whois with platform: shows that platform only, without a select', async () => {
    const result = await h.run('whois', { identity: 'dwr.eth', platform: 'farcaster' });
    const message = visibleMessage(result);
    expect(firstEmbed(message).author?.name).toBe('Farcaster · dwr.eth');
    expect(firstEmbed(message).color).toBe(0x8a63d2);
    expect(message.components).toEqual([]);
    expect(h.upstream.requests.at(-1)?.path).toBe('/profile/farcaster/dwr.eth');
  });

  it('/whois many.eth: a select for 11 platforms; the last one can be picked', async () => {
    const reply = visibleMessage(await h.run('whois', { identity: EDGE.many }));
    const select = selectMenu(reply);
    expect(select.options).toHaveLength(11);
    expect(new Set(select.options.map((o) => o.value)).size).toBe(11);
    expect(firstEmbed(reply).footer?.text).toBe('Web3.bio · profile 1 of 11');
    const click = await h.click(reply, select.custom_id, ['10']);
    expect(callbackTypes(click)).toEqual([7]);
    expect(firstEmbed(visibleMessage(click)).footer?.text).toBe('Web3.bio · profile 11 of 11');
  });

  it('/whois hostile.eth: no pings, no script links, every limit respected', async () => {
    const result = await h.run('whois', { identity: EDGE.hostile });
    expect(callbackTypes(result)).toEqual([4]);
    expectSafeMessages(h, result);
    const message = visibleMessage(result);
    const embed = firstEmbed(message);
    expect(embed.description?.length).toBeLessThanOrEqual(4096);
    expect(embed.thumbnail?.url).toMatch(/^https:\/\/ipfs\.io\/ipfs\/bafybeihostileavatar/);
    // javascript:, data:, vbscript:, ftp: and nostr: links appear as text at most, never as link targets.
    const urls = JSON.stringify(message).match(/\]\([^)]*\)|"url":"[^"]*"/g) ?? [];
    for (const url of urls) expect(url).toMatch(/^(\]\(|"url":")https?:\/\//);
    expect(JSON.stringify(message)).not.toMatch(/(?<!\\)\]\((javascript|data|vbscript):/i);
    expect(visibleText(message as unknown as MessagePayload)).not.toContain('@everyone');
  });

  it('/avatar: a large image and its link', async () => {
    const result = await h.run('avatar', { identity: 'vitalik.eth' });
    const embed = firstEmbed(visibleMessage(result));
    expect(embed.title).toBe('Avatar of vitalik.eth');
    expect(embed.image?.url).toBe('https://euc.li/vitalik.eth');
    expect(embed.description).toBe('[Open the image at full size](https://euc.li/vitalik.eth)');
    expectSafeMessages(h, result);
  });

  it('/avatar noavatar.eth: a clear line, no image', async () => {
    const embed = firstEmbed(visibleMessage(await h.run('avatar', { identity: EDGE.noAvatar })));
    expect(embed.description).toBe('noavatar.eth has no avatar set.');
    expect(embed.image).toBeUndefined();
  });

  it.each([
    {
      identity: EDGE.human,
      verdict: '✅ **Likely human**',
      counts: 'Human: 1 · Risky: 0 · Spam: 0',
      color: 0x57f287,
    },
    {
      identity: EDGE.spammer,
      verdict: '⛔ **Spam**',
      counts: 'Human: 0 · Risky: 1 · Spam: 1',
      color: 0xed4245,
    },
    {
      identity: EDGE.expired,
      verdict: '➖ **No signals**',
      counts: 'Human: 0 · Risky: 0 · Spam: 0 · Expired, not counted: 1',
      color: 0x99aab5,
    },
  ])(
    '/creds $identity: the verdict at a glance, then each credential',
    async ({ identity, verdict, counts, color }) => {
      const result = await h.run('creds', { identity });
      const embed = firstEmbed(visibleMessage(result));
      expect(embed.title).toBe(`Credentials · ${identity}`);
      expect(embed.description?.split('\n')[0]).toMatch(new RegExp(`^${escapeRegExp(verdict)}`));
      expect(embed.description?.split('\n')[1]).toBe(counts);
      expect(embed.color).toBe(color);
      expect(embed.fields?.length).toBeGreaterThan(0);
      for (const field of embed.fields ?? []) expect(field.value).toMatch(/<t:\d+:R>/);
      expectSafeMessages(h, result);
    },
  );

  it('/creds marks an expired credential as expired and a spam score as a score', async () => {
    const expired = firstEmbed(visibleMessage(await h.run('creds', { identity: EDGE.expired })));
    expect(expired.fields?.[0]?.name).toBe('⌛ Galxe KYC Verified (expired)');
    expect(expired.fields?.[0]?.value).toMatch(/\*\*Expired\*\* <t:\d+:R>/);
    const spam = firstEmbed(visibleMessage(await h.run('creds', { identity: EDGE.spammer })));
    expect(spam.fields?.map((f) => f.name)).toEqual(['⛔ Spam', '⚠️ Copyright Violation']);
    expect(spam.fields?.[0]?.value).toContain('Score: **0**');
    expect(spam.fields?.[0]?.value).toContain('[Details](https://github.com/warpcast/labels)');
  });

  it.each([
    { name: EDGE.active, status: '🟢 **Active**: expires' },
    { name: EDGE.expiring, status: '🟡 **Expiring soon**: expires' },
    { name: EDGE.grace, status: '🟠 **In grace period**: expired' },
    { name: EDGE.expired, status: '🔴 **Expired**: expired' },
  ])('/domain $name: $status', async ({ name, status }) => {
    const result = await h.run('domain', { name });
    const embed = firstEmbed(visibleMessage(result));
    expect(embed.title).toBe(name);
    expect(embed.description).toMatch(new RegExp(`^${escapeRegExp(status)} <t:\\d+:F> \\(<t:\\d+:R>\\)`));
    expect(fieldValue(embed, 'Owner')).toMatch(/^`0x[0-9a-f]{40}`$/);
    expect(fieldValue(embed, 'Primary name')).toBe('Yes');
    expect(fieldValue(embed, 'Records')).toContain(`**Website**: <https://${name}.limo/>`);
    expectSafeMessages(h, result);
  });

  it('/wallet without an API key: a short explanation and no upstream request', async () => {
    const before = h.upstreamCount();
    const result = await h.run('wallet', { identity: 'vitalik.eth' });
    const embed = expectErrorReply(result, '🔑 API key needed');
    expect(embed.description).toContain('needs a Web3.bio API key');
    expect(h.upstreamCount()).toBe(before);
  });

  it('private:true answers ephemerally', async () => {
    const result = await h.run('avatar', { identity: 'vitalik.eth', private: true });
    expect(isEphemeral(visibleMessage(result))).toBe(true);
    expect(firstEmbed(visibleMessage(result)).title).toBe('Avatar of vitalik.eth');
  });

  it('not found: a private "nothing found" naming the identity', async () => {
    const result = await h.run('whois', { identity: 'nobodyhere.eth' });
    const embed = expectErrorReply(result, '🔍 Nothing found');
    expect(embed.description).toBe('Web3.bio knows nothing about **nobodyhere.eth**.');
  });

  it('invalid input: the accepted forms, and no upstream request', async () => {
    const before = h.upstreamCount();
    const result = await h.run('whois', { identity: '../../x' });
    const embed = expectErrorReply(result, '❓ Not a web3 identity');
    expect(embed.description).toContain('**Try one of these:**');
    expect(embed.description).toContain('an ENS name \\(vitalik.eth\\)');
    expect(h.upstreamCount()).toBe(before);
  });

  it('rate limited: a private "try again" after the client gave up retrying', async () => {
    h.upstream.addFault({ match: 'busy-name.eth', action: { kind: 'rate-limit', retryAfterSeconds: 0 } });
    const result = await h.run('whois', { identity: 'busy-name.eth' });
    const embed = expectErrorReply(result, '⏳ Web3.bio is busy');
    expect(embed.description).toMatch(/Try again <t:\d+:R>\.$/);
    expect(h.upstream.requests.filter((r) => r.path.includes('busy-name.eth'))).toHaveLength(4);
  });

  it('upstream down: a private "having trouble" after the retries, without internals', async () => {
    h.upstream.addFault({ match: 'down-name.eth', action: { kind: 'status', status: 500 } });
    const result = await h.run('whois', { identity: 'down-name.eth' });
    const embed = expectErrorReply(result, '🛠️ Web3.bio is having trouble');
    expect(embed.description).toBe('Web3.bio answered with an error. Please try again later.');
    expect(h.upstream.requests.filter((r) => r.path.includes('down-name.eth'))).toHaveLength(4);
    const logged = h.logs.find((line) => line.interactionId === result.interactionId);
    expect(logged).toMatchObject({ level: 40, command: 'whois', msg: 'interaction answered with an error' });
    expect(logged?.err).toMatchObject({ kind: 'upstream', status: 500 });
  });

  it('slow upstream: defers within DEFER_AFTER_MS, then edits @original with the answer', async () => {
    h.upstream.setLatency(2_500);
    const result = await h.run('whois', { identity: 'tony.base.eth' });
    expect(callbackTypes(result)).toEqual([5]);
    expect(result.ackMs).toBeGreaterThanOrEqual(h.config.DEFER_AFTER_MS - 50);
    expect(result.ackMs).toBeLessThan(h.config.DEFER_AFTER_MS + 700);
    expect(result.doneMs).toBeGreaterThanOrEqual(2_500);
    const message = visibleMessage(result);
    expect(firstEmbed(message).author?.name).toBe('Basenames · tony.base.eth');
    expect(isEphemeral(message)).toBe(false);
    const edit = h.discord.requests.find(
      (r) =>
        r.method === 'PATCH' && r.path.endsWith('/messages/@original') && r.at >= Date.now() - result.doneMs,
    );
    expect(edit?.status).toBe(200);
    expectSafeMessages(h, result);

    // The same lookup again is a cache hit: a direct reply, no deferral, no upstream request.
    const before = h.upstreamCount();
    const hit = await h.run('whois', { identity: 'tony.base.eth' });
    expect(callbackTypes(hit)).toEqual([4]);
    expect(hit.ackMs).toBeLessThan(h.config.DEFER_AFTER_MS);
    expect(h.upstreamCount()).toBe(before);
  });

  it('slow upstream and an error: the public "thinking…" is removed and the error sent privately', async () => {
    h.upstream.addFault({ match: 'slow-nobody.eth', action: { kind: 'latency', ms: 1_600 } });
    const result = await h.run('whois', { identity: 'slow-nobody.eth' });
    expect(callbackTypes(result)).toEqual([5]);
    expectErrorReply(result, '🔍 Nothing found');
    expect(
      h.discord.requests.some((r) => r.method === 'DELETE' && r.path.endsWith('/messages/@original')),
    ).toBe(true);
  });
});

/** A wallet's identity graph as the API sends it: `count` ENS names `<name><i>.eth`, addresses padded with `pad`. */
function rawGraph(count: number, name: string, pad: string) {
  return Array.from({ length: count }, (_, i) => ({
    identity: `${name}${i}.eth`,
    address: `0x${String(i).padStart(40, pad)}`,
    platform: 'ens',
    isPrimary: false,
    displayName: `${name[0]?.toUpperCase()}${name.slice(1)} ${i}`,
    avatar: null,
    description: null,
    updatedAt: 1_776_000_000,
    domains: [],
    sources: ['ens'],
  }));
}

describe('/wallet with an API key', () => {
  const API_KEY = 'e2e-wallet-key-0123456789';
  const WALLET = `0x${'b16'.padStart(40, '0')}`;
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      env: { WEB3BIO_API_KEY: API_KEY, USER_COOLDOWN_COMMANDS: '0' },
      upstream: { apiKeys: { [API_KEY]: 'full' } },
    });
    const sample = readFixture<Record<string, unknown>>('wallet-web3bio-0x5c51.json');
    const graph = rawGraph(20, 'friend', 'f');
    h.upstream.world.setWallet(WALLET, {
      ...sample,
      identity: WALLET,
      address: WALLET,
      domains: [],
      identityGraph: graph,
    });
  });
  afterAll(() => h.close());

  it('shows the bundle and the identity graph with page buttons; Next shows page 2 in place', async () => {
    const result = await h.run('wallet', { identity: WALLET });
    expect(callbackTypes(result)).toEqual([4]);
    const message = visibleMessage(result);
    expect(message.embeds).toHaveLength(2);
    expect(fieldValue(firstEmbed(message), 'Address')).toBe(`\`${WALLET}\``);
    expect(fieldValue(firstEmbed(message), 'Credentials')).toBeDefined();
    const graph = message.embeds[1];
    expect(graph?.title).toBe('Identity graph');
    expect(graph?.description).toBe('20 linked identities · page 1 of 3');
    expect(graph?.fields?.[0]?.name).toBe('ENS · friend0.eth');
    const [previous, next] = buttons(message);
    expect(previous?.disabled).toBe(true);
    expect(next?.disabled).toBe(false);
    expectSafeMessages(h, result);
    const upstreamCall = h.upstream.requests.at(-1);
    expect(upstreamCall?.path).toBe(`/wallet/${WALLET}`);
    expect(upstreamCall?.headers['x-api-key']).toBe(`Bearer ${API_KEY}`);

    const click = await h.click(message, next?.custom_id ?? '');
    expect(callbackTypes(click)).toEqual([7]);
    const page2 = visibleMessage(click);
    expect(page2.id).toBe(message.id);
    expect(page2.embeds[1]?.description).toBe('20 linked identities · page 2 of 3');
    expect(page2.embeds[1]?.fields?.[0]?.name).toBe('ENS · friend8.eth');
    expect(buttons(page2).map((b) => b.disabled)).toEqual([false, false]);
    expect(JSON.stringify(h.logs)).not.toContain(API_KEY);
  });

  it('an identity too long for a custom id still pages: distinct short ids, Next shows page 2', async () => {
    const long = `${'wallet'.repeat(42)}.eth`;
    expect(long).toHaveLength(MAX_IDENTITY_LENGTH);
    const graph = rawGraph(12, 'pal', 'e');
    h.upstream.world.setWallet(long, { ...readFixture('wallet-web3bio-0x5c51.json'), identityGraph: graph });
    const result = await h.run('wallet', { identity: long });
    expect(callbackTypes(result)).toEqual([4]);
    const message = visibleMessage(result);
    const ids = buttons(message).map((b) => b.custom_id);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id.length).toBeLessThanOrEqual(100);
    const click = await h.click(message, ids[1] ?? '');
    expect(callbackTypes(click)).toEqual([7]);
    expect(visibleMessage(click).embeds[1]?.description).toBe('12 linked identities · page 2 of 2');
    expect(h.upstream.requests.at(-1)?.path).toBe(`/wallet/${long}`);
  });

  it('private:true answers ephemerally', async () => {
    const result = await h.run('wallet', { identity: WALLET, private: true });
    expect(isEphemeral(visibleMessage(result))).toBe(true);
    expect(visibleMessage(result).embeds[1]?.title).toBe('Identity graph');
  });
});

/** A command whose answer rejects, as a bug in a command would. */
const failingCommand: Command = {
  data: { name: 'failing', description: 'Rejects with an internal error' },
  answer: () => Promise.reject(new Error('internal detail: db password=hunter2')),
};

/** A command that throws before it even returns its promise. */
const throwingCommand: Command = {
  data: { name: 'throwing', description: 'Throws synchronously' },
  answer: () => {
    throw new TypeError('cannot read properties of undefined');
  },
};

/** A command whose answer Discord refuses (a title over 256 characters), so the reply itself fails. */
const refusedCommand: Command = {
  data: { name: 'refused', description: 'Answers with an embed Discord refuses' },
  answer: async () => ({
    embeds: [{ title: 'x'.repeat(300) }],
    components: [],
    allowed_mentions: { parse: [] },
  }),
};

describe('error boundary, cooldown and stale data', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({
      env: { USER_COOLDOWN_COMMANDS: '2', CACHE_TTL_PROFILE_SECONDS: '0' },
      commands: (config) => [...commandsFor(config), failingCommand, throwingCommand, refusedCommand],
    });
  });
  afterAll(() => h.close());
  afterEach(() => h.upstream.clearFaults());

  it.each([
    { name: 'failing', msg: 'interaction failed' },
    { name: 'throwing', msg: 'interaction boundary caught an error' },
    { name: 'refused', msg: 'interaction boundary caught an error' },
  ])(
    '/$name: a private error reply, a log line with the command and ids, and the bot stays up',
    async ({ name, msg }) => {
      const userId = h.newUser();
      const result = await h.run(name, {}, { userId });
      const embed = expectErrorReply(result, '💥 Something went wrong');
      expect(embed.description).toBe('The bot ran into an unexpected problem. Please try again later.');
      expect(JSON.stringify(visibleMessage(result))).not.toMatch(/hunter2|undefined|x{300}/);
      const logged = h.logs.find((line) => line.interactionId === result.interactionId && line.msg === msg);
      expect(logged).toMatchObject({ level: 50, command: name, userId, guildId: h.guild.id });
      expect(logged?.err).toBeDefined();
      // The interaction token is a credential: a refused answer's logged error does not carry it.
      const callback = h.discord.requests.find((r) =>
        r.path.startsWith(`/interactions/${result.interactionId}/`),
      );
      const token = callback?.path.split('/')[3] ?? '';
      expect(token.length).toBeGreaterThan(10);
      expect(JSON.stringify(h.logs)).not.toContain(token);

      const next = await h.run('avatar', { identity: 'vitalik.eth' }, { userId });
      expect(firstEmbed(visibleMessage(next)).title).toBe('Avatar of vitalik.eth');
    },
  );

  it('cooldown: the third lookup within the window is refused without an upstream request; others are unaffected', async () => {
    const alice = h.newUser();
    await h.run('whois', { identity: EDGE.human }, { userId: alice });
    await h.run('whois', { identity: EDGE.clean }, { userId: alice });
    const before = h.upstreamCount();
    const third = await h.run('whois', { identity: EDGE.scored }, { userId: alice });
    const embed = expectErrorReply(third, '🐢 Slow down');
    expect(embed.description).toMatch(/^You’re sending commands too fast\. Try again <t:\d+:R>\.$/);
    expect(h.upstreamCount()).toBe(before);
    expect(h.logs.find((l) => l.interactionId === third.interactionId)).toMatchObject({ msg: 'cooldown' });

    const other = await h.run('whois', { identity: EDGE.scored }, { userId: ALICE });
    expect(isEphemeral(visibleMessage(other))).toBe(false);
    expect(firstEmbed(visibleMessage(other)).author?.name).toBe('ENS · scored.eth');
    expect(h.upstreamCount()).toBe(before + 1);
  });

  it('cooldown counts clicks too: a select pick past the limit is refused, the message stays', async () => {
    const userId = h.newUser();
    const reply = visibleMessage(await h.run('whois', { identity: EDGE.many }, { userId }));
    const select = selectMenu(reply).custom_id;
    const first = await h.click(reply, select, ['1'], { userId });
    expect(callbackTypes(first)).toEqual([7]);
    const before = structuredClone(h.discord.state.messages.get(reply.id));
    const upstream = h.upstreamCount();
    const third = await h.click(reply, select, ['2'], { userId });
    const embed = expectErrorReply(third, '🐢 Slow down');
    expect(embed.description).toMatch(/^You’re sending commands too fast\. Try again <t:\d+:R>\.$/);
    expect(h.discord.state.messages.get(reply.id)).toEqual(before);
    expect(h.upstreamCount()).toBe(upstream);
    expect(h.logs.find((l) => l.interactionId === third.interactionId)).toMatchObject({ msg: 'cooldown' });
    const next = await h.run('whois', { identity: EDGE.clean }, { userId });
    expectErrorReply(next, '🐢 Slow down');
  });

  it('stale data: when the upstream fails after the TTL, the last answer is shown with a visible note', async () => {
    const userId = h.newUser();
    const fresh = visibleMessage(await h.run('whois', { identity: EDGE.old }, { userId }));
    expect(fresh.content).toBe('');
    h.upstream.addFault({ match: EDGE.old, action: { kind: 'status', status: 503 } });
    const result = await h.run('whois', { identity: EDGE.old }, { userId });
    const stale = visibleMessage(result);
    expect(stale.content).toMatch(/^⚠️ Web3\.bio is unreachable: showing data fetched <t:\d+:R>\.$/);
    expect(firstEmbed(stale).title).toBe('Old Shape');
    expect(isEphemeral(stale)).toBe(false);
    expectSafeMessages(h, result);
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
