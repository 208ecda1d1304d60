/**
 * Seeded hostile data for the renderers (hostile.test.ts, and the pseudo-locale check in test/i18n):
 * random mixes of markdown, mentions, bad links, control characters and very long text.
 */
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import type { RenderContext } from '../../src/render/types.ts';
import type {
  Credential,
  CredentialSet,
  DomainInfo,
  Profile,
  WalletBundle,
  WalletGraphEntry,
} from '../../src/web3bio/types.ts';
import { HOSTILE, NOW_SEC } from './fixtures.ts';

const LOCALES = [...SHIPPED_LOCALES, 'en-GB', 'es-419', '', 'xx-invalid-@@', 'ar-EG'];

/** mulberry32: a tiny seeded PRNG. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

const PIECES = [
  HOSTILE,
  '@everyone',
  '@here',
  '<@123456789012345678>',
  '<@&1>',
  '<#2>',
  '[a](javascript:alert(1))',
  '](',
  '`',
  '```',
  '\\',
  '*',
  '_',
  '~~',
  '||',
  '> ',
  '# ',
  '- ',
  '1. ',
  '\n',
  '\r\n',
  '\u202e',
  '\u2066',
  '\u200b',
  '\u0000',
  '\u0085',
  '\ud83d',
  '\ude00',
  '😀',
  '👨‍👩‍👧',
  'https://ok.example/a_(b)',
  'ipfs://QmCID',
  'http://[::1]/',
  'é',
  ' ',
  'x',
  'vitalik.eth',
];

const URLS = [
  null,
  '',
  'javascript:alert(1)',
  'data:text/html,x',
  'https://ok.example/img.png',
  'ipfs://QmCID/x.png',
  'ipns://name.eth',
  `https://long.example/${'a'.repeat(3000)}`,
  'https://user:pw@evil.example/',
  'https://ok.example/\u202e',
  HOSTILE,
];

/** A seeded source of hostile domain objects; `locales` are the render contexts' locales to pick from. */
export function generator(seed: number, locales: readonly string[] = LOCALES) {
  const next = rng(seed);
  const int = (max: number) => Math.floor(next() * max);
  const pick = <T>(list: readonly T[]): T => list[int(list.length)] as T;
  const text = (maxPieces = 12): string => {
    const repeat = next() < 0.05 ? 400 : 1;
    return Array.from({ length: int(maxPieces) }, () => pick(PIECES))
      .join('')
      .repeat(repeat);
  };
  const maybe = <T>(value: () => T): T | null => (next() < 0.3 ? null : value());
  const time = () => (next() < 0.2 ? null : NOW_SEC + int(400 * 86_400) - 200 * 86_400);
  const many = <T>(make: () => T, max: number): T[] => Array.from({ length: int(max) }, make);

  const profile = (): Profile => ({
    address: maybe(() => text(3)),
    identity: text(4),
    platform: pick(['ens', 'farcaster', 'lens', 'sns', 'dotbit', text(2)]),
    displayName: maybe(() => text()),
    avatar: pick(URLS),
    description: maybe(() => text(40)),
    header: pick(URLS),
    status: maybe(() => text()),
    aliases: [],
    email: maybe(() => text(3)),
    location: maybe(() => text(3)),
    contenthash: pick(URLS),
    links: many(() => ({ key: text(2), link: pick(URLS), handle: maybe(() => text(3)), sources: [] }), 40),
    social:
      next() < 0.5 ? null : { uid: null, follower: int(1e9), following: next() < 0.5 ? null : int(1e4) },
    createdAt: time(),
  });

  const credential = (): Credential => ({
    id: maybe(() => text(3)),
    platform: text(2),
    category: pick(['isHuman', 'isRisky', 'isSpam'] as const),
    source: text(3),
    type: pick(['boolean', 'score', text(2)]),
    value: pick(['true', 'false', '47.8', '0', 'NaN', text(3)]),
    label: text(5),
    description: text(30),
    link: pick(URLS),
    updatedAt: time(),
    expiredAt: time(),
  });

  const credentials = (): CredentialSet => ({
    isHuman: many(credential, 15),
    isRisky: many(credential, 15),
    isSpam: many(credential, 15),
  });

  const record = (max: number) => Object.fromEntries(many(() => [text(2), text(5)], max));

  const domain = (): DomainInfo => ({
    identity: `${text(3)}${pick(['.eth', '.base.eth', '.sol', ''])}`,
    platform: pick(['ens', 'basenames', 'linea', 'sns', text(2)]),
    resolvedAddress: maybe(() => text(3)),
    ownerAddress: maybe(() => text(3)),
    managerAddress: maybe(() => text(3)),
    resolverAddress: maybe(() => text(3)),
    isPrimary: next() < 0.5,
    status: maybe(() => text(2)),
    createdAt: time(),
    firstTxAt: time(),
    updatedAt: time(),
    expiredAt: time(),
    contenthash: pick(URLS),
    texts: {
      ...record(30),
      ...(next() < 0.7 ? { url: pick(URLS) ?? '', 'com.twitter': text(2), avatar: pick(URLS) ?? '' } : {}),
    },
    addresses: record(60),
    domains: many(() => text(3), 50),
  });

  const graphEntry = (): WalletGraphEntry => ({
    identity: text(4),
    address: maybe(() => text(3)),
    platform: pick(['ethereum', 'twitter', 'firefly', text(2)]),
    isPrimary: next() < 0.3,
    displayName: maybe(() => text()),
    avatar: pick(URLS),
    description: maybe(() => text(20)),
    updatedAt: time(),
    sources: many(() => text(2), 8),
  });

  const wallet = (): WalletBundle => ({
    ...graphEntry(),
    domains: many(graphEntry, 40),
    credential: credentials(),
    identityGraph: many(graphEntry, 60),
  });

  const context = (): RenderContext => ({
    locale: pick(locales),
    nowSec: NOW_SEC,
    ipfsGateway: pick(['https://ipfs.io', 'https://gw.example/sub/', 'javascript:alert(1)']),
    stale: next() < 0.3 ? { fetchedAt: NOW_SEC * 1000 - int(1e9) } : undefined,
  });

  return { int, text, profile, credentials, domain, wallet, context, pick };
}
