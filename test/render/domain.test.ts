import type { APIEmbed } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { type DomainExpiryState, domainExpiryState, renderDomain } from '../../src/render/domain.ts';
import type { DomainInfo } from '../../src/web3bio/types.ts';
import { ctx, emptyDomain, fixture, HOSTILE, NOW_SEC, toDomain } from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

const DAY = 86_400;

const sujiyan = () => toDomain(fixture('domain-sujiyan.json') as Record<string, unknown>);

function render(domain: DomainInfo, context = ctx()): APIEmbed {
  const payload = renderDomain(domain, context);
  assertWithinDiscordLimits(payload);
  const embed = payload.embeds[0];
  if (!embed) throw new Error('no embed');
  return embed;
}

function field(embed: APIEmbed, name: string): string | undefined {
  return embed.fields?.find((f) => f.name === name)?.value;
}

describe('domainExpiryState', () => {
  const at = (identity: string, platform: string, expiredAt: number | null) =>
    domainExpiryState({ identity, platform, expiredAt }, NOW_SEC);

  it('is unknown without an expiry', () => {
    expect(at('a.eth', 'ens', null)).toBe('unknown');
  });
  it('is active more than 30 days before expiry', () => {
    expect(at('a.eth', 'ens', NOW_SEC + 30 * DAY + 1)).toBe('active');
    expect(at('a.eth', 'ens', NOW_SEC + 365 * DAY)).toBe('active');
  });
  it('is expiring within 30 days', () => {
    expect(at('a.eth', 'ens', NOW_SEC + 30 * DAY)).toBe('expiring');
    expect(at('a.eth', 'ens', NOW_SEC + 1)).toBe('expiring');
  });
  it('is in grace for 90 days after expiry for .eth, .base.eth and .linea.eth names', () => {
    for (const [identity, platform] of [
      ['a.eth', 'ens'],
      ['a.base.eth', 'basenames'],
      ['a.linea.eth', 'linea'],
      ['A.ETH', 'ens'],
    ] as const) {
      expect(at(identity, platform, NOW_SEC), identity).toBe('grace');
      expect(at(identity, platform, NOW_SEC - 90 * DAY + 1), identity).toBe('grace');
      expect(at(identity, platform, NOW_SEC - 90 * DAY), identity).toBe('expired');
    }
  });
  it('is expired right away for names without a grace period', () => {
    expect(at('a.sol', 'sns', NOW_SEC)).toBe('expired');
    expect(at('a.sol', 'sns', NOW_SEC - DAY)).toBe('expired');
    expect(at('a.sol', 'sns', NOW_SEC + DAY)).toBe('expiring');
  });
  it('uses the fixture relative to the given time', () => {
    const domain = sujiyan();
    const expiry = domain.expiredAt ?? 0;
    const states: [number, DomainExpiryState][] = [
      [expiry - 100 * DAY, 'active'],
      [expiry - 10 * DAY, 'expiring'],
      [expiry + 10 * DAY, 'grace'],
      [expiry + 100 * DAY, 'expired'],
    ];
    for (const [now, state] of states) expect(domainExpiryState(domain, now)).toBe(state);
  });
});

describe('renderDomain', () => {
  it('shows roles, times, records, addresses and contenthash for the fixture', () => {
    const embed = render(sujiyan());
    expect(embed.title).toBe('sujiyan.eth');
    expect(embed.author?.name).toBe('ENS');
    expect(embed.description).toBe('🟢 **Active**: expires <t:1872218994:F> (<t:1872218994:R>)');
    expect(field(embed, 'Owner')).toBe('`0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5`');
    expect(field(embed, 'Manager')).toBe('`0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5`');
    expect(field(embed, 'Resolver')).toBe('`0x231b0ee14048e9dccd1d247744d114a4eb5e8e63`');
    expect(field(embed, 'Resolves to')).toBe('`0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5`');
    expect(field(embed, 'Primary name')).toBe('Yes');
    expect(field(embed, 'Registered')).toBe('<t:1580385930:F> (<t:1580385930:R>)');
    expect(field(embed, 'First seen')).toBe('<t:1579881668:F> (<t:1579881668:R>)');
    expect(field(embed, 'Records')?.split('\n')).toEqual([
      '**Website**: <https://mask.io/>',
      '**Email**: suji.yan@dimension.im',
      '**X**: [@suji\\_yan](https://x.com/suji_yan)',
      '**GitHub**: [@tedko](https://github.com/tedko)',
      '**Avatar**: <https://euc.li/sujiyan.eth>',
    ]);
    expect(field(embed, 'Addresses')).toBe('**ethereum**: `0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5`');
    expect(field(embed, 'Content')).toBe(
      '<https://ipfs.io/ipns/k51qzi5uqu5di7afkyk8msyok5bxqlaudfzem68t8jilihitaz6ii523ve9tbw>',
    );
    expect(embed.thumbnail?.url).toBe('https://euc.li/sujiyan.eth');
  });

  it('renders every expiry state with its own line and colour', () => {
    const expiry = sujiyan().expiredAt ?? 0;
    const cases: [number, RegExp][] = [
      [expiry - 100 * DAY, /^🟢 \*\*Active\*\*: expires <t:\d+:F> \(<t:\d+:R>\)$/],
      [expiry - 10 * DAY, /^🟡 \*\*Expiring soon\*\*: expires/],
      [expiry + 10 * DAY, /^🟠 \*\*In grace period\*\*: expired .*renew until <t:\d+:F>$/],
      [expiry + 100 * DAY, /^🔴 \*\*Expired\*\*: expired <t:1872218994:F>/],
    ];
    const colours = new Set<number | undefined>();
    for (const [nowSec, line] of cases) {
      const embed = render(sujiyan(), ctx({ nowSec }));
      expect(embed.description).toMatch(line);
      colours.add(embed.color);
    }
    expect(colours.size).toBe(4);
    expect(render({ ...sujiyan(), expiredAt: null }).description).toBe('⚪ **No expiry known**');
  });

  it('prefers com.* text records and links safe values only', () => {
    const embed = render({
      ...sujiyan(),
      texts: {
        url: 'javascript:alert(1)',
        'com.twitter': '@real',
        'vnd.twitter': 'old',
        'com.github': 'not a handle!',
        'com.discord': 'user#1',
        description: 'Hello **world**',
        avatar: 'data:image/png;base64,xx',
      },
    });
    expect(field(embed, 'Records')?.split('\n')).toEqual([
      '**Website**: `javascript:alert(1)`',
      '**X**: [@real](https://x.com/real)',
      '**GitHub**: not a handle!',
      '**Discord**: user\\#1',
      '**Description**: Hello \\*\\*world\\*\\*',
      '**Avatar**: `data:image/png;base64,xx`',
    ]);
    expect(embed.thumbnail).toBeUndefined();
  });

  it('renders a domain with every optional field missing', () => {
    const embed = render(emptyDomain({ identity: 'bare.sol', platform: 'sns' }));
    expect(embed.fields).toEqual([{ name: 'Primary name', value: 'No', inline: true }]);
    expect(embed.color).toBe(0x9945ff);
  });

  it('keeps a hostile domain with many addresses and records within limits', () => {
    const many = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`${HOSTILE}${i}`, HOSTILE]));
    const embed = render({
      ...sujiyan(),
      identity: HOSTILE,
      ownerAddress: HOSTILE,
      contenthash: HOSTILE,
      texts: { ...many, url: HOSTILE, description: HOSTILE.repeat(100) },
      addresses: many,
      domains: Array.from({ length: 100 }, () => HOSTILE),
    });
    expect(field(embed, 'Addresses')?.split('\n').at(-1)).toMatch(/^…and \d+ more$/);
    expect(embed.title).toContain('@\u200beveryone');
  });
});
