import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EDGE } from '../../../fakes/web3bio/edgeCases.ts';
import { readFixture } from '../../../fakes/web3bio/seed.ts';
import {
  type FakeWeb3Bio,
  type FakeWeb3BioOptions,
  startFakeWeb3Bio,
} from '../../../fakes/web3bio/server.ts';

const FULL_KEY = 'full-key-123';
const BASIC_KEY = 'basic-key-456';
const API_KEYS = { [FULL_KEY]: 'full', [BASIC_KEY]: 'basic' } as const;
const CACHE_OK = 'public, max-age=7200, s-maxage=7200, stale-while-revalidate=86400';
const WALLET_ADDRESS = '0x5c51b52694719931919aebb2dccf7ca3447d0608';
const VITALIK = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';

type Json = Record<string, unknown>;

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json<T = Json>(): T;
}

async function get(base: string, path: string, key?: string): Promise<Answer> {
  const headers: Record<string, string> = key === undefined ? {} : { 'x-api-key': key };
  const response = await fetch(`${base}${path}`, { headers, redirect: 'manual' });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, json: <T>() => JSON.parse(text) as T };
}

function batchPath(route: 'profile' | 'ns', ids: unknown): string {
  return `/${route}/batch/${encodeURIComponent(JSON.stringify(ids))}`;
}

async function withFake(
  options: FakeWeb3BioOptions,
  run: (fake: FakeWeb3Bio) => Promise<void>,
): Promise<void> {
  const fake = await startFakeWeb3Bio(options);
  try {
    await run(fake);
  } finally {
    await fake.close();
  }
}

describe('fake Web3.bio, live mode', () => {
  let fake: FakeWeb3Bio;
  const call = (path: string, key?: string) => get(fake.url, path, key);

  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ apiKeys: API_KEYS });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('listens on 127.0.0.1 at an ephemeral port', () => {
    expect(fake.url).toBe(`http://127.0.0.1:${fake.port}`);
    expect(fake.port).toBeGreaterThan(0);
  });

  describe('profiles', () => {
    it('serves the universal vitalik.eth sample, and its /ns projection', async () => {
      const profile = await call('/profile/vitalik.eth');
      expect(profile.status).toBe(200);
      expect(profile.headers.get('cache-control')).toBe(CACHE_OK);
      expect(profile.headers.get('content-type')).toContain('application/json');
      expect(profile.json()).toEqual(readFixture('profile-universal-vitalik.json'));
      const ns = (await call('/ns/VITALIK.ETH')).json<Json[]>();
      expect(ns).toMatchObject(readFixture<Json[]>('ns-universal-vitalik.json'));
      for (const row of ns) expect(Object.keys(row)).not.toContain('links');
    });

    it('serves each platform sample from its platform route', async () => {
      for (const [path, fixture] of [
        ['/profile/farcaster/dwr.eth', 'profile-farcaster-dwr.json'],
        ['/profile/lens/stani.lens', 'profile-lens-stani.json'],
        ['/profile/basenames/tony.base.eth', 'profile-basenames-tony.json'],
        ['/profile/linea/name.linea.eth', 'profile-linea-name.json'],
        ['/profile/solana/bonfida.sol', 'profile-sns-bonfida.json'],
        ['/profile/sns/bonfida.sol', 'profile-sns-bonfida.json'],
        [
          '/profile/unstoppabledomains/sandy.nft',
          'profile-unstoppabledomains-sandy.historical-docs-2025-12.json',
        ],
        ['/ns/ens/vitalik.eth', 'ns-ens-vitalik.json'],
        ['/ns/linea/name.linea.eth', 'ns-linea-name.json'],
      ] as const) {
        const answer = await call(path);
        expect(answer.status, path).toBe(200);
        expect(answer.json(), path).toEqual(readFixture(fixture));
      }
    });

    it('answers the platform and fields of the samples whose data is older than the canonical one', async () => {
      for (const [path, fixture, identity] of [
        ['/profile/ens/vitalik.eth', 'profile-ens-vitalik.json', 'vitalik.eth'],
        ['/ns/farcaster/dwr', 'ns-farcaster-dwr.json', 'dwr.eth'],
        ['/ns/lens/stani.lens', 'ns-lens-stani.json', 'stani.lens'],
        ['/ns/basenames/tony.base.eth', 'ns-basenames-tony.json', 'tony.base.eth'],
        ['/ns/solana/bonfida.sol', 'ns-sns-bonfida.json', 'bonfida.sol'],
        [
          '/ns/unstoppabledomains/sandy.nft',
          'ns-unstoppabledomains-sandy.historical-docs-2025-12.json',
          'sandy.nft',
        ],
      ] as const) {
        const answer = (await call(path)).json();
        const sample = readFixture<Json>(fixture);
        expect(answer, path).toMatchObject({ platform: sample.platform, identity });
        expect(Object.keys(answer), path).toEqual(expect.arrayContaining(Object.keys(sample)));
      }
    });

    it('accepts every Farcaster identity form', async () => {
      for (const id of [
        'dwr',
        'dwr.eth',
        'dwr.farcaster',
        'DWR.fcast.id',
        'farcaster,#3',
        'fid:3',
        '0xd7029bdea1c17493893aafe29aad69ef892b8ff2',
      ]) {
        const answer = await call(`/profile/farcaster/${encodeURIComponent(id)}`);
        expect(answer.status, id).toBe(200);
        expect(answer.json().identity, id).toBe('dwr.eth');
      }
      expect((await call('/profile/farcaster/farcaster%2C%2399999999')).status).toBe(404);
    });

    it('writes .base and .linea as .base.eth and .linea.eth, and matches case-insensitively', async () => {
      expect((await call('/profile/basenames/Tony.Base')).json().identity).toBe('tony.base.eth');
      expect((await call('/ns/linea/NAME.linea')).json().identity).toBe('name.linea.eth');
      expect((await call(`/profile/ens/${VITALIK.toUpperCase().replace('0X', '0x')}`)).json().identity).toBe(
        'vitalik.eth',
      );
    });

    it('keeps the case of base58 Solana addresses', async () => {
      const sns = await call('/profile/solana/HKKp49qGWXd639QsuH7JiLijfVW5UtCVY4s1n2HANwEA');
      expect(sns.json().identity).toBe('bonfida.sol');
      expect((await call('/profile/solana/hkkp49qgwxd639qsuh7jilijfvw5utcvy4s1n2hanwea')).status).toBe(404);
      const bare = await call(`/profile/${EDGE.solanaAddress}`);
      expect(bare.json<Json[]>()).toMatchObject([{ platform: 'solana', identity: EDGE.solanaAddress }]);
      expect((await call(`/profile/solana/${EDGE.solanaAddress}`)).json().platform).toBe('solana');
    });

    it('answers a minimal ethereum object for an address with no name', async () => {
      const universal = await call(`/profile/${EDGE.noNameAddress}`);
      expect(universal.json()).toEqual([
        expect.objectContaining({
          platform: 'ethereum',
          identity: EDGE.noNameAddress,
          address: EDGE.noNameAddress,
          displayName: '0x0000...cafe',
        }),
      ]);
      expect((await call(`/profile/ens/${EDGE.noNameAddress}`)).json().platform).toBe('ethereum');
      expect((await call(`/profile/ethereum/vitalik.eth`)).json()).toMatchObject({
        identity: VITALIK,
        platform: 'ethereum',
      });
      expect((await call(`/profile/lens/${EDGE.noNameAddress}`)).status).toBe(404);
    });

    it('answers 404 with the live error body for unknown identities', async () => {
      const answer = await call('/profile/ens/web3bio_example.eth');
      expect(answer.status).toBe(404);
      expect(answer.headers.get('cache-control')).toBe('no-store');
      expect(answer.json()).toEqual({
        identity: 'web3bio_example.eth',
        path: '/profile/ens/web3bio_example.eth',
        platform: 'ens',
        error: 'Not Found',
      });
      expect((await call('/profile/nobody.eth')).json().error).toBe('Not Found');
      expect((await call('/profile/not%20an%20identity')).json().error).toBe('Invalid Identity or Domain');
    });

    it('refuses empty identities, bad encodings, unknown routes and other methods', async () => {
      expect((await call('/profile/')).status).toBe(400);
      expect((await call('/ns/ens/')).status).toBe(400);
      expect((await call('/profile/%E0%A4%A')).status).toBe(400);
      for (const path of [
        '/',
        '/profile',
        '/profile/twitter/x',
        '/profile/ens/a.eth/extra',
        '/unknown/a.eth',
        '/avatar',
      ]) {
        const answer = await call(path);
        expect(answer.status, path).toBe(404);
        expect(answer.json().error, path).toBeTypeOf('string');
      }
      const post = await fetch(`${fake.url}/profile/vitalik.eth`, { method: 'POST' });
      expect(post.status).toBe(405);
      expect(post.headers.get('allow')).toBe('GET');
      await post.body?.cancel();
    });

    it('serves the edge cases', async () => {
      const hostile = (await call(`/profile/ens/${EDGE.hostile}`)).json();
      expect(hostile.displayName).toBe('**@everyone** <@123> [x](https://evil)');
      expect(hostile.description).toHaveLength(5000);
      expect(Object.keys(hostile.links as Json)).toHaveLength(30);
      expect(hostile.social).toEqual({ uid: 'hostile-uid', follower: null, following: null });
      expect(hostile.avatar).toMatch(/^ipfs:\/\//);
      expect(hostile.header).toMatch(/^http:\/\//);
      expect(hostile.contenthash).toMatch(/^ipns:\/\//);
      const many = (await call(`/profile/${EDGE.many}`)).json<Json[]>();
      expect(new Set(many.map((p) => p.platform)).size).toBeGreaterThanOrEqual(10);
      const old = (await call(`/ns/ens/${EDGE.old}`)).json();
      expect(old).not.toHaveProperty('header');
      expect(old).not.toHaveProperty('status');
      const oldLinks = (await call(`/profile/ens/${EDGE.old}`)).json().links as Record<string, Json>;
      expect(oldLinks.website).not.toHaveProperty('sources');
      expect((await call(`/profile/ens/${EDGE.new}`)).json()).toMatchObject({
        widgets: expect.any(Array),
        futureField: expect.any(Object),
      });
    });
  });

  describe('batch', () => {
    const sampleIds = readFixture<string[]>('batch-ids-request-example.json');

    it('resolves the sample request, marks each result with aliases and does not keep request order', async () => {
      const answer = await call(batchPath('profile', sampleIds));
      expect(answer.status).toBe(200);
      const rows = answer.json<Json[]>();
      expect(rows).toHaveLength(sampleIds.length);
      const matched = sampleIds.map((id) => rows.findIndex((row) => (row.aliases as string[]).includes(id)));
      expect(matched).not.toContain(-1);
      expect(matched).not.toEqual(sampleIds.map((_, index) => index));
      const sujiyan = rows.find((row) => (row.aliases as string[]).includes(sampleIds[4] ?? ''));
      expect(sujiyan).toMatchObject({ identity: 'sujiyan.eth', platform: 'ens' });
      for (const sample of readFixture<Json[]>('profile-batch-with-aliases.json')) {
        const row = rows.find((r) => r.platform === sample.platform && r.identity === sample.identity);
        expect(row, String(sample.identity)).toBeDefined();
      }
    });

    it('projects /ns batch rows, merges ids that name one profile and drops the unresolvable', async () => {
      const ids = [
        'ens,vitalik.eth',
        `ens,${VITALIK}`,
        'ens,nobody.eth',
        'twitter,jack',
        'no-comma',
        'farcaster,#3',
        'ethereum,vitalik.eth',
      ];
      const rows = (await call(batchPath('ns', ids))).json<Json[]>();
      expect(rows.map((r) => `${r.platform},${r.identity}`).sort()).toEqual([
        'ens,vitalik.eth',
        'farcaster,dwr.eth',
      ]);
      const vitalik = rows.find((r) => r.identity === 'vitalik.eth');
      expect(vitalik?.aliases).toEqual(
        expect.arrayContaining(['ens,vitalik.eth', `ens,${VITALIK}`, 'ethereum,vitalik.eth']),
      );
      expect(Object.keys(vitalik ?? {})).toEqual(
        expect.arrayContaining(Object.keys(readFixture<Json[]>('ns-batch-with-aliases.json')[0] ?? {})),
      );
      expect(vitalik).not.toHaveProperty('links');
    });

    it('refuses more than 30 ids and anything but a JSON array of strings', async () => {
      const ids = Array.from({ length: 31 }, (_, index) => `ens,name${index}.eth`);
      const tooMany = await call(batchPath('profile', ids));
      expect(tooMany.status).toBe(400);
      expect(tooMany.json().error).toBeTypeOf('string');
      expect((await call(batchPath('profile', ids.slice(0, 30)))).status).toBe(200);
      expect((await call(batchPath('ns', { ids: ['ens,vitalik.eth'] }))).status).toBe(400);
      expect((await call(batchPath('ns', [1, 2]))).status).toBe(400);
      expect((await call('/profile/batch/%5Bnot-json')).status).toBe(400);
    });
  });

  describe('credentials, domains, wallet, avatar', () => {
    it('serves credentials by platform,identity, bare identity or address', async () => {
      const helena = readFixture('credential-ishuman-0xhelena.json');
      expect((await call('/credential/ens%2C0xhelena.eth')).json()).toEqual(helena);
      expect((await call('/credential/0xhelena.eth')).json()).toEqual(helena);
      expect((await call('/credential/ethereum,0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1')).json()).toEqual(
        helena,
      );
      expect((await call('/credential/farcaster,ggmonster')).json()).toEqual(
        readFixture('credential-isrisky-isspam-ggmonster.json'),
      );
      const missing = await call('/credential/ens,vitalik.eth');
      expect(missing.status).toBe(404);
      expect(missing.json().error).toBe('Not Found');
    });

    it('serves domains with a 900 s cache and refuses non-domain names', async () => {
      const domain = await call('/domain/sujiyan.eth');
      expect(domain.json()).toEqual(readFixture('domain-sujiyan.json'));
      expect(domain.headers.get('cache-control')).toBe(
        'public, max-age=900, s-maxage=900, stale-while-revalidate=86400',
      );
      const farcaster = await call('/domain/dwr.farcaster');
      expect(farcaster.status).toBe(404);
      expect(farcaster.json().error).toBe('Invalid Identity or Domain');
      const grace = (await call(`/domain/${EDGE.grace}`)).json();
      expect(Date.parse(String(grace.expiredAt))).toBeLessThan(Date.now());
    });

    it('guards /wallet by key permission with the live 403 bodies', async () => {
      const none = await call(`/wallet/${WALLET_ADDRESS}`);
      expect(none.status).toBe(403);
      expect(none.json()).toEqual(readFixture('error-403-api-key-required.source-literal.json'));
      const basic = await call(`/wallet/${WALLET_ADDRESS}`, `Bearer ${BASIC_KEY}`);
      expect(basic.status).toBe(403);
      expect(basic.json()).toEqual(readFixture('error-403-insufficient-permissions.source-literal.json'));
      const full = await call(`/wallet/${WALLET_ADDRESS}`, `Bearer ${FULL_KEY}`);
      expect(full.status).toBe(200);
      expect(full.json()).toEqual(readFixture('wallet-web3bio-0x5c51.json'));
      expect((await call('/wallet/web3.bio', FULL_KEY)).json().identity).toBe(WALLET_ADDRESS);
      expect((await call('/wallet/nobody.eth', FULL_KEY)).status).toBe(404);
    });

    it('refuses an unknown key on every route, and never echoes it', async () => {
      for (const path of ['/profile/vitalik.eth', '/avatar/vitalik.eth', `/wallet/${WALLET_ADDRESS}`]) {
        const answer = await call(path, 'Bearer wrong-secret-key');
        expect(answer.status, path).toBe(403);
        expect(answer.json(), path).toEqual(readFixture('error-403-invalid-api-token.source-literal.json'));
        expect(answer.text).not.toContain('wrong-secret-key');
      }
      expect((await call('/profile/vitalik.eth', BASIC_KEY)).status).toBe(200);
    });

    it('answers avatars with 307 Location, an SVG placeholder, or a 200 JSON lookup error', async () => {
      const found = await call('/avatar/sujiyan.eth');
      expect(found.status).toBe(307);
      expect(found.headers.get('location')).toBe(readFixture<string>('avatar-sujiyan.location.txt'));
      expect(found.headers.get('cache-control')).toBe(
        'public, max-age=86400, s-maxage=86400, stale-while-revalidate=86400',
      );
      const none = await call(`/avatar/${EDGE.noAvatar}`);
      expect(none.status).toBe(200);
      expect(none.headers.get('content-type')).toBe('image/svg+xml');
      expect(none.text).toMatch(/^<svg[\s\S]*<\/svg>$/);
      const failed = await call('/avatar/nobody.eth');
      expect(failed.status).toBe(200);
      expect(failed.headers.get('cache-control')).toBe('no-store');
      expect(failed.json()).toEqual({
        identity: 'nobody.eth',
        platform: 'ens',
        message: 'Not Found',
        code: 404,
      });
    });
  });

  describe('world changes', () => {
    it('serves changed data and reset restores the default world', async () => {
      fake.world.removeProfile('lens', 'stani.lens');
      fake.world.addProfile({ platform: 'lens', identity: 'new.lens', address: VITALIK, displayName: 'New' });
      fake.world.setDomain('sujiyan.eth', null);
      fake.world.setWallet('vitalik.eth', { identity: 'custom', domains: [] });
      fake.world.setAvatar('vitalik.eth', 'https://example.com/override.png');
      expect((await call('/profile/lens/stani.lens')).status).toBe(404);
      expect((await call('/profile/lens/new.lens')).json().displayName).toBe('New');
      expect((await call('/domain/sujiyan.eth')).json()).not.toEqual(readFixture('domain-sujiyan.json'));
      expect((await call('/wallet/vitalik.eth', FULL_KEY)).json()).toEqual({
        identity: 'custom',
        domains: [],
      });
      expect((await call('/avatar/vitalik.eth')).headers.get('location')).toBe(
        'https://example.com/override.png',
      );
      fake.reset();
      expect((await call('/profile/lens/stani.lens')).status).toBe(200);
      expect((await call('/profile/lens/new.lens')).status).toBe(404);
      expect((await call('/domain/sujiyan.eth')).json()).toEqual(readFixture('domain-sujiyan.json'));
      expect((await call('/avatar/vitalik.eth')).headers.get('location')).toBe('https://euc.li/vitalik.eth');
    });
  });

  describe('recording and faults', () => {
    it('records every request with its raw path and headers', async () => {
      fake.addFault({ match: '/profile/dropped.eth', action: { kind: 'drop' } });
      await call('/profile/farcaster/farcaster%2C%233', `Bearer ${FULL_KEY}`);
      await expect(call('/profile/dropped.eth')).rejects.toThrow();
      expect(fake.requests.map((r) => r.path)).toEqual([
        '/profile/farcaster/farcaster%2C%233',
        '/profile/dropped.eth',
      ]);
      const [first] = fake.requests;
      expect(first?.method).toBe('GET');
      expect(first?.headers['x-api-key']).toBe(`Bearer ${FULL_KEY}`);
      expect(first?.at).toBeGreaterThan(Date.now() - 10_000);
      fake.reset();
      expect(fake.requests).toHaveLength(0);
    });

    it('answers a status fault with its body and headers, only on matching decoded paths', async () => {
      fake.addFault({
        match: /farcaster,#3$/,
        action: {
          kind: 'status',
          status: 502,
          body: { error: 'HTTP 502: Bad Gateway' },
          headers: { 'x-fault': 'yes' },
        },
      });
      const faulted = await call('/profile/farcaster/farcaster%2C%233');
      expect(faulted.status).toBe(502);
      expect(faulted.json()).toEqual({ error: 'HTTP 502: Bad Gateway' });
      expect(faulted.headers.get('x-fault')).toBe('yes');
      expect(faulted.headers.get('cache-control')).toBe('no-store');
      expect((await call('/profile/farcaster/dwr.eth')).status).toBe(200);
      fake.addFault({ action: { kind: 'status', status: 500 } });
      const defaultBody = await call('/credential/0xhelena.eth');
      expect(defaultBody.status).toBe(500);
      expect(defaultBody.json().error).toBe('HTTP 500: Internal Server Error');
    });

    it('honours times, then answers normally', async () => {
      fake.addFault({ match: 'vitalik', times: 2, action: { kind: 'status', status: 503 } });
      const statuses = [];
      for (let index = 0; index < 3; index++) statuses.push((await call('/profile/vitalik.eth')).status);
      expect(statuses).toEqual([503, 503, 200]);
    });

    it('answers rate-limit faults with Retry-After only when given', async () => {
      fake.addFault({ times: 1, action: { kind: 'rate-limit' } });
      fake.addFault({ times: 1, action: { kind: 'rate-limit', retryAfterSeconds: 7 } });
      const bare = await call('/profile/vitalik.eth');
      expect(bare.status).toBe(429);
      expect(bare.headers.get('retry-after')).toBeNull();
      expect(bare.json()).toEqual(readFixture('error-429-rate-limited.source-literal.json'));
      const timed = await call('/profile/vitalik.eth');
      expect(timed.status).toBe(429);
      expect(timed.headers.get('retry-after')).toBe('7');
    });

    it('answers malformed JSON with status 200', async () => {
      fake.addFault({ times: 1, action: { kind: 'malformed' } });
      const answer = await call('/profile/vitalik.eth');
      expect(answer.status).toBe(200);
      expect(answer.headers.get('content-type')).toContain('application/json');
      expect(() => JSON.parse(answer.text)).toThrow(SyntaxError);
    });

    it('delays latency faults and the server-wide latency, then answers normally', async () => {
      fake.addFault({ times: 1, action: { kind: 'latency', ms: 150 } });
      let started = performance.now();
      expect((await call('/profile/vitalik.eth')).status).toBe(200);
      expect(performance.now() - started).toBeGreaterThanOrEqual(140);
      fake.setLatency(100);
      started = performance.now();
      await call('/ns/vitalik.eth');
      expect(performance.now() - started).toBeGreaterThanOrEqual(90);
      fake.reset();
      started = performance.now();
      await call('/ns/vitalik.eth');
      expect(performance.now() - started).toBeLessThan(90);
    });

    it('drops the connection without answering, and clearFaults removes faults', async () => {
      fake.addFault({ match: 'stani', action: { kind: 'drop' } });
      await expect(call('/profile/lens/stani.lens')).rejects.toThrow();
      expect((await call('/profile/lens/vitalik.lens')).status).toBe(200);
      fake.clearFaults();
      expect((await call('/profile/lens/stani.lens')).status).toBe(200);
    });
  });
});

describe('fake Web3.bio, spec mode', () => {
  let fake: FakeWeb3Bio;
  const call = (path: string, key?: string) => get(fake.url, path, key);

  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ mode: 'spec', apiKeys: API_KEYS });
  });
  afterAll(() => fake.close());

  it('answers the spec error body', async () => {
    const answer = await call('/profile/ens/web3bio_example.eth');
    expect(answer.status).toBe(404);
    expect(answer.json()).toEqual(readFixture('error-404-not-found-web3bio_example.json'));
  });

  it('answers 401 for a missing or invalid key', async () => {
    expect((await call(`/wallet/${WALLET_ADDRESS}`)).status).toBe(401);
    expect((await call('/profile/vitalik.eth', 'Bearer nope')).status).toBe(401);
    expect((await call(`/wallet/${WALLET_ADDRESS}`, BASIC_KEY)).status).toBe(403);
    expect((await call(`/wallet/${WALLET_ADDRESS}`, FULL_KEY)).status).toBe(200);
  });

  it('answers avatars as a plain-text URL', async () => {
    const found = await call('/avatar/sujiyan.eth');
    expect(found.status).toBe(200);
    expect(found.headers.get('content-type')).toContain('text/plain');
    expect(found.text).toBe(readFixture<string>('avatar-sujiyan.location.txt'));
    const none = await call(`/avatar/${EDGE.noAvatar}`);
    expect([none.status, none.text]).toEqual([200, '']);
    expect((await call('/avatar/nobody.eth')).status).toBe(404);
  });
});

describe('rate limits', () => {
  it('limits keyless requests per server without Retry-After; keys and /avatar are exempt', async () => {
    await withFake(
      { apiKeys: API_KEYS, keylessRateLimit: { requests: 2, windowMs: 60_000 } },
      async (fake) => {
        const statuses = [];
        for (let index = 0; index < 3; index++)
          statuses.push((await get(fake.url, '/ns/vitalik.eth')).status);
        expect(statuses).toEqual([200, 200, 429]);
        const limited = await get(fake.url, '/ns/vitalik.eth');
        expect(limited.headers.get('retry-after')).toBeNull();
        expect(limited.json()).toEqual(readFixture('error-429-rate-limited.source-literal.json'));
        expect((await get(fake.url, '/ns/vitalik.eth', BASIC_KEY)).status).toBe(200);
        expect((await get(fake.url, '/avatar/vitalik.eth')).status).toBe(307);
        fake.reset();
        expect((await get(fake.url, '/ns/vitalik.eth')).status).toBe(200);
      },
    );
  });

  it('lets the keyless window slide', async () => {
    await withFake({ keylessRateLimit: { requests: 1, windowMs: 150 } }, async (fake) => {
      expect((await get(fake.url, '/ns/vitalik.eth')).status).toBe(200);
      expect((await get(fake.url, '/ns/vitalik.eth')).status).toBe(429);
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect((await get(fake.url, '/ns/vitalik.eth')).status).toBe(200);
    });
  });

  it('applies the global limit to keyed requests too', async () => {
    await withFake(
      { apiKeys: API_KEYS, globalRateLimit: { requests: 1, windowMs: 60_000 } },
      async (fake) => {
        expect((await get(fake.url, '/ns/vitalik.eth', FULL_KEY)).status).toBe(200);
        const limited = await get(fake.url, '/ns/vitalik.eth', FULL_KEY);
        expect(limited.status).toBe(429);
        expect(limited.json().error).toMatch(/^429 Too Many Requests/);
      },
    );
  });
});

describe('unseeded world', () => {
  it('starts empty when seed is false, and reset keeps it empty', async () => {
    await withFake({ seed: false }, async (fake) => {
      expect((await get(fake.url, '/profile/vitalik.eth')).status).toBe(404);
      fake.world.addProfile({ platform: 'ens', identity: 'only.eth', address: null });
      expect((await get(fake.url, '/profile/only.eth')).status).toBe(200);
      fake.reset();
      expect((await get(fake.url, '/profile/only.eth')).status).toBe(404);
    });
  });
});

describe('runner', () => {
  it('prints its URL and a hint, serves, and stops cleanly on SIGTERM', async () => {
    const main = fileURLToPath(new URL('../../../fakes/web3bio/main.ts', import.meta.url));
    const child = spawn(process.execPath, [main, '--mode', 'spec', '--latency', '0'], {
      env: { ...process.env, FAKE_WEB3BIO_PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let output = '';
      const url = await new Promise<string>((resolve, reject) => {
        child.stdout.on('data', (chunk: Buffer) => {
          output += chunk.toString();
          const match = /WEB3BIO_API_URL=(http:\/\/127\.0\.0\.1:\d+) npm start/.exec(output);
          if (match?.[1]) resolve(match[1]);
        });
        child.once('exit', () => reject(new Error(`runner exited early: ${output}`)));
      });
      expect(output).toContain('spec mode');
      expect((await get(url, '/profile/ens/web3bio_example.eth')).json()).toHaveProperty('address', null);
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const [code] = await exited;
      expect(code).toBe(0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
