import { describe, expect, it } from 'vitest';
import { type IdentityAnswer, renderMessageIdentities } from '../../src/render/messageIdentities.ts';
import { ctx, emptyProfile, HOSTILE } from './fixtures.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const OPEN_ID = 'whois|open';
const VITALIK = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';

interface SelectShape {
  custom_id: string;
  options: { label: string; value: string; description?: string }[];
}

function menu(payload: ReturnType<typeof renderMessageIdentities>): SelectShape {
  const select = (payload.components[0]?.components[0] ?? null) as SelectShape | null;
  if (!select) throw new Error('no menu');
  return select;
}

const found: IdentityAnswer = {
  identity: 'vitalik.eth',
  kind: 'ens',
  profile: emptyProfile({ identity: 'vitalik.eth', displayName: 'vitalik.eth', address: VITALIK }),
};

describe('renderMessageIdentities', () => {
  it('says so when the message has none, with no menu', () => {
    const payload = renderMessageIdentities([], ctx(), OPEN_ID);
    assertWithinDiscordLimits(payload);
    expect(payload.embeds[0]).toMatchObject({
      title: 'Web3 identities in this message',
      description: 'No web3 identities found in this message.',
    });
    expect(payload.components).toEqual([]);
  });

  it('lists found, unknown and not-looked-up identities; the menu opens the ones that can be opened', () => {
    const answers: IdentityAnswer[] = [
      found,
      { identity: 'nobody-here.eth', kind: 'ens', profile: null },
      {
        identity: 'GZs4kWxJtU8mTqHbKSi1WspvLUGd2ZAJy7gPVN1hYhYV',
        kind: 'solana-address',
        profile: undefined,
      },
      {
        identity: 'dwr.farcaster',
        kind: 'farcaster',
        profile: emptyProfile({
          identity: 'dwr',
          platform: 'farcaster',
          displayName: 'Dan',
          description: 'Working on Farcaster',
        }),
      },
    ];
    const payload = renderMessageIdentities(answers, ctx(), OPEN_ID);
    assertWithinDiscordLimits(payload);
    const lines = (payload.embeds[0]?.description ?? '').split('\n');
    expect(lines).toEqual([
      '1. **vitalik.eth** · ENS · `0xd8da…6045`',
      '2. `nobody-here.eth` · not found on Web3.bio',
      '3. `GZs4kWxJtU8mTqHbKSi1WspvLUGd2ZAJy7gPVN1hYhYV` · Solana address · pick it below for the profile',
      '4. **Dan** · Farcaster · `dwr.farcaster` · Working on Farcaster',
    ]);
    const select = menu(payload);
    expect(select.custom_id).toBe(OPEN_ID);
    expect(select.options.map((o) => o.value)).toEqual([
      'vitalik.eth',
      'GZs4kWxJtU8mTqHbKSi1WspvLUGd2ZAJy7gPVN1hYhYV',
      'dwr.farcaster',
    ]);
  });

  it('shows a bare address once, with the primary name it resolves to under its own platform', () => {
    const whale = '0xe1e1c0ffee5eed000000000000000000000a2928';
    const nameless = '0x00000000000000000000000000000000000b0b0b';
    const answers: IdentityAnswer[] = [
      {
        identity: whale,
        kind: 'evm-address',
        profile: emptyProfile({ identity: 'whale.eth', displayName: 'Whale Watcher', address: whale }),
      },
      {
        identity: VITALIK,
        kind: 'evm-address',
        profile: emptyProfile({ identity: 'vitalik.eth', displayName: 'vitalik.eth', address: VITALIK }),
      },
      {
        identity: nameless,
        kind: 'evm-address',
        // What Web3.bio answers for an address with no primary name: the address itself, shortened as its name.
        profile: emptyProfile({
          identity: nameless,
          platform: 'ethereum',
          displayName: '0x0000…0b0b',
          address: nameless,
        }),
      },
    ];
    const payload = renderMessageIdentities(answers, ctx(), OPEN_ID);
    assertWithinDiscordLimits(payload);
    const lines = (payload.embeds[0]?.description ?? '').split('\n');
    expect(lines).toEqual([
      `1. **Whale Watcher** · ENS · \`whale.eth\` · \`${whale}\``,
      `2. **vitalik.eth** · ENS · \`${VITALIK}\``,
      `3. \`${nameless}\` · Ethereum`,
    ]);
    expect(menu(payload).options).toEqual([
      { label: 'Whale Watcher', value: whale, description: `ENS · whale.eth · ${whale}` },
      { label: 'vitalik.eth', value: VITALIK, description: `ENS · vitalik.eth · ${VITALIK}` },
      { label: nameless, value: nameless, description: `Ethereum · ${nameless}` },
    ]);
  });

  it('keeps hostile names and bios inert and within every limit', () => {
    const hostile = (i: number): IdentityAnswer => ({
      identity: `hostile${i}.eth`,
      kind: 'ens',
      profile: emptyProfile({
        identity: `hostile${i}.eth`,
        displayName: HOSTILE.repeat(20),
        description: HOSTILE.repeat(50),
      }),
    });
    const payload = renderMessageIdentities(
      Array.from({ length: 10 }, (_, i) => hostile(i)),
      ctx(),
      OPEN_ID,
    );
    assertWithinDiscordLimits(payload);
    // Menu labels are plain text that Discord never parses; the embed is where markup would act.
    const description = payload.embeds[0]?.description ?? '';
    expect(description).not.toMatch(/<@|<#|@everyone|\[click\]\(|\*\*@/);
    for (const hidden of ['\u0000', '\u0007', '\u202e']) expect(visibleText(payload)).not.toContain(hidden);
    for (const option of menu(payload).options) {
      expect(option.label.length).toBeLessThanOrEqual(100);
      expect(option.description?.length ?? 0).toBeLessThanOrEqual(100);
    }
  });

  it('lists identities too long for a menu value, without offering them in the menu', () => {
    const long = `${'a'.repeat(120)}.eth`;
    const payload = renderMessageIdentities(
      [{ identity: long, kind: 'ens', profile: emptyProfile({ identity: long }) }],
      ctx(),
      OPEN_ID,
    );
    assertWithinDiscordLimits(payload);
    expect(payload.embeds[0]?.description).toContain('aaaa');
    expect(payload.components).toEqual([]);
  });
});
