/**
 * Edge-case identities of the default world: hostile text, unusual shapes, credential and expiry
 * situations. Dates are computed from the seeding time so expiry tests stay true.
 */
import { rawCredential, rawProfile } from './builders.ts';
import type { FakeWorld, RawObject } from './world.ts';

const DAY_MS = 86_400_000;

/** A readable fake EVM address: the tag, left-padded with zeros. */
function edgeAddress(tag: string): string {
  return `0x${tag.padStart(40, '0')}`;
}

/** Names and addresses of the seeded edge cases. */
export const EDGE = {
  hostile: 'hostile.eth',
  many: 'many.eth',
  old: 'old.eth',
  new: 'new.eth',
  human: 'human.eth',
  scored: 'scored.eth',
  expired: 'expired.eth',
  spammer: 'spammer.eth',
  clean: 'clean.eth',
  active: 'active.eth',
  expiring: 'expiring.eth',
  grace: 'grace.eth',
  noAvatar: 'noavatar.eth',
  hostileAddress: edgeAddress('bad'),
  manyAddress: edgeAddress('a11'),
  /** An EVM address no profile uses: answered with the minimal `ethereum` object. */
  noNameAddress: edgeAddress('cafe'),
  /** A base58 Solana address with no name; lookups must keep its case. */
  solanaAddress: '7vYh3kRqSoLanaEdgeCaseAddrKeepsCase2xZ9aBcDe',
} as const;

/** The current profile shape with an avatar per identity, the other fields blank unless `extra` sets them. */
function profile(
  platform: string,
  identity: string,
  address: string | null,
  extra: RawObject = {},
): RawObject {
  return rawProfile(platform, identity, address, {
    avatar: `https://avatars.example.com/${encodeURIComponent(identity)}.png`,
    ...extra,
  });
}

function link(url: string, handle: string, sources: string[] = []) {
  return { link: url, handle, sources };
}

function domain(name: string, address: string, expiredAtMs: number, now: number): RawObject {
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    identity: name,
    platform: 'ens',
    resolvedAddress: address,
    ownerAddress: address,
    managerAddress: address,
    resolverAddress: '0x231b0ee14048e9dccd1d247744d114a4eb5e8e63',
    isPrimary: true,
    status: 'cached',
    createdAt: iso(expiredAtMs - 3 * 365 * DAY_MS),
    firstTxAt: iso(expiredAtMs - 3 * 365 * DAY_MS),
    updatedAt: iso(now - 7 * DAY_MS),
    expiredAt: iso(expiredAtMs),
    contenthash: null,
    texts: { url: `https://${name}.limo` },
    addresses: { ethereum: address },
    domains: [],
  };
}

function hostileLinks(): RawObject {
  const links: RawObject = {
    website: link('javascript:alert(1)', 'javascript:alert(1)'),
    github: link('data:text/html,<script>alert(1)</script>', '**bold**'),
    twitter: link('', '@everyone'),
    instagram: link('http://insecure.example.com', '<@123>'),
    farcaster: link('https://farcaster.xyz/hostile', '[x](https://evil.example)'),
    lens: link('ftp://files.example.com/x', '||spoiler||'),
    url: link('https://evil.example/`code`', '`code`'),
    discord: link('https://discord.gg/<@&456>', '@here'),
    telegram: link('vbscript:msgbox(1)', '_italic_'),
    youtube: link('https://www.youtube.com/@hostile', `${'y'.repeat(300)}`),
    nostr: link('nostr:npub1hostile', 'npub1hostile'),
  };
  for (let index = Object.keys(links).length; index < 30; index++) {
    links[`custom${index}`] = link(
      index % 3 === 0 ? '' : `https://link${index}.example.com/`,
      `handle${index}`,
    );
  }
  return links;
}

/** Load every edge case into `world`; `now` (ms) anchors expiry dates. */
export function seedEdgeCases(world: FakeWorld, now: number): void {
  const seconds = Math.floor(now / 1000);
  const address = (tag: string) => edgeAddress(tag);

  // hostile.eth: markdown/mention display name, 5,000-char description, 30 links (javascript:, data:, empty), ipfs avatar, http header, ipns contenthash, string uid, null counts.
  world.addProfile(
    profile('ens', EDGE.hostile, EDGE.hostileAddress, {
      displayName: '**@everyone** <@123> [x](https://evil)',
      avatar: 'ipfs://bafybeihostileavatarcid0000000000000000000000000000000000',
      description: '**bold** @everyone <@&1> [click](javascript:alert(1)) `code` ||spoiler|| '
        .repeat(100)
        .slice(0, 5000),
      header: 'http://insecure.example.com/header.png',
      contenthash: 'ipns://k51qzi5uqu5hostile',
      email: '<@123>@evil.example',
      location: '@here',
      status: '# heading\n> quote',
      links: hostileLinks(),
      social: { uid: 'hostile-uid', follower: null, following: null },
    }),
  );
  // hostile.eth credentials: markdown label and a javascript: link.
  world.setCredentials(EDGE.hostile, {
    isHuman: [
      rawCredential({
        id: `ens,${EDGE.hostile}`,
        category: 'isHuman',
        platform: '**evil**',
        source: '@everyone',
        type: 'boolean',
        value: 'true',
        label: '**@everyone** [verified](javascript:alert(1))',
        link: 'javascript:alert(1)',
        updatedAt: seconds,
      }),
    ],
    isRisky: [],
    isSpam: [],
  });

  // many.eth: one address on 11 platforms, so universal answers exceed what one embed shows.
  for (const [platform, identity] of [
    ['ens', 'many.eth'],
    ['basenames', 'many.base.eth'],
    ['linea', 'many.linea.eth'],
    ['ethereum', EDGE.manyAddress],
    ['farcaster', 'many'],
    ['lens', 'many.lens'],
    ['unstoppabledomains', 'many.crypto'],
    ['dotbit', 'many.bit'],
    ['twitter', 'many_on_x'],
    ['github', 'many-gh'],
    ['nostr', 'npub1many'],
  ] as const) {
    const social = platform === 'farcaster' ? { uid: 424_242, follower: 12, following: 34 } : {};
    world.addProfile(
      profile(platform, identity, EDGE.manyAddress, { displayName: `Many on ${platform}`, social }),
    );
  }

  // old.eth: pre-2025 shape: links without `sources`, no status/header (so /ns lacks them), no createdAt/widgets.
  world.addProfile({
    address: address('01d'),
    identity: EDGE.old,
    platform: 'ens',
    displayName: 'Old Shape',
    avatar: null,
    description: 'From before status and header existed',
    email: null,
    location: null,
    contenthash: null,
    links: { website: { link: 'https://old.example.com', handle: 'old.example.com' } },
    social: {},
  });

  // new.eth: live-only and invented fields (createdAt, widgets, a future object) that clients must ignore.
  world.addProfile(
    profile('ens', EDGE.new, address('e1e'), {
      displayName: 'New Shape',
      links: { website: { ...link('https://new.example.com', 'new.example.com', ['ens']), verified: true } },
      createdAt: '2024-02-29T12:00:00.000Z',
      widgets: [{ type: 'nft-gallery', enabled: true }],
      futureField: { nested: ['anything'], score: 1.5 },
    }),
  );

  // human.eth: one boolean isHuman credential.
  world.addProfile(profile('ens', EDGE.human, address('a0a')));
  world.setCredentials(EDGE.human, {
    isHuman: [
      rawCredential({
        id: `ens,${EDGE.human}`,
        category: 'isHuman',
        platform: 'dentity',
        source: 'dentity',
        type: 'boolean',
        value: 'true',
        label: 'Dentity Humanity Verified',
        updatedAt: seconds - 3600,
      }),
    ],
    isRisky: [],
    isSpam: [],
  });

  // scored.eth: two score credentials, one high (0.87) and one low (0.2).
  world.addProfile(profile('ens', EDGE.scored, address('5c0')));
  world.setCredentials(EDGE.scored, {
    isHuman: [
      rawCredential({
        id: `ens,${EDGE.scored}`,
        category: 'isHuman',
        platform: 'humanpassport',
        source: 'human-passport',
        type: 'score',
        value: '0.87',
        label: 'Passport Humanity Verified',
        link: 'https://app.passport.xyz',
        updatedAt: seconds - 7200,
      }),
      rawCredential({
        id: `ethereum,${address('5c0')}`,
        category: 'isHuman',
        platform: 'talent',
        source: 'talent-protocol',
        type: 'score',
        value: '0.2',
        label: 'Builder Score',
        updatedAt: seconds - 7200,
      }),
    ],
    isRisky: [],
    isSpam: [],
  });

  // expired.eth: isHuman credential that expired yesterday; its ENS name expired 200 days ago (past the 90-day grace).
  world.addProfile(profile('ens', EDGE.expired, address('e0d')));
  world.setCredentials(EDGE.expired, {
    isHuman: [
      rawCredential({
        id: `ens,${EDGE.expired}`,
        category: 'isHuman',
        platform: 'galxe',
        source: 'galxe-passport',
        type: 'boolean',
        value: 'true',
        label: 'Galxe KYC Verified',
        updatedAt: seconds - 400 * 86_400,
        expiredAt: seconds - 86_400,
      }),
    ],
    isRisky: [],
    isSpam: [],
  });
  world.setDomain(EDGE.expired, domain(EDGE.expired, address('e0d'), now - 200 * DAY_MS, now));

  // spammer.eth: both isSpam and isRisky.
  world.addProfile(profile('ens', EDGE.spammer, address('5ba')));
  world.setCredentials(EDGE.spammer, {
    isHuman: [],
    isRisky: [
      rawCredential({
        id: `ens,${EDGE.spammer}`,
        category: 'isRisky',
        platform: 'farcaster',
        source: 'dmca',
        type: 'boolean',
        value: 'true',
        label: 'Copyright Violation',
        link: 'https://web3.bio/p/dmca-notice-policy',
        updatedAt: seconds - 86_400,
      }),
    ],
    isSpam: [
      rawCredential({
        id: `ens,${EDGE.spammer}`,
        category: 'isSpam',
        platform: 'farcaster',
        source: 'farcaster-spam',
        type: 'score',
        value: '0',
        label: 'Spam',
        link: 'https://github.com/warpcast/labels',
        updatedAt: seconds - 86_400,
      }),
    ],
  });

  // clean.eth: known to the credential service, with nothing in any category.
  world.addProfile(profile('ens', EDGE.clean, address('c1e')));
  world.setCredentials(EDGE.clean, { isHuman: [], isRisky: [], isSpam: [] });

  // active.eth: name expires in a year.
  world.addProfile(profile('ens', EDGE.active, address('ac7')));
  world.setDomain(EDGE.active, domain(EDGE.active, address('ac7'), now + 365 * DAY_MS, now));

  // expiring.eth: name expires in 10 days.
  world.addProfile(profile('ens', EDGE.expiring, address('e10')));
  world.setDomain(EDGE.expiring, domain(EDGE.expiring, address('e10'), now + 10 * DAY_MS, now));

  // grace.eth: expired 20 days ago, still inside ENS's 90-day grace period.
  world.addProfile(profile('ens', EDGE.grace, address('90d')));
  world.setDomain(EDGE.grace, domain(EDGE.grace, address('90d'), now - 20 * DAY_MS, now));

  // noavatar.eth: no avatar on any platform (live /avatar answers the SVG placeholder).
  world.addProfile(profile('ens', EDGE.noAvatar, address('0a0'), { avatar: null }));

  // A Solana address with no SNS name: the minimal `solana` object, case kept.
  world.addProfile(
    profile('solana', EDGE.solanaAddress, EDGE.solanaAddress, {
      displayName: `${EDGE.solanaAddress.slice(0, 6)}...${EDGE.solanaAddress.slice(-4)}`,
      avatar: null,
    }),
  );
}
