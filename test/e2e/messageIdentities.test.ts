/**
 * The message menu "Web3 identities in this message", end to end: a message context-menu interaction
 * through the stand-in Discord, one batch request at the stand-in Web3.bio, a private answer that pings
 * nobody, and a menu that opens the full /whois card.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/server.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { EDGE } from '../../fakes/web3bio/edgeCases.ts';
import type { MessagePayload } from '../../src/render/types.ts';
import { assertWithinDiscordLimits } from '../render/limits.ts';
import {
  ALICE,
  BOB,
  type Harness,
  isEphemeral,
  messageBodies,
  startHarness,
  visibleMessage,
} from './harness.ts';

const MENU = 'Web3 identities in this message';
const VITALIK_ADDRESS = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';

describe('message menu: web3 identities in this message', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness({ env: { USER_COOLDOWN_COMMANDS: '0' } });
  });
  afterAll(() => h.close());

  function onMessage(content: string, more: { guildId?: string | null } = {}): Promise<InteractionResult> {
    return h.discord.runCommand({
      name: MENU,
      type: 'message',
      userId: ALICE,
      targetMessage: { content, authorId: BOB },
      ...more,
    });
  }

  function expectInertPrivateAnswer(result: InteractionResult): string {
    for (const body of messageBodies(h.discord, result.interactionId)) {
      expect(body.allowed_mentions).toEqual({ parse: [] });
      assertWithinDiscordLimits({ components: [], embeds: [], ...body } as unknown as MessagePayload);
    }
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    expect(message.mentions).toEqual([]);
    expect(message.mention_roles).toEqual([]);
    expect(message.mention_everyone).toBe(false);
    expect(message.embeds).toHaveLength(1);
    return message.embeds[0]?.description ?? '';
  }

  const batchRequests = (since: number) =>
    h.upstream.requests.slice(since).filter((r) => r.path.startsWith('/profile/batch/'));

  it('lists every identity in the message after one batch request, privately; unknown ones as not found', async () => {
    const before = h.upstream.requests.length;
    const result = await onMessage(
      `gm! ask **vitalik.eth** or ${VITALIK_ADDRESS}, also dwr.eth, stani.lens and never-registered-xyz.eth. VITALIK.ETH again`,
    );
    const description = expectInertPrivateAnswer(result);
    const lines = description.split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^1\. \*\*vitalik\.eth\*\* · ENS/);
    expect(lines.find((l) => l.includes('never-registered-xyz.eth'))).toContain('not found on Web3.bio');
    expect(h.upstream.requests.slice(before)).toHaveLength(1);
    expect(batchRequests(before)).toHaveLength(1);
  });

  it('shows a bare address once, with the primary ENS name it resolves to, labelled ENS', async () => {
    const whale = '0xe1e1c0ffee5eed000000000000000000000a2928';
    const nameless = '0x00000000000000000000000000000000000b0b0b';
    h.upstream.world.addProfile(rawProfile('ens', 'whale.eth', whale, { displayName: 'Whale Watcher' }));
    const before = h.upstream.requests.length;
    // Written with a checksum-style mix of cases, as wallets copy it.
    const result = await onMessage(
      `gm, sent from 0xE1E1C0FFEE5EED000000000000000000000A2928 and ${nameless}`,
    );
    const lines = expectInertPrivateAnswer(result).split('\n');
    expect(lines).toEqual([
      `1. **Whale Watcher** · ENS · \`whale.eth\` · \`${whale}\``,
      `2. \`${nameless}\` · Ethereum`,
    ]);
    expect(batchRequests(before)).toHaveLength(1);
    const row = visibleMessage(result).components?.[0] as {
      components: { options: { label: string; value: string; description: string }[] }[];
    };
    expect(row.components[0]?.options[0]).toEqual({
      label: 'Whale Watcher',
      value: whale,
      description: `ENS · whale.eth · ${whale}`,
    });
  });

  it('opens the full /whois card from the menu', async () => {
    const result = await onMessage('who is vitalik.eth?');
    const message = visibleMessage(result);
    const row = message.components?.[0] as {
      components: { custom_id: string; options: { value: string }[] }[];
    };
    const select = row.components[0];
    if (!select) throw new Error('no menu');
    expect(select.options.map((o) => o.value)).toEqual(['vitalik.eth']);
    const opened = await h.click(message, select.custom_id, ['vitalik.eth']);
    const card = visibleMessage(opened);
    expect(card.embeds[0]?.title).toContain('vitalik.eth');
  });

  it('says so when the message has no identity, without asking Web3.bio', async () => {
    const before = h.upstream.requests.length;
    const description = expectInertPrivateAnswer(
      await onMessage('just chatting about example.com, nothing here'),
    );
    expect(description).toBe('No web3 identities found in this message.');
    expect(h.upstream.requests.length).toBe(before);
  });

  it('answers a hostile message inertly: mentions, @everyone, markdown, a very long text', async () => {
    const hostile = [
      '@everyone @here <@123456789012345678> <@&42> <#99> </ban:1>',
      '[click](https://evil.example) ||spoiler|| `code` ~~s~~ # heading',
      `**${EDGE.hostile}** \u202Egnp.exe\u202C`,
      'x'.repeat(1_500),
    ].join('\n');
    const before = h.upstream.requests.length;
    const description = expectInertPrivateAnswer(await onMessage(hostile));
    expect(description).not.toMatch(/<@|<#|@everyone|@here|\[click\]/);
    expect(description.split('\n')).toHaveLength(1);
    expect(batchRequests(before)).toHaveLength(1);
  });

  it('works from a DM through the user install', async () => {
    const description = expectInertPrivateAnswer(await onMessage('vitalik.eth', { guildId: null }));
    expect(description).toMatch(/vitalik\.eth/);
  });
});
