import { setTimeout as sleep } from 'node:timers/promises';
import type {
  CachedValue,
  CacheOptions,
  CachePolicy,
  CacheStore,
  FillClaim,
  LookupCache,
  LookupOptions,
  LookupResult,
  StoredEntry,
  StoreOperation,
} from './types.ts';

type Flight = Promise<CachedValue<unknown>>;

/** One cache's store, clock and defaults, resolved once; the steps below take it as their first argument. */
interface Cache {
  store: CacheStore;
  now: () => number;
  fromNegative: (data: unknown, key: string) => Error;
  staleOn: (error: unknown) => boolean;
  fillPollMs: number;
  /** The caller's options, whose hooks are read at each call. */
  hooks: Pick<CacheOptions, 'onLookup' | 'onStoreError' | 'toNegative'>;
}

/**
 * A `LookupCache` over `options.store`: fresh hits skip the loader, concurrent misses of one key share
 * one loader call, negative answers are cached, and expired entries cover loader outages.
 */
export function createLookupCache(options: CacheOptions): LookupCache {
  const cache: Cache = {
    store: options.store,
    now: options.now ?? Date.now,
    fromNegative: options.fromNegative ?? defaultFromNegative,
    staleOn: options.staleOn ?? (() => true),
    fillPollMs: options.fillPollMs ?? 20,
    hooks: options,
  };
  const { store, now, fromNegative } = cache;
  const inflight = new Map<string, Flight>();

  function startFlight<T>(
    key: string,
    loader: () => Promise<T>,
    policy: CachePolicy,
    bypass: boolean,
  ): Promise<CachedValue<T>> {
    // `finally` runs asynchronously, so the flight is registered before it can be removed, even when
    // the loader throws synchronously.
    const flight = load(cache, key, loader, policy, bypass).finally(() => inflight.delete(key));
    inflight.set(key, flight);
    return flight;
  }

  return {
    async get<T>(
      key: string,
      loader: () => Promise<T>,
      policy: CachePolicy,
      lookupOptions?: LookupOptions,
    ): Promise<CachedValue<T>> {
      const pending = inflight.get(key) as Promise<CachedValue<T>> | undefined;
      if (pending !== undefined) return pending;
      const bypass = lookupOptions?.bypass === true;
      const maxAgeMs = lookupOptions?.maxAgeMs;
      if (!bypass) {
        // Inlined rather than `read(cache, key)`: the hit path allocates nothing but its result.
        let entry: StoredEntry | undefined;
        try {
          entry = await store.get(key);
        } catch (error) {
          report(cache, error, 'get', key);
        }
        const checkedAt = now();
        if (
          entry !== undefined &&
          checkedAt < entry.expiresAt &&
          (maxAgeMs === undefined || checkedAt < entry.fetchedAt + maxAgeMs)
        ) {
          note(cache, 'hit');
          if (entry.negative) throw fromNegative(entry.value, key);
          return { value: entry.value as T, hit: true, stale: false, fetchedAt: entry.fetchedAt };
        }
      }
      // Another get may have started a flight while this one was reading the store.
      const joined = inflight.get(key) as Promise<CachedValue<T>> | undefined;
      // A bounded-age get, like a bypass, takes another process's fill only when fetched after it asked.
      return joined ?? startFlight(key, loader, policy, bypass || maxAgeMs !== undefined);
    },

    async set<T>(key: string, value: T, policy: CachePolicy): Promise<void> {
      const fetchedAt = now();
      const entry: StoredEntry = { value, negative: false, fetchedAt, expiresAt: fetchedAt + policy.ttlMs };
      await write(cache, key, entry, policy.ttlMs + policy.staleIfErrorMs);
    },

    async delete(key: string): Promise<void> {
      try {
        await store.delete(key);
      } catch (error) {
        report(cache, error, 'delete', key);
      }
    },

    async close(): Promise<void> {
      await store.close?.();
    },
  };
}

function defaultFromNegative(_data: unknown, key: string): Error {
  return new Error(`Cached negative answer for ${key}`);
}

function note(cache: Cache, result: LookupResult): void {
  try {
    cache.hooks.onLookup?.(result);
  } catch {
    // Metrics must not fail a lookup.
  }
}

function report(cache: Cache, error: unknown, operation: StoreOperation, key: string): void {
  try {
    cache.hooks.onStoreError?.(error, operation, key);
  } catch {
    // A faulty reporter must not turn a store hiccup into a failed lookup.
  }
}

async function read(cache: Cache, key: string): Promise<StoredEntry | undefined> {
  try {
    return await cache.store.get(key);
  } catch (error) {
    report(cache, error, 'get', key);
    return undefined;
  }
}

async function write(cache: Cache, key: string, entry: StoredEntry, retainMs: number): Promise<void> {
  if (!(retainMs > 0)) return;
  try {
    await cache.store.set(key, entry, retainMs);
  } catch (error) {
    report(cache, error, 'set', key);
  }
}

function negativeDataOf(cache: Cache, error: unknown): unknown {
  if (cache.hooks.toNegative === undefined) return undefined;
  try {
    return cache.hooks.toNegative(error);
  } catch {
    return undefined;
  }
}

function allowsStale(cache: Cache, error: unknown): boolean {
  const { staleOn } = cache;
  try {
    return staleOn(error);
  } catch {
    return false;
  }
}

/** A miss: take another process's fill when one is under way, else call the loader and store its answer. */
async function load<T>(
  cache: Cache,
  key: string,
  loader: () => Promise<T>,
  policy: CachePolicy,
  bypass: boolean,
): Promise<CachedValue<T>> {
  const { now, fromNegative } = cache;
  const startedAt = now();
  const claim = await claimFill(cache, key);
  if (claim !== undefined && !claim.owner) {
    const filled = await awaitFill(cache, key, startedAt, bypass);
    if (filled !== undefined) {
      note(cache, 'shared_fill');
      if (filled.negative) throw fromNegative(filled.value, key);
      return { value: filled.value as T, hit: true, stale: false, fetchedAt: filled.fetchedAt };
    }
  }
  try {
    let value: T;
    try {
      value = await loader();
    } catch (error) {
      return await recover(cache, key, error, policy);
    }
    const fetchedAt = now();
    const entry: StoredEntry = { value, negative: false, fetchedAt, expiresAt: fetchedAt + policy.ttlMs };
    // Awaited so that once callers see the value, later gets find it in the store (no second loader call).
    await write(cache, key, entry, policy.ttlMs + policy.staleIfErrorMs);
    note(cache, 'miss');
    return { value, hit: false, stale: false, fetchedAt };
  } finally {
    // Released after the write, so a process waiting on the claim finds the entry.
    await claim?.release();
  }
}

async function claimFill(cache: Cache, key: string): Promise<FillClaim | undefined> {
  const { store } = cache;
  if (store.claimFill === undefined) return undefined;
  try {
    return await store.claimFill(key);
  } catch (error) {
    report(cache, error, 'claim', key);
    return undefined;
  }
}

/** Wait for the process holding the claim to store the entry; undefined when it gave up without one. */
async function awaitFill(
  cache: Cache,
  key: string,
  startedAt: number,
  bypass: boolean,
): Promise<StoredEntry | undefined> {
  const { store, now } = cache;
  if (store.fillState === undefined) return undefined;
  for (;;) {
    await sleep(cache.fillPollMs);
    let state: { entry: StoredEntry | undefined; filling: boolean };
    try {
      state = await store.fillState(key);
    } catch (error) {
      report(cache, error, 'get', key);
      return undefined;
    }
    const { entry } = state;
    // A bypass wants an answer fetched after it asked, not the fresh entry it chose to skip.
    if (entry !== undefined && now() < entry.expiresAt && (!bypass || entry.fetchedAt >= startedAt)) {
      return entry;
    }
    if (!state.filling) return undefined;
  }
}

/** The loader failed: cache a negative answer, or serve the last good value while it may stand in. */
async function recover<T>(
  cache: Cache,
  key: string,
  error: unknown,
  policy: CachePolicy,
): Promise<CachedValue<T>> {
  const { now } = cache;
  const negativeData = negativeDataOf(cache, error);
  if (negativeData !== undefined) {
    // A negative answer (e.g. not found) is the upstream's verdict, not an outage: never mask it with stale data.
    if (policy.negativeTtlMs > 0) {
      const fetchedAt = now();
      const entry: StoredEntry = {
        value: negativeData,
        negative: true,
        fetchedAt,
        expiresAt: fetchedAt + policy.negativeTtlMs,
      };
      await write(cache, key, entry, policy.negativeTtlMs);
    }
    throw error;
  }
  if (!allowsStale(cache, error)) throw error;
  const previous = await read(cache, key);
  if (previous !== undefined && !previous.negative && now() < previous.expiresAt + policy.staleIfErrorMs) {
    note(cache, 'stale');
    return { value: previous.value as T, hit: true, stale: true, fetchedAt: previous.fetchedAt };
  }
  throw error;
}
