import { afterAll, describe, expect, it, vi } from 'vitest';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import type { CachePolicy, CacheStore, LookupCache, StoredEntry } from '../../src/cache/types.ts';
import { NotFoundError, UpstreamError } from '../../src/web3bio/errors.ts';
import { memoryHarness, redisHarness, type StoreHarness } from './storeHarness.ts';

const POLICY: CachePolicy = { ttlMs: 60_000, negativeTtlMs: 10_000, staleIfErrorMs: 30_000 };
const START = 1_700_000_000_000;

/** A 5xx from upstream: an outage, not an answer. */
const outage = () => new UpstreamError(503, 'http://127.0.0.1/profile/x', 'down');

function toNegative(error: unknown): unknown {
  return error instanceof NotFoundError ? { identity: error.identity } : undefined;
}

function fromNegative(data: unknown, key: string): Error {
  const identity = (data as { identity?: unknown }).identity;
  return new NotFoundError(typeof identity === 'string' ? identity : key);
}

/** A loader that counts its calls and answers from a script (a value, or an error to throw). */
function scriptedLoader<T>(...answers: Array<T | Error>) {
  let calls = 0;
  return vi.fn(async (): Promise<T> => {
    const answer = answers[Math.min(calls++, answers.length - 1)];
    if (answer instanceof Error) throw answer;
    return answer as T;
  });
}

describe.each([memoryHarness(), redisHarness()])('LookupCache over $name', (harness: StoreHarness) => {
  afterAll(() => harness.cleanup());

  function setup(store: CacheStore = harness.create()) {
    const clock = { now: START };
    const storeErrors: Array<[unknown, string, string]> = [];
    const cache: LookupCache = createLookupCache({
      store,
      now: () => clock.now,
      toNegative,
      fromNegative,
      onStoreError: (error, operation, key) => storeErrors.push([error, operation, key]),
    });
    return { cache, clock, store, storeErrors };
  }

  it('serves a fresh entry without the loader, then reloads once it expires', async () => {
    const { cache, clock, storeErrors } = setup();
    const loader = scriptedLoader({ name: 'vitalik.eth' }, { name: 'vitalik.eth v2' });

    expect(await cache.get('p:1', loader, POLICY)).toEqual({
      value: { name: 'vitalik.eth' },
      hit: false,
      stale: false,
      fetchedAt: START,
    });
    clock.now = START + POLICY.ttlMs - 1;
    expect(await cache.get('p:1', loader, POLICY)).toEqual({
      value: { name: 'vitalik.eth' },
      hit: true,
      stale: false,
      fetchedAt: START,
    });
    expect(loader).toHaveBeenCalledTimes(1);

    clock.now = START + POLICY.ttlMs;
    const reloaded = await cache.get('p:1', loader, POLICY);
    expect(reloaded).toEqual({
      value: { name: 'vitalik.eth v2' },
      hit: false,
      stale: false,
      fetchedAt: clock.now,
    });
    expect(loader).toHaveBeenCalledTimes(2);
    expect(storeErrors).toEqual([]);
  });

  it('shares one loader call among 100 concurrent gets of one key', async () => {
    const { cache } = setup();
    let release = (_value: string) => {};
    const loader = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));

    const gets = Array.from({ length: 100 }, () => cache.get('p:hot', loader, POLICY));
    await vi.waitFor(() => expect(loader).toHaveBeenCalled());
    release('answer');
    const results = await Promise.all(gets);

    expect(loader).toHaveBeenCalledTimes(1);
    expect(new Set(results.map((r) => r.value))).toEqual(new Set(['answer']));
    expect(await cache.get('p:hot', loader, POLICY)).toMatchObject({ value: 'answer', hit: true });
    expect(loader).toHaveBeenCalledTimes(1);
  });

  it('keeps different keys in separate flights', async () => {
    const { cache } = setup();
    const a = scriptedLoader('a');
    const b = scriptedLoader('b');
    const [ra, rb] = await Promise.all([cache.get('k:a', a, POLICY), cache.get('k:b', b, POLICY)]);
    expect([ra.value, rb.value]).toEqual(['a', 'b']);
    expect(a).toHaveBeenCalledTimes(1);
    expect(b).toHaveBeenCalledTimes(1);
  });

  it('shares a rejection among concurrent gets, then lets the next get call the loader again', async () => {
    const { cache } = setup();
    const failure = outage();
    const loader = scriptedLoader<string>(failure, 'recovered');

    const results = await Promise.allSettled(
      Array.from({ length: 20 }, () => cache.get('p:x', loader, POLICY)),
    );
    expect(results.every((r) => r.status === 'rejected' && r.reason === failure)).toBe(true);
    expect(loader).toHaveBeenCalledTimes(1);

    expect(await cache.get('p:x', loader, POLICY)).toMatchObject({ value: 'recovered', hit: false });
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('clears the flight when the loader throws synchronously', async () => {
    const { cache } = setup();
    const loader = vi.fn((): Promise<string> => {
      throw new Error('sync boom');
    });
    await expect(cache.get('p:sync', loader, POLICY)).rejects.toThrow('sync boom');
    await expect(cache.get('p:sync', loader, POLICY)).rejects.toThrow('sync boom');
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('caches a negative answer for negativeTtlMs, rebuilding the error without the loader', async () => {
    const { cache, clock } = setup();
    const notFound = new NotFoundError('nobody.eth');
    const loader = scriptedLoader<string>(notFound, 'now exists');

    await expect(cache.get('p:nobody', loader, POLICY)).rejects.toBe(notFound);
    clock.now = START + POLICY.negativeTtlMs - 1;
    const cached = await cache.get('p:nobody', loader, POLICY).catch((error: unknown) => error);
    expect(cached).toBeInstanceOf(NotFoundError);
    expect(cached).not.toBe(notFound);
    expect((cached as NotFoundError).identity).toBe('nobody.eth');
    expect(loader).toHaveBeenCalledTimes(1);

    clock.now = START + POLICY.negativeTtlMs;
    expect(await cache.get('p:nobody', loader, POLICY)).toMatchObject({ value: 'now exists', hit: false });
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('does not cache negative answers when negativeTtlMs is 0', async () => {
    const { cache } = setup();
    const loader = scriptedLoader<string>(new NotFoundError('nobody.eth'));
    const policy = { ...POLICY, negativeTtlMs: 0 };
    await expect(cache.get('p:neg0', loader, policy)).rejects.toBeInstanceOf(NotFoundError);
    await expect(cache.get('p:neg0', loader, policy)).rejects.toBeInstanceOf(NotFoundError);
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('calls the loader on a bypass get even while a negative entry is cached', async () => {
    const { cache } = setup();
    const loader = scriptedLoader<string>(new NotFoundError('late.eth'), 'registered');
    await expect(cache.get('p:late', loader, POLICY)).rejects.toBeInstanceOf(NotFoundError);
    expect(await cache.get('p:late', loader, POLICY, { bypass: true })).toMatchObject({
      value: 'registered',
      hit: false,
    });
    expect(await cache.get('p:late', loader, POLICY)).toMatchObject({ value: 'registered', hit: true });
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('treats a toNegative that throws as "not negative"', async () => {
    const clock = { now: START };
    const cache = createLookupCache({
      store: harness.create(),
      now: () => clock.now,
      toNegative: () => {
        throw new Error('mapper bug');
      },
    });
    const failure = outage();
    const loader = scriptedLoader<string>(failure);
    await expect(cache.get('p:mapper', loader, POLICY)).rejects.toBe(failure);
    await expect(cache.get('p:mapper', loader, POLICY)).rejects.toBe(failure);
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('serves an expired entry as stale when the loader fails within staleIfErrorMs, and only then', async () => {
    const { cache, clock } = setup();
    const failure = outage();
    const loader = scriptedLoader<string>('good', failure);
    await cache.get('p:s', loader, POLICY);

    clock.now = START + POLICY.ttlMs + POLICY.staleIfErrorMs - 1;
    expect(await cache.get('p:s', loader, POLICY)).toEqual({
      value: 'good',
      hit: true,
      stale: true,
      fetchedAt: START,
    });

    clock.now = START + POLICY.ttlMs + POLICY.staleIfErrorMs;
    await expect(cache.get('p:s', loader, POLICY)).rejects.toBe(failure);
    expect(loader).toHaveBeenCalledTimes(3);
  });

  it('serves stale data only for the errors staleOn accepts, and asks it about each failure', async () => {
    const clock = { now: START };
    const staleOn = vi.fn((error: unknown) => error instanceof UpstreamError);
    const cache = createLookupCache({ store: harness.create(), now: () => clock.now, staleOn });
    const refused = new Error('the key was refused');
    const failure = outage();
    const loader = scriptedLoader<string>('good', refused, failure);
    await cache.get('p:on', loader, POLICY);

    clock.now = START + POLICY.ttlMs;
    await expect(cache.get('p:on', loader, POLICY)).rejects.toBe(refused);
    expect(await cache.get('p:on', loader, POLICY)).toMatchObject({ value: 'good', stale: true });
    expect(staleOn.mock.calls.map(([error]) => error)).toEqual([refused, failure]);
  });

  it('rethrows the loader error when staleOn itself throws', async () => {
    const clock = { now: START };
    const cache = createLookupCache({
      store: harness.create(),
      now: () => clock.now,
      staleOn: () => {
        throw new Error('faulty predicate');
      },
    });
    const failure = outage();
    const loader = scriptedLoader<string>('good', failure);
    await cache.get('p:onthrow', loader, POLICY);
    clock.now = START + POLICY.ttlMs;
    await expect(cache.get('p:onthrow', loader, POLICY)).rejects.toBe(failure);
  });

  it('serves no stale value when staleIfErrorMs is 0', async () => {
    const { cache, clock } = setup();
    const policy = { ...POLICY, staleIfErrorMs: 0 };
    const failure = outage();
    const loader = scriptedLoader<string>('good', failure);
    await cache.get('p:s0', loader, policy);
    clock.now = START + policy.ttlMs;
    await expect(cache.get('p:s0', loader, policy)).rejects.toBe(failure);
  });

  it('never serves a negative entry as stale', async () => {
    const { cache, clock } = setup();
    const failure = outage();
    const loader = scriptedLoader<string>(new NotFoundError('gone.eth'), failure);
    await expect(cache.get('p:gone', loader, POLICY)).rejects.toBeInstanceOf(NotFoundError);
    clock.now = START + POLICY.negativeTtlMs;
    await expect(cache.get('p:gone', loader, POLICY)).rejects.toBe(failure);
  });

  it('does not mask a negative answer with a stale good value', async () => {
    const { cache, clock } = setup();
    const notFound = new NotFoundError('was.eth');
    const loader = scriptedLoader<string>('was here', notFound);
    await cache.get('p:was', loader, POLICY);
    clock.now = START + POLICY.ttlMs;
    await expect(cache.get('p:was', loader, POLICY)).rejects.toBe(notFound);
  });

  it('does not mask a negative answer with a stale good value when negatives are not cached', async () => {
    const { cache, clock } = setup();
    const policy = { ...POLICY, negativeTtlMs: 0 };
    const notFound = new NotFoundError('was.eth');
    const loader = scriptedLoader<string>('was here', notFound);
    await cache.get('p:was0', loader, policy);
    clock.now = START + policy.ttlMs;
    await expect(cache.get('p:was0', loader, policy)).rejects.toBe(notFound);
  });

  it('joins a load already in flight even when its own store read would finish after that load', async () => {
    const inner = harness.create();
    let holdReads = false;
    const heldReads: Array<() => void> = [];
    const slowReads: CacheStore = {
      get: async (key) => {
        const result = inner.get(key);
        if (holdReads) await new Promise<void>((resolve) => heldReads.push(resolve));
        return result;
      },
      set: (key, entry, retainMs) => inner.set(key, entry, retainMs),
      delete: (key) => inner.delete(key),
    };
    const { cache } = setup(slowReads);
    let release = (_value: string) => {};
    const loader = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));

    const first = cache.get('p:j', loader, POLICY);
    await vi.waitFor(() => expect(loader).toHaveBeenCalled());
    holdReads = true;
    const second = cache.get('p:j', loader, POLICY);
    release('once');
    expect((await first).value).toBe('once');
    for (const resume of heldReads) resume();
    expect((await second).value).toBe('once');
    expect(loader).toHaveBeenCalledTimes(1);
  });

  it('bypasses a fresh entry, shares the bypass loader call, and stores its answer', async () => {
    const { cache } = setup();
    const loader = scriptedLoader('v1', 'v2', 'v3');
    await cache.get('p:b', loader, POLICY);

    const bypassed = await Promise.all(
      Array.from({ length: 10 }, () => cache.get('p:b', loader, POLICY, { bypass: true })),
    );
    expect(bypassed.map((r) => r.value)).toEqual(Array(10).fill('v2'));
    expect(bypassed[0]).toMatchObject({ hit: false, stale: false });
    expect(loader).toHaveBeenCalledTimes(2);
    expect(await cache.get('p:b', loader, POLICY)).toMatchObject({ value: 'v2', hit: true });
  });

  it('serves the cached value as stale when a bypass get fails', async () => {
    const { cache } = setup();
    const loader = scriptedLoader<string>('kept', outage());
    await cache.get('p:bs', loader, POLICY);
    expect(await cache.get('p:bs', loader, POLICY, { bypass: true })).toEqual({
      value: 'kept',
      hit: true,
      stale: true,
      fetchedAt: START,
    });
  });

  it('serves an entry younger than maxAgeMs without the loader', async () => {
    const { cache, clock } = setup();
    const loader = scriptedLoader('v1', 'v2');
    await cache.get('p:young', loader, POLICY);
    clock.now = START + 10_000 - 1;
    expect(await cache.get('p:young', loader, POLICY, { maxAgeMs: 10_000 })).toEqual({
      value: 'v1',
      hit: true,
      stale: false,
      fetchedAt: START,
    });
    expect(loader).toHaveBeenCalledTimes(1);
  });

  it('calls the loader once for an unexpired entry older than maxAgeMs, and serves its answer after', async () => {
    const { cache, clock } = setup();
    const loader = scriptedLoader('v1', 'v2', 'v3');
    await cache.get('p:old', loader, POLICY);
    clock.now = START + 10_000;
    // Still fresh for a get without a bound.
    expect(await cache.get('p:old', loader, POLICY)).toMatchObject({ value: 'v1', hit: true });
    expect(await cache.get('p:old', loader, POLICY, { maxAgeMs: 10_000 })).toEqual({
      value: 'v2',
      hit: false,
      stale: false,
      fetchedAt: START + 10_000,
    });
    expect(await cache.get('p:old', loader, POLICY, { maxAgeMs: 10_000 })).toMatchObject({
      value: 'v2',
      hit: true,
    });
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('shares one loader call among concurrent maxAgeMs gets of an entry too old for them', async () => {
    const { cache, clock } = setup();
    await cache.set('p:burst', 'old', POLICY);
    clock.now = START + 20_000;
    let release = (_value: string) => {};
    const loader = vi.fn(() => new Promise<string>((resolve) => (release = resolve)));

    const gets = Array.from({ length: 20 }, () => cache.get('p:burst', loader, POLICY, { maxAgeMs: 10_000 }));
    await vi.waitFor(() => expect(loader).toHaveBeenCalled());
    release('new');
    const results = await Promise.all(gets);

    expect(loader).toHaveBeenCalledTimes(1);
    expect(results.map((r) => r.value)).toEqual(Array(20).fill('new'));
  });

  it('calls the loader for a negative entry older than maxAgeMs, and not for a younger one', async () => {
    const { cache, clock } = setup();
    const loader = scriptedLoader<string>(new NotFoundError('edited.eth'), 'registered');
    await expect(cache.get('p:neg-age', loader, POLICY)).rejects.toBeInstanceOf(NotFoundError);
    clock.now = START + 999;
    await expect(cache.get('p:neg-age', loader, POLICY, { maxAgeMs: 1_000 })).rejects.toBeInstanceOf(
      NotFoundError,
    );
    expect(loader).toHaveBeenCalledTimes(1);

    clock.now = START + 1_000;
    expect(await cache.get('p:neg-age', loader, POLICY, { maxAgeMs: 1_000 })).toMatchObject({
      value: 'registered',
      hit: false,
    });
    expect(loader).toHaveBeenCalledTimes(2);
  });

  it('serves the cached value as stale when a maxAgeMs get fails', async () => {
    const { cache, clock } = setup();
    const loader = scriptedLoader<string>('kept', outage());
    await cache.get('p:age-stale', loader, POLICY);
    clock.now = START + 10_000;
    expect(await cache.get('p:age-stale', loader, POLICY, { maxAgeMs: 1_000 })).toEqual({
      value: 'kept',
      hit: true,
      stale: true,
      fetchedAt: START,
    });
  });

  it("takes another process's fill for a maxAgeMs get only when it was fetched after the get asked", async () => {
    const inner = harness.create();
    let filling = true;
    const fillStates = vi.fn(async (key: string) => {
      // Read before the entry, so a look that finds the claim gone also finds the entry written before.
      const stillFilling = filling;
      return { entry: await inner.get(key), filling: stillFilling };
    });
    const claimedElsewhere: CacheStore = {
      get: (key) => inner.get(key),
      set: (key, entry, retainMs) => inner.set(key, entry, retainMs),
      delete: (key) => inner.delete(key),
      claimFill: async () => ({ owner: false, release: async () => {} }),
      fillState: fillStates,
    };
    const { cache, clock } = setup(claimedElsewhere);
    await cache.set('p:fill', 'old', POLICY);
    clock.now = START + 20_000;
    const loader = scriptedLoader('mine');

    const pending = cache.get('p:fill', loader, POLICY, { maxAgeMs: 10_000 });
    // The old entry is still unexpired: a plain waiter would take it at the first look.
    await vi.waitFor(() => expect(fillStates.mock.calls.length).toBeGreaterThanOrEqual(2));
    const theirs: StoredEntry = {
      value: 'theirs',
      negative: false,
      fetchedAt: clock.now,
      expiresAt: clock.now + POLICY.ttlMs,
    };
    await inner.set('p:fill', theirs, POLICY.ttlMs);
    filling = false;

    expect(await pending).toEqual({ value: 'theirs', hit: true, stale: false, fetchedAt: START + 20_000 });
    expect(loader).not.toHaveBeenCalled();
  });

  it('fills entries with set and forgets them with delete', async () => {
    const { cache, clock } = setup();
    const loader = scriptedLoader('from loader');
    await cache.set('p:batch', { name: 'from batch' }, POLICY);
    clock.now = START + 5;
    expect(await cache.get('p:batch', loader, POLICY)).toEqual({
      value: { name: 'from batch' },
      hit: true,
      stale: false,
      fetchedAt: START,
    });
    await cache.delete('p:batch');
    expect(await cache.get('p:batch', loader, POLICY)).toMatchObject({ value: 'from loader', hit: false });
    expect(loader).toHaveBeenCalledTimes(1);
  });

  it('stores entries with the fresh TTL plus the stale window as retention', async () => {
    const writes: Array<[string, StoredEntry, number]> = [];
    const store = harness.create();
    const recording: CacheStore = {
      get: (key) => store.get(key),
      delete: (key) => store.delete(key),
      set: (key, entry, retainMs) => {
        writes.push([key, entry, retainMs]);
        return store.set(key, entry, retainMs);
      },
    };
    const { cache } = setup(recording);
    await cache.get('p:r', async () => 'v', POLICY);
    await expect(
      cache.get('p:n', async () => Promise.reject(new NotFoundError('n')), POLICY),
    ).rejects.toThrow();
    expect(writes).toEqual([
      ['p:r', { value: 'v', negative: false, fetchedAt: START, expiresAt: START + POLICY.ttlMs }, 90_000],
      [
        'p:n',
        { value: { identity: 'n' }, negative: true, fetchedAt: START, expiresAt: START + 10_000 },
        10_000,
      ],
    ]);
  });
});

describe('LookupCache with a failing store', () => {
  const broken: CacheStore = {
    get: async () => Promise.reject(new Error('store down')),
    set: async () => Promise.reject(new Error('store down')),
    delete: async () => Promise.reject(new Error('store down')),
  };

  it('answers through the loader and reports each store failure', async () => {
    const reported: string[] = [];
    const cache = createLookupCache({
      store: broken,
      onStoreError: (error, operation, key) =>
        reported.push(`${operation} ${key} ${(error as Error).message}`),
    });
    const loader = scriptedLoader('a', 'b');
    expect(await cache.get('k', loader, POLICY)).toMatchObject({ value: 'a', hit: false });
    expect(await cache.get('k', loader, POLICY)).toMatchObject({ value: 'b', hit: false });
    await cache.set('k', 'c', POLICY);
    await cache.delete('k');
    expect(reported).toEqual([
      'get k store down',
      'set k store down',
      'get k store down',
      'set k store down',
      'set k store down',
      'delete k store down',
    ]);
  });

  it('survives a reporter that throws, and rethrows loader errors with nothing to serve', async () => {
    const cache = createLookupCache({
      store: broken,
      onStoreError: () => {
        throw new Error('reporter bug');
      },
    });
    expect(await cache.get('k', async () => 1, POLICY)).toMatchObject({ value: 1 });
    const failure = outage();
    await expect(cache.get('k', async () => Promise.reject(failure), POLICY)).rejects.toBe(failure);
  });

  it('closes its store', async () => {
    const close = vi.fn(async () => {});
    const cache = createLookupCache({ store: { ...broken, close } });
    await cache.close();
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('uses a generic error for cached negatives when no fromNegative is given', async () => {
    const cache = createLookupCache({ store: memoryHarness().create(), toNegative });
    const loader = scriptedLoader<string>(new NotFoundError('x.eth'));
    await expect(cache.get('k:x', loader, POLICY)).rejects.toBeInstanceOf(NotFoundError);
    await expect(cache.get('k:x', loader, POLICY)).rejects.toThrow('Cached negative answer for k:x');
    expect(loader).toHaveBeenCalledTimes(1);
  });
});
