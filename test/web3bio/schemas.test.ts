import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { SchemaError } from '../../src/web3bio/errors.ts';
import {
  errorReason,
  formatPath,
  parseResponse,
  RawCredentialSet,
  RawDomain,
  RawNsProfile,
  RawNsProfileList,
  RawProfile,
  RawProfileList,
  RawWallet,
  toCredentialSet,
  toDomainInfo,
  toNsProfile,
  toProfile,
  toUnixSeconds,
  toWalletBundle,
} from '../../src/web3bio/schemas.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/web3bio');
const URL = 'http://127.0.0.1/test';

function fixture(name: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, name), 'utf8'));
}

function schemaErrorOf(fn: () => unknown): SchemaError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(SchemaError);
    return error as SchemaError;
  }
  throw new Error('expected SchemaError');
}

const baseProfile = rawProfile('ens', 'vitalik.eth', '0xd8da6bf26964af9d7eed9e03e53415d37aa96045');

describe('every sample fixture parses through its schema', () => {
  const files = readdirSync(FIXTURES).filter((f) => f.endsWith('.json') && !f.startsWith('error-'));

  it('covers the sample files', () => {
    expect(files.length).toBeGreaterThanOrEqual(20);
  });

  it.each(files)('%s', (file) => {
    const data = fixture(file);
    if (file === 'batch-ids-request-example.json') {
      expect(data).toBeInstanceOf(Array);
      return;
    }
    if (file.startsWith('profile-')) {
      const list = Array.isArray(data)
        ? parseResponse(RawProfileList, data, URL).map(toProfile)
        : [toProfile(parseResponse(RawProfile, data, URL))];
      for (const p of list) {
        expect(typeof p.identity).toBe('string');
        expect(Array.isArray(p.links)).toBe(true);
      }
    } else if (file.startsWith('ns-')) {
      const list = Array.isArray(data)
        ? parseResponse(RawNsProfileList, data, URL).map(toNsProfile)
        : [toNsProfile(parseResponse(RawNsProfile, data, URL))];
      for (const p of list) expect(typeof p.platform).toBe('string');
    } else if (file.startsWith('credential-')) {
      const set = toCredentialSet(parseResponse(RawCredentialSet, data, URL));
      expect(set.isHuman.length + set.isRisky.length + set.isSpam.length).toBeGreaterThan(0);
    } else if (file.startsWith('domain-')) {
      expect(toDomainInfo(parseResponse(RawDomain, data, URL)).identity).toBe('sujiyan.eth');
    } else if (file.startsWith('wallet-')) {
      expect(toWalletBundle(parseResponse(RawWallet, data, URL)).identityGraph.length).toBeGreaterThan(0);
    } else {
      throw new Error(`no schema for ${file}`);
    }
  });
});

describe('mapping to domain objects', () => {
  it('maps the universal profile sample', () => {
    const [ens, farcaster] = parseResponse(
      RawProfileList,
      fixture('profile-universal-vitalik.json'),
      URL,
    ).map(toProfile);
    expect(ens?.links.map((l) => l.key)).toEqual(['website', 'github', 'twitter']);
    expect(ens?.links[2]).toEqual({
      key: 'twitter',
      link: 'https://x.com/VitalikButerin',
      handle: 'VitalikButerin',
      sources: ['crowdsourcing', 'nostr'],
    });
    expect(ens?.social).toEqual({ uid: null, follower: 5360, following: 10 });
    expect(farcaster?.social).toEqual({ uid: 5650, follower: 517005, following: 110 });
    expect(ens?.aliases).toEqual([]);
    expect(ens?.createdAt).toBeNull();
  });

  it('maps an empty social object to null and keeps a string uid', () => {
    expect(toProfile(parseResponse(RawProfile, baseProfile, URL)).social).toBeNull();
    const sandy = toProfile(
      parseResponse(
        RawProfile,
        fixture('profile-unstoppabledomains-sandy.historical-docs-2025-12.json'),
        URL,
      ),
    );
    expect(sandy.social).toEqual({ uid: 'sandy.nft', follower: 137, following: 0 });
  });

  it('maps the credential sample, source from credentialSource, category from the array', () => {
    const set = toCredentialSet(
      parseResponse(RawCredentialSet, fixture('credential-ishuman-0xhelena.json'), URL),
    );
    expect(set.isHuman[2]).toEqual({
      id: 'ethereum,0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1',
      platform: 'humanpassport',
      category: 'isHuman',
      source: 'human-passport',
      type: 'score',
      value: '47.8',
      label: 'Passport Humanity Verified',
      description: 'Proof of Personhood by Human Passport',
      link: 'https://app.passport.xyz',
      updatedAt: 1762546524,
      expiredAt: null,
    });
  });

  it('maps the domain sample with ISO dates as Unix seconds', () => {
    const domain = toDomainInfo(parseResponse(RawDomain, fixture('domain-sujiyan.json'), URL));
    expect(domain.createdAt).toBe(Date.UTC(2020, 0, 30, 12, 5, 30) / 1000);
    expect(domain.expiredAt).toBe(Date.UTC(2029, 3, 30, 4, 49, 54) / 1000);
    expect(domain.texts['vnd.github']).toBe('tedko');
    expect(domain.addresses).toEqual({ ethereum: '0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5' });
    expect(domain.isPrimary).toBe(true);
    expect(domain.domains).toEqual([]);
  });

  it('maps the wallet sample: credentials without id, graph with sources', () => {
    const wallet = toWalletBundle(parseResponse(RawWallet, fixture('wallet-web3bio-0x5c51.json'), URL));
    expect(wallet.platform).toBe('ethereum');
    expect(wallet.domains.map((d) => d.identity)).toEqual(['web3.bio', 'web3bio.base.eth']);
    expect(wallet.credential.isHuman[0]?.id).toBeNull();
    expect(wallet.credential.isHuman[0]?.source).toBe('human-passport');
    expect(wallet.identityGraph.at(-1)).toMatchObject({ platform: 'firefly', sources: ['firefly', 'privy'] });
  });
});

describe('drift is tolerated', () => {
  it('accepts links without sources, "" links, extra fields, createdAt and widgets', () => {
    const profile = toProfile(
      parseResponse(
        RawProfile,
        {
          ...baseProfile,
          links: {
            website: { link: '', handle: 'x' },
            github: { link: 'https://github.com/x', handle: 'x' },
          },
          createdAt: '2024-01-02T03:04:05.000Z',
          widgets: [{ kind: 'nft' }],
          somethingInvented: { deep: true },
          platform: 'someNewPlatform',
        },
        URL,
      ),
    );
    expect(profile.links).toEqual([
      { key: 'website', link: null, handle: 'x', sources: [] },
      { key: 'github', link: 'https://github.com/x', handle: 'x', sources: [] },
    ]);
    expect(profile.createdAt).toBe(Date.UTC(2024, 0, 2, 3, 4, 5) / 1000);
    expect(profile.platform).toBe('someNewPlatform');
    expect(profile).not.toHaveProperty('somethingInvented');
  });

  it('accepts missing optional fields (older /ns without header and status, no links or social)', () => {
    const ns = toNsProfile(
      parseResponse(RawNsProfile, { address: null, identity: 'old.eth', platform: 'ens' }, URL),
    );
    expect(ns).toEqual({
      address: null,
      identity: 'old.eth',
      platform: 'ens',
      displayName: null,
      avatar: null,
      description: null,
      header: null,
      status: null,
      aliases: [],
    });
    const profile = toProfile(parseResponse(RawProfile, { identity: 'x.eth', platform: 'ens' }, URL));
    expect(profile.links).toEqual([]);
    expect(profile.social).toBeNull();
  });

  it('accepts social with a string uid and null counts', () => {
    const profile = toProfile(
      parseResponse(
        RawProfile,
        { ...baseProfile, social: { uid: 'abc', follower: null, following: null } },
        URL,
      ),
    );
    expect(profile.social).toEqual({ uid: 'abc', follower: null, following: null });
  });

  it('accepts a credential set with a missing array and numeric values', () => {
    const set = toCredentialSet(
      parseResponse(
        RawCredentialSet,
        {
          isHuman: [{ platform: 'p', category: 'isHuman', type: 'score', value: 0.87, updatedAt: null }],
          isRisky: [],
        },
        URL,
      ),
    );
    expect(set.isHuman[0]).toMatchObject({ value: '0.87', source: 'p', label: '', link: null, id: null });
    expect(set.isSpam).toEqual([]);
  });

  it('accepts domains with missing or odd dates and non-string text values', () => {
    const domain = toDomainInfo(
      parseResponse(
        RawDomain,
        {
          identity: 'x.eth',
          platform: 'ens',
          createdAt: 'not a date',
          expiredAt: 1_800_000_000_000,
          texts: { a: 'b', n: 5, o: { x: 1 } },
          domains: ['a.eth', { identity: 'b.eth' }, 7],
        },
        URL,
      ),
    );
    expect(domain.createdAt).toBeNull();
    expect(domain.expiredAt).toBe(1_800_000_000);
    expect(domain.texts).toEqual({ a: 'b', n: '5' });
    expect(domain.domains).toEqual(['a.eth', 'b.eth']);
    expect(domain.isPrimary).toBe(false);
  });
});

describe('real breakage fails with SchemaError naming the path', () => {
  it('names a broken link handle', () => {
    const data = [{ ...baseProfile, links: { twitter: { link: 'https://x.com/a', handle: 42 } } }];
    const error = schemaErrorOf(() => parseResponse(RawProfileList, data, URL));
    expect(error.path).toBe('[0].links.twitter.handle');
    expect(error.message).toContain('[0].links.twitter.handle');
    expect(error.url).toBe(URL);
  });

  it('fails on the wrong top-level type', () => {
    expect(schemaErrorOf(() => parseResponse(RawProfileList, { error: 'x' }, URL)).path).toBe('');
    expect(schemaErrorOf(() => parseResponse(RawProfile, [], URL)).issues[0]).toContain('expected object');
    expect(schemaErrorOf(() => parseResponse(RawCredentialSet, 'text', URL)).path).toBe('');
  });

  it('fails when identity is not a string', () => {
    const error = schemaErrorOf(() => parseResponse(RawProfile, { ...baseProfile, identity: 5 }, URL));
    expect(error.path).toBe('identity');
  });

  it('names a path inside the wallet graph and quotes odd keys', () => {
    const wallet = fixture('wallet-web3bio-0x5c51.json') as { identityGraph: { platform: unknown }[] };
    const first = wallet.identityGraph[0];
    if (first) first.platform = null;
    expect(schemaErrorOf(() => parseResponse(RawWallet, wallet, URL)).path).toBe('identityGraph[0].platform');
    expect(formatPath(['texts', 'vnd.github', 0])).toBe('texts["vnd.github"][0]');
  });
});

describe('errorReason', () => {
  it.each([
    ['error-404-not-found-web3bio_example.json', 'Not Found'],
    ['error-403-api-key-required.source-literal.json', 'API key required'],
    ['error-403-invalid-api-token.source-literal.json', 'Invalid API token'],
    ['error-429-rate-limited.source-literal.json', '429 Too Many Requests.'],
  ])('%s', (file, fragment) => {
    expect(errorReason(fixture(file))).toContain(fragment);
  });

  it('reads the live shape and ignores everything else', () => {
    expect(
      errorReason({ identity: 'x', path: '/profile/x', platform: 'ens', error: 'Invalid Identity' }),
    ).toBe('Invalid Identity');
    expect(errorReason('plain text')).toBeNull();
    expect(errorReason({ error: 5 })).toBeNull();
    expect(errorReason(null)).toBeNull();
  });
});

describe('toUnixSeconds', () => {
  it.each([
    [1762546524, 1762546524],
    [1762546524123, 1762546524],
    ['1762546524', 1762546524],
    ['2020-01-30T12:05:30.000Z', 1580385930],
    ['', null],
    ['garbage', null],
    [null, null],
    [undefined, null],
    [Number.NaN, null],
  ])('%s -> %s', (input, seconds) => {
    expect(toUnixSeconds(input)).toBe(seconds);
  });
});
