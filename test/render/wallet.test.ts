import { describe, expect, it } from 'vitest';
import type { MessagePayload } from '../../src/render/types.ts';
import { renderWallet, WALLET_GRAPH_PAGE_SIZE } from '../../src/render/wallet.ts';
import type { WalletBundle, WalletGraphEntry } from '../../src/web3bio/types.ts';
import { credential, ctx, emptyCredentialSet, fixture, HOSTILE, toWallet } from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

const pageId = (page: number) => `wallet|page|0xabc|${page}`;

const web3bio = () => toWallet(fixture('wallet-web3bio-0x5c51.json') as Record<string, unknown>);

function render(bundle: WalletBundle, page: number, context = ctx()): MessagePayload {
  const payload = renderWallet(bundle, page, context, pageId);
  assertWithinDiscordLimits(payload);
  return payload;
}

function graphEntry(i: number): WalletGraphEntry {
  return {
    identity: `linked${i}.eth`,
    address: `0x${String(i).padStart(40, '0')}`,
    platform: 'ens',
    isPrimary: false,
    displayName: null,
    avatar: null,
    description: null,
    updatedAt: null,
    sources: ['test'],
  };
}

function withGraph(count: number): WalletBundle {
  return { ...web3bio(), identityGraph: Array.from({ length: count }, (_, i) => graphEntry(i)) };
}

function buttons(payload: MessagePayload) {
  return (payload.components[0]?.components ?? []).map((c) => {
    if (c.type !== 2 || !('custom_id' in c)) throw new Error('expected a custom-id button');
    return { label: c.label, id: c.custom_id, disabled: c.disabled === true };
  });
}

function graphNames(payload: MessagePayload): string[] {
  return (payload.embeds[1]?.fields ?? []).map((f) => f.name);
}

describe('renderWallet', () => {
  it('shows the identity, domains, credential summary and the graph from the fixture', () => {
    const payload = render(web3bio(), 0);
    const [main, graph] = payload.embeds;
    expect(main?.title).toBe('Web3.bio');
    expect(main?.author?.name).toBe('Ethereum · 0x5c51b52694719931919aebb2dccf7ca3447d0608');
    expect(main?.thumbnail?.url).toBe('https://euc.li/web3.bio');
    const fields = Object.fromEntries((main?.fields ?? []).map((f) => [f.name, f.value]));
    expect(fields.Address).toBe('`0x5c51b52694719931919aebb2dccf7ca3447d0608`');
    expect(fields.Domains).toBe('**ENS** web3.bio ⭐ primary\n**Basenames** web3bio.base.eth ⭐ primary');
    expect(fields.Credentials).toContain('Likely human');
    expect(fields.Credentials).toContain('Human: 1 · Risky: 0 · Spam: 0');
    expect(graph?.description).toBe('8 linked identities · page 1 of 1');
    expect(graph?.fields).toHaveLength(8);
    expect(graph?.fields?.[0]).toMatchObject({
      name: 'X \\(Twitter\\) · web3bio',
      value: 'Web3.bio\nvia farcaster',
    });
    expect(graph?.fields?.[7]).toMatchObject({ name: 'Firefly · 1315716245', value: 'via firefly, privy' });
    expect(payload.components).toEqual([]);
  });

  it('pages the identity graph with Previous and Next, disabled at the ends', () => {
    const bundle = withGraph(WALLET_GRAPH_PAGE_SIZE * 2 + 3);
    const first = render(bundle, 0);
    expect(graphNames(first)[0]).toBe('ENS · linked0.eth');
    expect(graphNames(first)).toHaveLength(WALLET_GRAPH_PAGE_SIZE);
    expect(first.embeds[1]?.description).toBe(`19 linked identities · page 1 of 3`);
    expect(buttons(first)).toEqual([
      { label: '◀ Previous', id: pageId(-1), disabled: true },
      { label: 'Next ▶', id: pageId(1), disabled: false },
    ]);

    const middle = render(bundle, 1);
    expect(graphNames(middle)[0]).toBe(`ENS · linked${WALLET_GRAPH_PAGE_SIZE}.eth`);
    expect(buttons(middle).map((b) => [b.id, b.disabled])).toEqual([
      [pageId(0), false],
      [pageId(2), false],
    ]);

    const last = render(bundle, 2);
    expect(graphNames(last)).toHaveLength(3);
    expect(buttons(last).map((b) => [b.id, b.disabled])).toEqual([
      [pageId(1), false],
      [pageId(3), true],
    ]);
  });

  it('clamps the page into range', () => {
    const bundle = withGraph(WALLET_GRAPH_PAGE_SIZE + 1);
    expect(render(bundle, 99).embeds[1]?.description).toContain('page 2 of 2');
    expect(render(bundle, -5).embeds[1]?.description).toContain('page 1 of 2');
    expect(render(bundle, Number.NaN).embeds[1]?.description).toContain('page 1 of 2');
    expect(render(bundle, 1.7).embeds[1]?.description).toContain('page 2 of 2');
  });

  it('has no buttons for an empty graph', () => {
    const payload = render(withGraph(0), 3);
    expect(payload.embeds[1]?.description).toBe('No linked identities.');
    expect(payload.components).toEqual([]);
  });

  it('formats the identity count by locale', () => {
    expect(render(withGraph(5360), 0, ctx({ locale: 'de' })).embeds[1]?.description).toContain(
      '5.360 verknüpfte Identitäten',
    );
  });

  it('summarises spam credentials in the verdict colour', () => {
    const bundle = {
      ...web3bio(),
      credential: { ...emptyCredentialSet(), isSpam: [credential({ category: 'isSpam', id: null })] },
    };
    const main = render(bundle, 0).embeds[0];
    expect(main?.color).toBe(0xed4245);
    expect(main?.fields?.find((f) => f.name === 'Credentials')?.value).toContain(
      'Human: 0 · Risky: 0 · Spam: 1',
    );
  });

  it('keeps a hostile bundle within limits', () => {
    const hostileEntry: WalletGraphEntry = {
      identity: HOSTILE.repeat(5),
      address: HOSTILE,
      platform: HOSTILE,
      isPrimary: true,
      displayName: HOSTILE.repeat(5),
      avatar: 'javascript:alert(1)',
      description: HOSTILE,
      updatedAt: null,
      sources: Array.from({ length: 50 }, () => HOSTILE),
    };
    const bundle: WalletBundle = {
      ...hostileEntry,
      description: HOSTILE.repeat(100),
      domains: Array.from({ length: 100 }, () => hostileEntry),
      credential: emptyCredentialSet(),
      identityGraph: Array.from({ length: 100 }, () => hostileEntry),
    };
    for (const page of [0, 5, 12, 13]) {
      const payload = render(bundle, page);
      expect(payload.embeds[0]?.thumbnail).toBeUndefined();
      expect(payload.embeds[0]?.title).toContain('@\u200beveryone');
    }
  });
});
