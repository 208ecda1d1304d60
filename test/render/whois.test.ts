import { describe, expect, it } from 'vitest';
import type { MessagePayload, RenderContext } from '../../src/render/types.ts';
import { profilePageUrl, renderWhois } from '../../src/render/whois.ts';
import type { Profile, ProfileLink } from '../../src/web3bio/types.ts';
import { ctx, emptyProfile, fixture, HOSTILE, NOW_SEC, toProfile, vitalikProfiles } from './fixtures.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const SELECT_ID = 'whois|select|vitalik.eth';
/** Platforms with their own name and colour. */
const KNOWN_PLATFORMS = [
  'ens',
  'farcaster',
  'lens',
  'basenames',
  'linea',
  'sns',
  'unstoppabledomains',
  'dotbit',
  'ethereum',
];

function whois(profiles: Profile[], selected = 0, context = ctx()): MessagePayload {
  const payload = renderWhois(profiles, selected, context, SELECT_ID);
  assertWithinDiscordLimits(payload);
  return payload;
}

function mainEmbed(payload: MessagePayload) {
  const embed = payload.embeds[0];
  if (!embed) throw new Error('no embed');
  return embed;
}

function field(payload: MessagePayload, name: string): string | undefined {
  return mainEmbed(payload).fields?.find((f) => f.name === name)?.value;
}

function selectOptions(payload: MessagePayload) {
  const select = payload.components[0]?.components[0];
  if (select?.type !== 3) throw new Error('no string select');
  return select;
}

describe('renderWhois with the vitalik fixture', () => {
  const profiles = vitalikProfiles();

  it('shows the selected profile with its platform, avatar, header and links', () => {
    const payload = whois(profiles, 0);
    const embed = mainEmbed(payload);
    expect(embed.title).toBe('vitalik.eth');
    expect(embed.url).toBe('https://web3.bio/vitalik.eth');
    expect(embed.author?.name).toBe('ENS · vitalik.eth');
    expect(embed.color).toBe(0x5298ff);
    expect(embed.description).toBe('mi pinxe lo crino tcati');
    expect(embed.thumbnail?.url).toBe('https://euc.li/vitalik.eth');
    expect(embed.image?.url).toBe('https://pbs.twimg.com/profile_banners/295218901/1638557376/1500x500');
    expect(field(payload, 'Address')).toBe('`0xd8da6bf26964af9d7eed9e03e53415d37aa96045`');
    expect(field(payload, 'Followers')).toBe('5,360');
    expect(field(payload, 'Following')).toBe('10');
    expect(field(payload, 'Links')).toBe(
      [
        '**Website**: [vitalik.ca](https://vitalik.ca/)',
        '**GitHub**: [vbuterin](https://github.com/vbuterin)',
        '**X**: [VitalikButerin](https://x.com/VitalikButerin)',
      ].join('\n'),
    );
    expect(field(payload, 'Content')).toBe(
      '<https://ipfs.io/ipfs/bafybeie734kfgfk66fm2uiygvretlr6nzyf2fdlstzezrqxciwden6zai4>',
    );
    expect(embed.footer?.text).toBe('Web3.bio · profile 1 of 3');
    expect(payload.content).toBeUndefined();
  });

  it('formats follower counts by locale', () => {
    expect(field(whois(profiles, 0, ctx({ locale: 'de' })), 'Follower')).toBe('5.360');
    expect(field(whois(profiles, 1, ctx({ locale: 'de' })), 'Follower')).toBe('517.005');
    expect(field(whois(profiles, 0, ctx({ locale: 'not a locale!!' })), 'Followers')).toBe('5,360');
    expect(field(whois(profiles, 0, ctx({ locale: '' })), 'Followers')).toBe('5,360');
  });

  it('offers one select option per platform, the selected one as default', () => {
    const payload = whois(profiles, 1);
    const select = selectOptions(payload);
    expect(select.custom_id).toBe(SELECT_ID);
    expect(select.options.map((o) => [o.label, o.value, o.default === true])).toEqual([
      ['ENS: vitalik.eth', '0', false],
      ['Farcaster: vitalik.eth', '1', true],
      ['Lens: vitalik.lens', '2', false],
    ]);
    expect(select.options[1]?.description).toBe('Vitalik Buterin');
    expect(mainEmbed(payload).title).toBe('Vitalik Buterin');
    expect(mainEmbed(payload).url).toBe('https://web3.bio/vitalik.eth.farcaster');
    expect(mainEmbed(payload).color).toBe(0x8a63d2);
  });

  it('clamps an out-of-range selection', () => {
    expect(mainEmbed(whois(profiles, 7)).author?.name).toBe('Lens · vitalik.lens');
    expect(mainEmbed(whois(profiles, -1)).author?.name).toBe('ENS · vitalik.eth');
    expect(mainEmbed(whois(profiles, Number.NaN)).author?.name).toBe('ENS · vitalik.eth');
  });

  it('has no components with a single profile', () => {
    expect(whois(profiles.slice(0, 1)).components).toEqual([]);
  });
});

describe('renderWhois with other fixtures', () => {
  it('renders a Solana name with empty links and social', () => {
    const payload = whois([toProfile(fixture('profile-sns-bonfida.json') as Record<string, unknown>)]);
    const embed = mainEmbed(payload);
    expect(embed.author?.name).toBe('SNS · bonfida.sol');
    expect(embed.color).toBe(0x9945ff);
    expect(field(payload, 'Links')).toBeUndefined();
    expect(field(payload, 'Followers')).toBeUndefined();
    expect(embed.thumbnail).toBeUndefined();
  });

  it('renders an Unstoppable Domains profile with location and a string uid', () => {
    const raw = fixture('profile-unstoppabledomains-sandy.historical-docs-2025-12.json');
    const payload = whois([toProfile(raw as Record<string, unknown>)]);
    expect(mainEmbed(payload).author?.name).toBe('Unstoppable Domains · sandy.nft');
    expect(field(payload, 'Location')).toBe('Metaverse');
    expect(field(payload, 'Links')).toContain(
      '**YouTube**: [@sandycarter3993](https://www.youtube.com/@sandycarter3993)',
    );
    expect(field(payload, 'Content')).toContain(
      'https://ipfs.io/ipfs/Qmar8DH5xBihbGU449zKAg4sx7ahHbFZgksYHKBFFhfVq7',
    );
  });

  it('renders every profile in the batch fixture within limits', () => {
    const raw = fixture('profile-batch-with-aliases.json') as Record<string, unknown>[];
    const profiles = raw.map(toProfile);
    for (let i = 0; i < profiles.length; i++) whois(profiles, i);
  });
});

describe('renderWhois edge data', () => {
  it('renders a profile with every field missing', () => {
    const payload = whois([emptyProfile()]);
    const embed = mainEmbed(payload);
    expect(embed.title).toBe('nobody.eth');
    expect(embed.description).toBeUndefined();
    expect(embed.fields).toEqual([]);
    expect(embed.thumbnail).toBeUndefined();
    expect(embed.image).toBeUndefined();
  });

  it('uses a neutral colour and the raw label for an unknown platform', () => {
    const embed = mainEmbed(whois([emptyProfile({ platform: 'mastodon' })]));
    expect(embed.color).toBe(0x99aab5);
    expect(embed.author?.name).toBe('mastodon · nobody.eth');
  });

  it('gives each known platform its own colour', () => {
    const colours = KNOWN_PLATFORMS.map((platform) => mainEmbed(whois([emptyProfile({ platform })])).color);
    expect(new Set(colours).size).toBe(KNOWN_PLATFORMS.length);
    expect(colours).not.toContain(0x99aab5);
  });

  it('escapes markdown and neutralises mentions in every profile text', () => {
    const hostile = emptyProfile({
      identity: HOSTILE,
      displayName: HOSTILE,
      description: HOSTILE,
      status: HOSTILE,
      location: HOSTILE,
      email: HOSTILE,
      address: HOSTILE,
      contenthash: HOSTILE,
      links: [{ key: HOSTILE, link: 'https://ok.example', handle: HOSTILE, sources: [] }],
    });
    const payload = whois([hostile, hostile]);
    const embed = mainEmbed(payload);
    const markdown = [embed.title, embed.description, ...(embed.fields ?? []).map((f) => f.value)]
      .join('\n')
      .replace(/`[^`\n]+`/g, '');
    expect(markdown).not.toMatch(/(?<!\\)\*\*@/);
    expect(markdown).not.toMatch(/(?<!\\)\]\(javascript:/);
    expect(visibleText(payload)).toContain('@\u200beveryone');
    expect(embed.author?.name).not.toContain('\u202e');
    expect(embed.author?.name).not.toContain('\u0000');
    expect(mainEmbed(payload).title).toContain('\\*\\*@\u200beveryone\\*\\*');
  });

  it('truncates a 5,000-character description', () => {
    const embed = mainEmbed(whois([emptyProfile({ description: 'x'.repeat(5000) })]));
    expect(embed.description?.length).toBeLessThanOrEqual(4096);
    expect(embed.description?.endsWith('…')).toBe(true);
  });

  it('lists 30 links, linking only safe URLs and skipping empty ones', () => {
    const links: ProfileLink[] = [
      { key: 'website', link: 'javascript:alert(document.cookie)', handle: 'js', sources: [] },
      { key: 'github', link: 'data:text/html,<script>alert(1)</script>', handle: 'data', sources: [] },
      { key: 'twitter', link: null, handle: null, sources: [] },
      { key: 'telegram', link: '', handle: '', sources: [] },
      { key: 'discord', link: null, handle: 'name#1234', sources: [] },
      { key: 'nostr', link: 'ipfs://QmNostr', handle: null, sources: [] },
      ...Array.from({ length: 24 }, (_, i) => ({
        key: `site${i}`,
        link: `https://site${i}.example/${'p'.repeat(20)}`,
        handle: `handle_${i}`,
        sources: [],
      })),
    ];
    const value = field(whois([emptyProfile({ links })]), 'Links') ?? '';
    const lines = value.split('\n');
    expect(lines[0]).toBe('**Website**: js');
    expect(lines[1]).toBe('**GitHub**: data');
    expect(lines[2]).toBe('**Discord**: name\\#1234');
    expect(lines[3]).toBe('**Nostr**: [ipfs.io](https://ipfs.io/ipfs/QmNostr)');
    expect(lines[4]).toBe('**Site0**: [handle\\_0](https://site0.example/pppppppppppppppppppp)');
    expect(value).not.toMatch(/javascript:|data:/);
    expect(value).not.toContain('Twitter');
    expect(value).not.toContain('Telegram');
    expect(value.length).toBeLessThanOrEqual(1024);
    expect(lines.at(-1)).toMatch(/^…and \d+ more$/);
  });

  it('never lets a link’s text name another host than the one it opens', () => {
    const links: ProfileLink[] = [
      { key: 'website', link: 'https://evil.example/login', handle: 'paypal.com/signin', sources: [] },
      { key: 'github', link: 'https://github.com/vbuterin', handle: 'github.com/vbuterin', sources: [] },
      { key: 'farcaster', link: 'https://warpcast.com/vitalik.eth', handle: 'vitalik.eth', sources: [] },
    ];
    const lines = (field(whois([emptyProfile({ links })]), 'Links') ?? '').split('\n');
    expect(lines).toEqual([
      '**Website**: [evil.example](https://evil.example/login)',
      '**GitHub**: [github.com/vbuterin](https://github.com/vbuterin)',
      '**Farcaster**: [vitalik.eth](https://warpcast.com/vitalik.eth)',
    ]);
  });

  it('offers a select for 8+ platforms', () => {
    const profiles = KNOWN_PLATFORMS.map((platform) =>
      emptyProfile({ platform, identity: `me.${platform}` }),
    );
    const select = selectOptions(whois(profiles, 8));
    expect(select.options).toHaveLength(9);
    expect(select.options.map((o) => o.value)).toEqual(KNOWN_PLATFORMS.map((_, i) => String(i)));
    expect(select.options[8]).toMatchObject({ label: 'Ethereum: me.ethereum', default: true });
    expect(select.options[6]?.label).toBe('Unstoppable Domains: me.unstoppabledomains');
  });

  it('caps the select at 25 options and keeps the selected one', () => {
    const profiles = Array.from({ length: 30 }, (_, i) => emptyProfile({ identity: `name${i}.eth` }));
    const first = selectOptions(whois(profiles, 3));
    expect(first.options).toHaveLength(25);
    expect(first.options.find((o) => o.default)?.value).toBe('3');
    const late = selectOptions(whois(profiles, 29));
    expect(late.options).toHaveLength(25);
    expect(late.options.at(-1)).toMatchObject({ value: '29', default: true });
    expect(mainEmbed(whois(profiles, 29)).footer?.text).toBe('Web3.bio · profile 30 of 30');
  });

  it('rewrites ipfs avatars and headers through the gateway and drops unsafe ones', () => {
    const embed = mainEmbed(
      whois(
        [emptyProfile({ avatar: 'ipfs://QmAvatar/a.png', header: 'javascript:alert(1)' })],
        0,
        ctx({ ipfsGateway: 'https://gw.example/' }),
      ),
    );
    expect(embed.thumbnail?.url).toBe('https://gw.example/ipfs/QmAvatar/a.png');
    expect(embed.image).toBeUndefined();
  });

  it('shows a visible stale note with a relative time', () => {
    const payload = whois(vitalikProfiles(), 0, ctx({ stale: { fetchedAt: 1_779_000_000_500 } }));
    expect(payload.content).toBe('⚠️ Web3.bio is unreachable: showing data fetched <t:1779000000:R>.');
  });

  it('renders an empty list as a short message', () => {
    const payload = whois([]);
    expect(payload.components).toEqual([]);
    expect(mainEmbed(payload).title).toBe('No profiles');
  });

  it('shows the creation time as a relative timestamp', () => {
    expect(field(whois([emptyProfile({ createdAt: 1_700_000_000 })]), 'Created')).toBe('<t:1700000000:R>');
  });
});

describe('profilePageUrl', () => {
  it('links to web3.bio with a farcaster suffix where needed', () => {
    expect(profilePageUrl({ identity: 'dwr', platform: 'farcaster' })).toBe('https://web3.bio/dwr.farcaster');
    expect(profilePageUrl({ identity: 'dwr.farcaster', platform: 'farcaster' })).toBe(
      'https://web3.bio/dwr.farcaster',
    );
    expect(profilePageUrl({ identity: 'a/b?c', platform: 'ens' })).toBe('https://web3.bio/a%2Fb%3Fc');
    expect(profilePageUrl({ identity: '', platform: 'ens' })).toBeNull();
  });
});

describe('renderWhois is pure', () => {
  it('answers equal inputs with equal, fresh messages, and leaves its input alone', () => {
    const profiles = vitalikProfiles();
    const before = structuredClone(profiles);
    const first = whois(profiles, 1);
    const again = whois(structuredClone(profiles), 1, ctx({ nowSec: NOW_SEC + 3_600 }));
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    expect(profiles).toEqual(before);
  });

  it('renders anew when anything the message depends on changes', () => {
    const profiles = vitalikProfiles();
    const base = whois(profiles, 0);
    const cases: [string, number, RenderContext, string][] = [
      ['selected', 1, ctx(), SELECT_ID],
      ['locale', 0, ctx({ locale: 'de' }), SELECT_ID],
      ['gateway', 0, ctx({ ipfsGateway: 'https://dweb.link' }), SELECT_ID],
      ['stale', 0, ctx({ stale: { fetchedAt: 1_700_000_000_000 } }), SELECT_ID],
      ['custom id', 0, ctx(), 'whois|select||VITALIK.eth'],
    ];
    const rendered = new Map<string, MessagePayload>();
    for (const [what, selected, context, id] of cases) {
      const payload = renderWhois(profiles, selected, context, id);
      expect(payload, what).not.toEqual(base);
      rendered.set(what, payload);
    }
    expect(field(base, 'Followers')).toBe('5,360');
    expect(field(rendered.get('locale') as MessagePayload, 'Follower')).toBe('5.360');
    expect(field(rendered.get('gateway') as MessagePayload, 'Content')).toContain('https://dweb.link/ipfs/');
    expect(rendered.get('stale')?.content).toContain('<t:1700000000:R>');
    expect(selectOptions(rendered.get('custom id') as MessagePayload).custom_id).toBe(
      'whois|select||VITALIK.eth',
    );
  });
});
