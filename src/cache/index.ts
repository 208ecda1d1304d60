import { createLookupCache } from './lookupCache.ts';
import { MemoryStore } from './memoryStore.ts';
import { RedisStore } from './redisStore.ts';
import type { CacheOptions, LookupCache } from './types.ts';

export { createLookupCache } from './lookupCache.ts';
export {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  estimateEntryBytes,
  MemoryStore,
  type MemoryStoreOptions,
} from './memoryStore.ts';
export {
  DEFAULT_REDIS_PREFIX,
  MalformedEntryError,
  parseEntry,
  RedisStore,
  type RedisStoreOptions,
} from './redisStore.ts';
export type * from './types.ts';

export interface DefaultCacheOptions {
  /** When set, entries live in Redis (shared by every process); otherwise in this process's memory. */
  redisUrl?: string;
  /** Memory store only. */
  maxEntries?: number;
  /** Memory store only. */
  maxBytes?: number;
  toNegative?: CacheOptions['toNegative'];
  fromNegative?: CacheOptions['fromNegative'];
  staleOn?: CacheOptions['staleOn'];
  onStoreError?: CacheOptions['onStoreError'];
}

/** The bot's cache: a `RedisStore` when `redisUrl` is set, else a bounded `MemoryStore`. */
export function createDefaultCache(opts: DefaultCacheOptions = {}): LookupCache {
  const store =
    opts.redisUrl === undefined || opts.redisUrl === ''
      ? new MemoryStore({ maxEntries: opts.maxEntries, maxBytes: opts.maxBytes })
      : new RedisStore({ url: opts.redisUrl });
  return createLookupCache({
    store,
    toNegative: opts.toNegative,
    fromNegative: opts.fromNegative,
    staleOn: opts.staleOn,
    onStoreError: opts.onStoreError,
  });
}
