import { createLookupCache } from './lookupCache.ts';
import { MemoryStore } from './memoryStore.ts';
import { MemoryRecentLookups, type RecentLookups } from './recentLookups.ts';
import { RedisRecentLookups } from './redisRecentLookups.ts';
import { RedisStore } from './redisStore.ts';
import { type CacheTier, TieredStore } from './tieredStore.ts';
import type { CacheOptions, CacheStore, LookupCache } from './types.ts';

export { createLookupCache } from './lookupCache.ts';
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  estimateEntryBytes,
  MemoryStore,
  type MemoryStoreOptions,
} from './memoryStore.ts';
export {
  DEFAULT_RECENT_LOOKUPS_LIMITS,
  type ForgottenLookups,
  type LookupToRemember,
  MemoryRecentLookups,
  type RecentLookups,
  type RecentLookupsLimits,
} from './recentLookups.ts';
export { RedisRecentLookups } from './redisRecentLookups.ts';
export {
  closeRedisClient,
  createRedisClient,
  DEFAULT_REDIS_PREFIX,
  MalformedEntryError,
  parseEntry,
  RedisStore,
  type RedisStoreOptions,
} from './redisStore.ts';
export { type CacheTier, DEFAULT_L1_TTL_MS, TieredStore, type TieredStoreOptions } from './tieredStore.ts';
export type * from './types.ts';

export interface DefaultCacheOptions {
  /**
   * When set, entries live in Redis (shared by every process) behind an in-process L1 (see
   * TieredStore); otherwise in this process's memory.
   */
  redisUrl?: string;
  /** Prefix of every Redis key and channel. Default `web3bio:`. */
  redisPrefix?: string;
  /** Memory store, or the L1 in front of Redis. */
  maxEntries?: number;
  /** Memory store, or the L1 in front of Redis. */
  maxBytes?: number;
  /** With Redis: longest life of an L1 copy; 0 turns the L1 off. Default 30 s. */
  l1TtlMs?: number;
  /** With Redis: how long one process's claim to load a missing key makes the others wait. Default 10 s. */
  fillLockMs?: number;
  onRead?: (tier: CacheTier, hit: boolean) => void;
  onLookup?: CacheOptions['onLookup'];
  toNegative?: CacheOptions['toNegative'];
  fromNegative?: CacheOptions['fromNegative'];
  staleOn?: CacheOptions['staleOn'];
  onStoreError?: CacheOptions['onStoreError'];
}

/** The bot's cache: Redis behind an L1 when `redisUrl` is set, else a bounded `MemoryStore`. */
export function createDefaultCache(opts: DefaultCacheOptions = {}): LookupCache {
  return createLookupCache({
    store: createDefaultStore(opts),
    toNegative: opts.toNegative,
    fromNegative: opts.fromNegative,
    staleOn: opts.staleOn,
    onStoreError: opts.onStoreError,
    onLookup: opts.onLookup,
  });
}

function createDefaultStore(opts: DefaultCacheOptions): CacheStore {
  const bounds = { maxEntries: opts.maxEntries, maxBytes: opts.maxBytes };
  if (opts.redisUrl === undefined || opts.redisUrl === '') return new MemoryStore(bounds);
  const l2 = new RedisStore({ url: opts.redisUrl, prefix: opts.redisPrefix, fillLockMs: opts.fillLockMs });
  if (opts.l1TtlMs === 0) return l2;
  return new TieredStore({ ...bounds, l2, l1TtlMs: opts.l1TtlMs, onRead: opts.onRead });
}

/** Recent lookups for autocomplete: in Redis (shared by every process) when `redisUrl` is set, else in memory. */
export function createRecentLookups(
  opts: Pick<DefaultCacheOptions, 'redisUrl' | 'redisPrefix'>,
): RecentLookups {
  if (opts.redisUrl === undefined || opts.redisUrl === '') return new MemoryRecentLookups();
  return new RedisRecentLookups({ url: opts.redisUrl, prefix: opts.redisPrefix });
}
