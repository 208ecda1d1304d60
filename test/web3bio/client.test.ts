import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import { MemoryStore } from '../../src/cache/memoryStore.ts';
import { renderError } from '../../src/render/errors.ts';
import {
  createClientCacheOptions,
  DEFAULT_USER_AGENT,
  MAX_BATCH_IDS,
  Web3BioClient,
  type Web3BioClientOptions,
} from '../../src/web3bio/client.ts';
import {
  ApiKeyRequiredError,
  InvalidIdentityError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  SchemaError,
  TimeoutError,
  UnauthorizedError,
  UpstreamError,
  type Web3BioError,
} from '../../src/web3bio/errors.ts';

const RENDER_CTX = { locale: 'en-US', nowSec: 1_780_000_000, ipfsGateway: 'https://ipfs.io' };

const FULL_KEY = 'k-full-0123456789';
const BASIC_KEY = 'k-basic-0123456789';
const VITALIK = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';
const WALLET = '0x5c51b52694719931919aebb2dccf7ca3447d0608';
const FAST_RETRY = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 };

const clients: Web3BioClient[] = [];

function clientFor(fake: FakeWeb3Bio, options: Web3BioClientOptions = {}): Web3BioClient {
  const client = new Web3BioClient({
    baseUrl: fake.url,
    apiKey: FULL_KEY,
    retry: FAST_RETRY,
    rateLimit: null,
    ...options,
  });
  clients.push(client);
  return client;
}

/** A client whose cache runs on a clock the test moves. */
function clockedClient(fake: FakeWeb3Bio, options: Web3BioClientOptions = {}) {
  const clock = { now: 1_000_000 };
  const cache = createLookupCache({
    store: new MemoryStore(),
    now: () => clock.now,
    ...createClientCacheOptions(),
  });
  return { client: clientFor(fake, { cache, ...options }), clock };
}

async function rejection(promise: Promise<unknown>): Promise<Web3BioError> {
  try {
    await promise;
  } catch (error) {
    return error as Web3BioError;
  }
  throw new Error('expected a rejection');
}

function paths(fake: FakeWeb3Bio): string[] {
  return fake.requests.map((r) => r.path);
}

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

describe.each(['live', 'spec'] as const)('every endpoint against the stand-in (%s mode)', (mode) => {
  let fake: FakeWeb3Bio;

  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ mode, apiKeys: { [FULL_KEY]: 'full', [BASIC_KEY]: 'basic' } });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('getProfiles: universal array, normalised identity on the wire', async () => {
    const fetched = await clientFor(fake).getProfiles('Vitalik.ETH');
    expect(fetched.data.map((p) => p.platform)).toEqual(['ens', 'farcaster', 'lens']);
    expect(fetched.data[0]?.links.find((l) => l.key === 'twitter')?.sources).toEqual([
      'crowdsourcing',
      'nostr',
    ]);
    expect(fetched).toMatchObject({ stale: false, cached: false });
    expect(paths(fake)).toEqual(['/profile/vitalik.eth']);
    expect(fake.requests[0]?.headers['user-agent']).toBe(DEFAULT_USER_AGENT);
  });

  it.each([
    ['ens', 'vitalik.eth', '/profile/ens/vitalik.eth', 'ens'],
    ['farcaster', 'dwr.eth', '/profile/farcaster/dwr.eth', 'farcaster'],
    ['farcaster', 'fid:3', '/profile/farcaster/farcaster%2C%233', 'farcaster'],
    ['lens', 'stani.lens', '/profile/lens/stani.lens', 'lens'],
    ['basenames', 'tony.base', '/profile/basenames/tony.base.eth', 'basenames'],
    ['linea', 'name.linea', '/profile/linea/name.linea.eth', 'linea'],
    ['solana', 'bonfida.sol', '/profile/solana/bonfida.sol', 'sns'],
    ['unstoppabledomains', 'sandy.nft', '/profile/unstoppabledomains/sandy.nft', 'unstoppabledomains'],
    ['dotbit', 'many.bit', '/profile/dotbit/many.bit', 'dotbit'],
  ] as const)('getPlatformProfile(%s, %s)', async (platform, identity, path, answered) => {
    const fetched = await clientFor(fake).getPlatformProfile(platform, identity);
    expect(fetched.data.platform).toBe(answered);
    expect(paths(fake)).toEqual([path]);
  });

  it('getNsProfiles and getPlatformNsProfile', async () => {
    const client = clientFor(fake);
    const universal = await client.getNsProfiles(VITALIK.toUpperCase().replace('0X', '0x'));
    expect(universal.data[0]?.address).toBe(VITALIK);
    expect(universal.data[0]).not.toHaveProperty('links');
    const sns = await client.getPlatformNsProfile('solana', 'bonfida.sol');
    expect(sns.data).toMatchObject({ identity: 'bonfida.sol', platform: 'sns' });
    expect(paths(fake)).toEqual([`/ns/${VITALIK}`, '/ns/solana/bonfida.sol']);
  });

  it('getCredentials for an identity and a platform,identity id', async () => {
    const client = clientFor(fake);
    const helena = await client.getCredentials('0xhelena.eth');
    expect(helena.data.isHuman.map((c) => c.source)).toEqual(['dentity', 'galxe-passport', 'human-passport']);
    const monster = await client.getCredentials('Farcaster,GGMonster');
    expect(monster.data.isSpam[0]).toMatchObject({ category: 'isSpam', type: 'score', value: '0' });
    expect(paths(fake)).toEqual(['/credential/0xhelena.eth', '/credential/farcaster%2Cggmonster']);
  });

  it('getDomain, and names the domain route cannot take are refused without a request', async () => {
    const client = clientFor(fake);
    const domain = await client.getDomain('SujiYan.eth');
    expect(domain.data.expiredAt).toBe(Date.UTC(2029, 3, 30, 4, 49, 54) / 1000);
    expect(await rejection(client.getDomain('dwr.farcaster'))).toBeInstanceOf(InvalidIdentityError);
    expect(paths(fake)).toEqual(['/domain/sujiyan.eth']);
  });

  it('getWallet with a full key; a basic key is refused', async () => {
    const wallet = await clientFor(fake).getWallet(WALLET);
    expect(wallet.data.identityGraph.length).toBeGreaterThan(3);
    expect(wallet.data.credential.isHuman[0]?.id).toBeNull();
    const error = await rejection(clientFor(fake, { apiKey: BASIC_KEY }).getWallet(WALLET));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(403);
  });

  it('getWallet without a key: ApiKeyRequiredError and no request', async () => {
    const client = clientFor(fake, { apiKey: undefined });
    expect(client.hasApiKey).toBe(false);
    expect(await rejection(client.getWallet(WALLET))).toBeInstanceOf(ApiKeyRequiredError);
    expect(await rejection(clientFor(fake, { apiKey: '   ' }).getWallet(WALLET))).toBeInstanceOf(
      ApiKeyRequiredError,
    );
    expect(fake.requests).toHaveLength(0);
  });

  it('getAvatar: a URL, none, and not found', async () => {
    const client = clientFor(fake);
    expect((await client.getAvatar('sujiyan.eth')).data).toEqual({
      identity: 'sujiyan.eth',
      url: 'https://euc.li/sujiyan.eth',
    });
    expect((await client.getAvatar('noavatar.eth')).data.url).toBeNull();
    expect(await rejection(client.getAvatar('nobody-here.eth'))).toBeInstanceOf(NotFoundError);
  });

  it.each([
    ['getProfiles', (c: Web3BioClient) => c.getProfiles('nobody-here.eth')],
    ['getPlatformProfile', (c: Web3BioClient) => c.getPlatformProfile('lens', 'nobody.lens')],
    ['getNsProfiles', (c: Web3BioClient) => c.getNsProfiles('nobody-here.eth')],
    ['getCredentials', (c: Web3BioClient) => c.getCredentials('nobody-here.eth')],
    ['getDomain', (c: Web3BioClient) => c.getDomain('nobody-here.eth')],
    ['getWallet', (c: Web3BioClient) => c.getWallet('nobody-here.eth')],
  ])('%s: unknown identity -> NotFoundError', async (_name, call) => {
    const error = await rejection(call(clientFor(fake)));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((error as NotFoundError).identity).toContain('nobody');
  });

  it('a bad key -> UnauthorizedError (403 live, 401 spec) without the key in the error', async () => {
    const secret = 'sk-not-a-real-key-42';
    const error = await rejection(clientFor(fake, { apiKey: secret }).getProfiles('vitalik.eth'));
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(mode === 'live' ? 403 : 401);
    for (const text of [
      error.message,
      JSON.stringify(error),
      JSON.stringify(error.toLog()),
      JSON.stringify(renderError(error, RENDER_CTX)),
    ]) {
      expect(text).not.toContain(secret);
    }
    expect(fake.requests[0]?.headers['x-api-key']).toBe(`Bearer ${secret}`);
  });

  it('a broken body -> SchemaError, not retried', async () => {
    fake.addFault({ action: { kind: 'malformed' } });
    const error = await rejection(clientFor(fake).getPlatformProfile('ens', 'vitalik.eth'));
    expect(error).toBeInstanceOf(SchemaError);
    expect(fake.requests).toHaveLength(1);
  });

  it('a wrong top-level type -> SchemaError naming the root', async () => {
    fake.addFault({ action: { kind: 'status', status: 200, body: { identity: 'x' } } });
    const error = await rejection(clientFor(fake).getProfiles('vitalik.eth'));
    expect(error).toBeInstanceOf(SchemaError);
    expect((error as SchemaError).path).toBe('');
  });

  it('persistent 429s, drops and slow answers -> RateLimitedError, NetworkError, TimeoutError', async () => {
    // The 429s and drops under the default timeout: a busy machine's slow answer is no timeout here.
    const client = clientFor(fake);
    const impatient = clientFor(fake, { timeoutMs: 100 });
    fake.addFault({ match: 'vitalik', action: { kind: 'rate-limit' } });
    fake.addFault({ match: 'dwr', action: { kind: 'drop' } });
    fake.addFault({ match: 'stani', action: { kind: 'latency', ms: 500 } });
    expect(await rejection(client.getProfiles('vitalik.eth'))).toBeInstanceOf(RateLimitedError);
    expect(await rejection(client.getProfiles('dwr.eth'))).toBeInstanceOf(NetworkError);
    expect(await rejection(impatient.getProfiles('stani.lens'))).toBeInstanceOf(TimeoutError);
    expect(fake.requests).toHaveLength(3 * (FAST_RETRY.retries + 1));
  });

  it('a persistent 500 -> UpstreamError after the retries', async () => {
    fake.addFault({ action: { kind: 'status', status: 500 } });
    expect(await rejection(clientFor(fake).getCredentials('0xhelena.eth'))).toBeInstanceOf(UpstreamError);
    expect(fake.requests).toHaveLength(FAST_RETRY.retries + 1);
  });

  it.each(['', 'x'.repeat(10_000), '../../x', '%2F', '?a=1#b', '\u202Evitalik.eth', '😀😀😀'])(
    'hostile input %j never reaches the network',
    async (input) => {
      const client = clientFor(fake);
      for (const call of [
        () => client.getProfiles(input),
        () => client.getPlatformProfile('ens', input),
        () => client.getAvatar(input),
        () => client.getCredentials(input),
        () => client.getProfilesBatch([input]),
      ]) {
        expect(await rejection(call())).toBeInstanceOf(InvalidIdentityError);
      }
      expect(fake.requests).toHaveLength(0);
    },
  );
});

describe('cache semantics', () => {
  let fake: FakeWeb3Bio;

  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ mode: 'live', apiKeys: { [FULL_KEY]: 'full' } });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  it('100 concurrent identical calls make one upstream request', async () => {
    fake.setLatency(20);
    const client = clientFor(fake);
    const results = await Promise.all(Array.from({ length: 100 }, () => client.getProfiles('vitalik.eth')));
    expect(fake.requests).toHaveLength(1);
    expect(new Set(results.map((r) => r.data[0]?.identity))).toEqual(new Set(['vitalik.eth']));
    const later = await client.getProfiles('vitalik.eth');
    expect(later.cached).toBe(true);
    expect(later.fetchedAt).toBe(results[0]?.fetchedAt);
  });

  it('Vitalik.ETH and vitalik.eth share one entry; endpoints and platforms do not', async () => {
    const client = clientFor(fake);
    await client.getProfiles('vitalik.eth');
    expect((await client.getProfiles('Vitalik.ETH')).cached).toBe(true);
    expect((await client.getProfiles('  VITALIK.eth ')).cached).toBe(true);
    expect((await client.getNsProfiles('vitalik.eth')).cached).toBe(false);
    expect((await client.getPlatformProfile('ens', 'vitalik.eth')).cached).toBe(false);
    expect(fake.requests).toHaveLength(3);
  });

  it('remembers "not found" for negativeTtlMs', async () => {
    const { client, clock } = clockedClient(fake, { negativeTtlMs: 1_000 });
    expect(await rejection(client.getProfiles('nobody-here.eth'))).toBeInstanceOf(NotFoundError);
    const cached = await rejection(client.getProfiles('Nobody-Here.eth'));
    expect(cached).toBeInstanceOf(NotFoundError);
    expect((cached as NotFoundError).identity).toBe('nobody-here.eth');
    expect(fake.requests).toHaveLength(1);
    clock.now += 1_001;
    expect(await rejection(client.getProfiles('nobody-here.eth'))).toBeInstanceOf(NotFoundError);
    expect(fake.requests).toHaveLength(2);
  });

  it('expires entries by the per-endpoint TTL', async () => {
    const { client, clock } = clockedClient(fake, { ttl: { domain: 500 } });
    await client.getDomain('sujiyan.eth');
    await client.getProfiles('vitalik.eth');
    clock.now += 501;
    expect((await client.getDomain('sujiyan.eth')).cached).toBe(false);
    expect((await client.getProfiles('vitalik.eth')).cached).toBe(true);
    expect(fake.requests).toHaveLength(3);
  });

  it('serves stale data when the upstream fails after expiry, within staleIfErrorMs', async () => {
    const { client, clock } = clockedClient(fake, { ttl: { profile: 1_000 }, staleIfErrorMs: 10_000 });
    const first = await client.getProfiles('vitalik.eth');
    clock.now += 2_000;
    fake.addFault({ action: { kind: 'status', status: 503 } });
    const stale = await client.getProfiles('vitalik.eth');
    expect(stale).toMatchObject({ stale: true, cached: true, fetchedAt: first.fetchedAt });
    expect(stale.data).toEqual(first.data);
    clock.now += 10_000;
    expect(await rejection(client.getProfiles('vitalik.eth'))).toBeInstanceOf(UpstreamError);
  });

  it('serves stale data on network errors and timeouts too', async () => {
    // A timeout the first, healthy answer meets even on a busy machine, and a latency far past it.
    const { client, clock } = clockedClient(fake, { ttl: { avatar: 1_000 }, timeoutMs: 300 });
    await client.getAvatar('sujiyan.eth');
    clock.now += 2_000;
    fake.addFault({ times: FAST_RETRY.retries + 1, action: { kind: 'drop' } });
    expect((await client.getAvatar('sujiyan.eth')).stale).toBe(true);
    fake.addFault({ action: { kind: 'latency', ms: 1_500 } });
    expect((await client.getAvatar('sujiyan.eth')).stale).toBe(true);
  });

  it('does not hide a refused key or broken data behind stale data', async () => {
    const { client, clock } = clockedClient(fake, { ttl: { profile: 1_000 } });
    await client.getProfiles('vitalik.eth');
    clock.now += 2_000;
    fake.addFault({ times: 1, action: { kind: 'status', status: 403, body: { error: 'Forbidden' } } });
    expect(await rejection(client.getProfiles('vitalik.eth'))).toBeInstanceOf(UnauthorizedError);
    fake.addFault({ times: 1, action: { kind: 'malformed' } });
    expect(await rejection(client.getProfiles('vitalik.eth'))).toBeInstanceOf(SchemaError);
  });

  it('fresh: true bypasses a fresh entry', async () => {
    const client = clientFor(fake);
    await client.getCredentials('0xhelena.eth');
    const again = await client.getCredentials('0xhelena.eth', { fresh: true });
    expect(again.cached).toBe(false);
    expect(fake.requests).toHaveLength(2);
  });

  it("a caller's abort ends its wait; the shared request still fills the cache", async () => {
    fake.setLatency(60);
    const client = clientFor(fake);
    const controller = new AbortController();
    const aborted = client.getProfiles('vitalik.eth', { signal: controller.signal });
    const other = client.getProfiles('vitalik.eth');
    controller.abort(new Error('interaction expired'));
    await expect(aborted).rejects.toThrow('interaction expired');
    expect((await other).data[0]?.identity).toBe('vitalik.eth');
    expect((await client.getProfiles('vitalik.eth')).cached).toBe(true);
    expect(fake.requests).toHaveLength(1);
    await expect(client.getProfiles('dwr.eth', { signal: AbortSignal.abort() })).rejects.toThrow();
    expect(fake.requests).toHaveLength(1);
  });

  it('cache hits never touch the rate limiter', async () => {
    const client = clientFor(fake, { rateLimit: { requests: 1, intervalMs: 60_000 } });
    await client.getProfiles('vitalik.eth');
    const hits = await Promise.all(Array.from({ length: 50 }, () => client.getProfiles('vitalik.eth')));
    expect(hits.every((h) => h.cached)).toBe(true);
    expect(fake.requests).toHaveLength(1);
  });

  it('keyless clients are rate limited by default, keyed ones are not', async () => {
    const keyless = clientFor(fake, { apiKey: undefined, rateLimit: undefined });
    const names = ['vitalik.eth', 'dwr.eth', 'sujiyan.eth', 'tony.base.eth', 'stani.lens', 'bonfida.sol'];
    const calls = names.map((n) => keyless.getProfiles(n));
    await Promise.all(calls.slice(0, 5));
    // The sixth waits for the 10 s window: closing the client rejects it instead.
    expect(fake.requests).toHaveLength(5);
    const sixth = expect(calls[5]).rejects.toThrow('closed');
    await keyless.close();
    await sixth;
    fake.reset();
    const keyed = clientFor(fake, { rateLimit: undefined });
    await Promise.all(names.map((n) => keyed.getProfiles(n)));
    expect(fake.requests).toHaveLength(6);
  });
});

describe('batch', () => {
  let fake: FakeWeb3Bio;

  beforeAll(async () => {
    fake = await startFakeWeb3Bio({ mode: 'live', apiKeys: { [FULL_KEY]: 'full' } });
  });
  afterEach(() => fake.reset());
  afterAll(() => fake.close());

  function batchIds(path: string): string[] {
    const encoded = path.split('/').at(-1) ?? '';
    return JSON.parse(decodeURIComponent(encoded)) as string[];
  }

  it('matches results to inputs by aliases, in input order, with dropped ids as null', async () => {
    const inputs = [
      'ens,vitalik.eth',
      'lens,stani.lens',
      'farcaster,dwr.eth',
      'basenames,tony.base',
      'ethereum,0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5',
      'ens,nobody-here.eth',
      'farcaster,#3',
    ];
    const entries = await clientFor(fake).getProfilesBatch(inputs);
    expect(entries.map((e) => e.input)).toEqual(inputs);
    expect(entries.map((e) => e.id)).toEqual([
      'ens,vitalik.eth',
      'lens,stani.lens',
      'farcaster,dwr.eth',
      'basenames,tony.base.eth',
      'ethereum,0x7cbba07e31dc7b12bb69a1209c5b11a8ac50acf5',
      'ens,nobody-here.eth',
      'farcaster,#3',
    ]);
    expect(entries.map((e) => e.result?.identity ?? null)).toEqual([
      'vitalik.eth',
      'stani.lens',
      'dwr.eth',
      'tony.base.eth',
      'sujiyan.eth',
      null,
      'dwr.eth',
    ]);
    expect(entries[0]?.result?.aliases).toContain('ens,vitalik.eth');
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.path.startsWith('/profile/batch/')).toBe(true);
  });

  it('sends 75 ids as 3 requests of at most 30 and maps every answer back', async () => {
    for (let i = 0; i < 75; i++) {
      if (i % 10 === 9) continue; // every tenth does not exist: the server drops it
      fake.world.addProfile({
        address: `0x${i.toString(16).padStart(40, '0')}`,
        identity: `user${i}.eth`,
        platform: 'ens',
        displayName: `User ${i}`,
      });
    }
    const inputs = Array.from({ length: 75 }, (_, i) => `ens,user${i}.eth`);
    const entries = await clientFor(fake).getNsBatch(inputs);
    expect(fake.requests).toHaveLength(3);
    const sent = fake.requests.map((r) => batchIds(r.path));
    expect(sent.every((ids) => ids.length <= MAX_BATCH_IDS)).toBe(true);
    expect(sent.flat().sort()).toEqual([...inputs].sort());
    entries.forEach((entry, i) => {
      expect(entry.input).toBe(inputs[i]);
      expect(entry.result?.displayName ?? null).toBe(i % 10 === 9 ? null : `User ${i}`);
    });
  });

  it('asks only for ids missing from the cache, and fills per-identity entries', async () => {
    const client = clientFor(fake);
    await client.getPlatformProfile('ens', 'vitalik.eth');
    await client.getProfilesBatch(['ens,vitalik.eth', 'lens,stani.lens', 'farcaster,#3']);
    expect(batchIds(fake.requests[1]?.path ?? '')).toEqual(['lens,stani.lens', 'farcaster,#3']);
    expect((await client.getPlatformProfile('lens', 'Stani.lens')).cached).toBe(true);
    expect((await client.getPlatformProfile('farcaster', 'fid:3')).cached).toBe(true);
    const again = await client.getProfilesBatch(['lens,stani.lens', 'ens,vitalik.eth']);
    expect(again.map((e) => e.result?.identity)).toEqual(['stani.lens', 'vitalik.eth']);
    expect(fake.requests).toHaveLength(2);
  });

  it('dedupes repeated ids, shares requests between concurrent calls and remembers dropped ids', async () => {
    const client = clientFor(fake);
    const [a, b] = await Promise.all([
      client.getProfilesBatch(['ens,vitalik.eth', 'ENS,Vitalik.eth', 'ens,nobody-here.eth']),
      client.getProfilesBatch(['ens,vitalik.eth', 'lens,stani.lens']),
    ]);
    expect(a.map((e) => e.result?.identity ?? null)).toEqual(['vitalik.eth', 'vitalik.eth', null]);
    expect(b.map((e) => e.result?.identity)).toEqual(['vitalik.eth', 'stani.lens']);
    expect(fake.requests).toHaveLength(1);
    expect(batchIds(fake.requests[0]?.path ?? '').sort()).toEqual([
      'ens,nobody-here.eth',
      'ens,vitalik.eth',
      'lens,stani.lens',
    ]);
    expect((await client.getProfilesBatch(['ens,nobody-here.eth']))[0]?.result).toBeNull();
    expect(await rejection(client.getPlatformProfile('ens', 'nobody-here.eth'))).toBeInstanceOf(
      NotFoundError,
    );
    expect(fake.requests).toHaveLength(1);
  });

  it('throws the upstream error when a chunk fails and nothing stale can stand in', async () => {
    fake.addFault({ match: 'batch', action: { kind: 'status', status: 500 } });
    const error = await rejection(clientFor(fake).getProfilesBatch(['ens,vitalik.eth']));
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('stands in stale entries for a failing batch chunk only during an outage', async () => {
    const { client, clock } = clockedClient(fake, { ttl: { profile: 1_000 } });
    await client.getProfilesBatch(['ens,vitalik.eth']);
    clock.now += 2_000;
    fake.addFault({
      times: 1,
      match: 'batch',
      action: { kind: 'status', status: 403, body: { error: 'Forbidden' } },
    });
    expect(await rejection(client.getProfilesBatch(['ens,vitalik.eth']))).toBeInstanceOf(UnauthorizedError);
    fake.addFault({ match: 'batch', action: { kind: 'status', status: 503 } });
    const [entry] = await client.getProfilesBatch(['ens,vitalik.eth']);
    expect(entry?.result?.identity).toBe('vitalik.eth');
  });

  it('rejects a bad id before any request, and answers an empty list without one', async () => {
    const client = clientFor(fake);
    expect(
      await rejection(client.getProfilesBatch(['ens,vitalik.eth', 'solana,bonfida.sol'])),
    ).toBeInstanceOf(InvalidIdentityError);
    expect(await client.getProfilesBatch([])).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });
});
