/**
 * Contracts of the lookup cache. The client depends only on `LookupCache`; where entries live is a
 * `CacheStore` (in-process LRU by default, a shared store such as Redis for several processes).
 */

/** What a store keeps for one key. JSON-safe so a shared store can serialise it. */
export interface StoredEntry {
  /** The value, or for a negative entry the data `CacheOptions.toNegative` returned. */
  value: unknown;
  /** True for a cached failure such as "not found". */
  negative: boolean;
  /** When the value was fetched upstream (ms since epoch). */
  fetchedAt: number;
  /** After this (ms since epoch) the entry is expired: refetch, but it may still be served as stale on error. */
  expiresAt: number;
}

/** Where entries live. Implementations bound their size and drop entries after `retainMs`. */
export interface CacheStore {
  get(key: string): Promise<StoredEntry | undefined>;
  /** `retainMs`: how long the store should keep the entry at all (fresh TTL plus the stale window). */
  set(key: string, entry: StoredEntry, retainMs: number): Promise<void>;
  delete(key: string): Promise<void>;
  close?(): Promise<void>;
  /**
   * A store shared by several processes may coordinate their misses: the first to claim a key loads it
   * (`owner: true`, then `release`), the others wait for its entry (`fillState`) instead of loading too.
   */
  claimFill?(key: string): Promise<FillClaim>;
  /** The key's entry, and whether a claim on it is still held. */
  fillState?(key: string): Promise<{ entry: StoredEntry | undefined; filling: boolean }>;
}

export interface FillClaim {
  owner: boolean;
  /** Give the claim up (owner only; a no-op otherwise). Never throws. */
  release(): Promise<void>;
}

/** Per-call cache rules (the client picks them per endpoint). */
export interface CachePolicy {
  /** How long a good answer is fresh. */
  ttlMs: number;
  /** How long a negative answer (e.g. not found) is cached; 0 disables negative caching. */
  negativeTtlMs: number;
  /** How long after expiry an entry may still be served when the upstream fails; 0 disables. */
  staleIfErrorMs: number;
}

export interface CachedValue<T> {
  value: T;
  /** Served from cache without calling the loader. */
  hit: boolean;
  /** Served because the loader failed and an expired entry existed. */
  stale: boolean;
  fetchedAt: number;
}

export interface LookupOptions {
  /** Skip a fresh entry and call the loader (still single-flight, still stale-if-error). */
  bypass?: boolean;
  /**
   * Accept a stored entry only when it was fetched within this many ms (and is still fresh); otherwise
   * call the loader (still single-flight, still stale-if-error).
   */
  maxAgeMs?: number;
}

export interface LookupCache {
  /**
   * The cached value for `key`, or the loader's result. Concurrent calls for one key share one loader
   * call (single-flight). A loader error that `toNegative` accepts is cached for `negativeTtlMs` and
   * rethrown (later calls rethrow `fromNegative(data)` without the loader). Any other loader error that
   * `staleOn` accepts serves the last good value with `stale: true` when one exists within
   * `staleIfErrorMs`; every other error is rethrown.
   */
  get<T>(
    key: string,
    loader: () => Promise<T>,
    policy: CachePolicy,
    options?: LookupOptions,
  ): Promise<CachedValue<T>>;
  /** Store a value fetched elsewhere (a batch answer filling per-identity entries). */
  set<T>(key: string, value: T, policy: CachePolicy): Promise<void>;
  delete(key: string): Promise<void>;
  close(): Promise<void>;
}

export interface CacheOptions {
  store: CacheStore;
  /** Map a loader error to JSON-safe data to cache negatively, or undefined to not cache it. */
  toNegative?: (error: unknown) => unknown;
  /** Rebuild the error to throw from negative data. */
  fromNegative?: (data: unknown, key: string) => Error;
  /**
   * Whether a loader error may be answered with stale data (an outage, not a wrong request or broken
   * data). Default: every error that `toNegative` does not accept.
   */
  staleOn?: (error: unknown) => boolean;
  /** Clock, injectable for tests (ms since epoch). */
  now?: () => number;
  /**
   * Told about a store failure (e.g. Redis down). Lookups never fail because of the store: a failed read
   * counts as a miss, a failed write or delete is skipped.
   */
  onStoreError?: (error: unknown, operation: StoreOperation, key: string) => void;
  /** Told how each lookup was answered (metrics); must not throw. */
  onLookup?: (result: LookupResult) => void;
  /** How often a process waiting for another's fill looks again, ms. Default 20. */
  fillPollMs?: number;
}

/** `hit`: a fresh entry; `miss`: the loader ran (or another process's fill was awaited); `stale`: served stale on error. */
export type LookupResult = 'hit' | 'miss' | 'stale' | 'shared_fill';

export type StoreOperation = 'get' | 'set' | 'delete' | 'claim';
