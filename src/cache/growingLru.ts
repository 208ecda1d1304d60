import { LRUCache } from 'lru-cache';

export type GrowingLruOptions<K extends {}, V extends {}> = Omit<
  LRUCache.Options<K, V, unknown>,
  'max' | 'maxSize' | 'sizeCalculation'
> & {
  /** Most entries kept; the least recently used go first. */
  maxEntries: number;
};

/**
 * An LRU bounded by entry count whose storage grows as it fills. lru-cache's `max` allocates its slot
 * arrays for `max` entries up front: a 50,000-entry cache with TTLs holds about 2 MiB before its first
 * entry, in every process, used or not. Counting each entry as size 1 against `maxSize` keeps the same
 * bound with arrays that grow with use.
 */
export function growingLru<K extends {}, V extends {}>(options: GrowingLruOptions<K, V>): LRUCache<K, V> {
  const { maxEntries, ...rest } = options;
  return new LRUCache<K, V>({ ...rest, maxSize: maxEntries, sizeCalculation: () => 1 });
}
