import { LRUCache } from 'lru-cache';
import type { CacheStore, StoredEntry } from './types.ts';

export interface MemoryStoreOptions {
  /** Most entries kept; the least recently used go first. Default 50_000. */
  maxEntries?: number;
  /** Most estimated bytes kept (see `estimateEntryBytes`). Default 64 MiB. */
  maxBytes?: number;
}

export const DEFAULT_MAX_ENTRIES = 50_000;
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;

/**
 * Fixed cost per entry besides its key and value: the `StoredEntry` object, lru-cache's per-slot
 * bookkeeping (key, value, links, TTL and size slots) and its key map entry. A rough V8 estimate.
 */
const ENTRY_OVERHEAD_BYTES = 200;

/**
 * Estimated heap bytes of one entry: its key and the JSON text of its value at 2 bytes per character
 * (UTF-16, the worst case for V8 strings), plus a fixed overhead. JSON length tracks how much data an
 * object holds well enough for a memory bound and is computed once, when the entry is stored.
 * Throws when the value is not JSON-serialisable (which the store contract forbids anyway).
 */
export function estimateEntryBytes(key: string, entry: StoredEntry): number {
  const json = JSON.stringify(entry.value) as string | undefined;
  return ENTRY_OVERHEAD_BYTES + 2 * (key.length + (json?.length ?? 0));
}

/** In-process LRU store, bounded by entry count and by estimated bytes; entries drop after `retainMs`. */
export class MemoryStore implements CacheStore {
  readonly #lru: LRUCache<string, StoredEntry>;
  readonly #maxEntries: number;

  constructor(options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_ENTRIES;
    // The entry bound is kept here, not as lru-cache's `max`, which would allocate its arrays for every
    // entry up front (growingLru.ts); `maxSize` bounds the bytes.
    this.#lru = new LRUCache<string, StoredEntry>({
      maxSize: options.maxBytes ?? DEFAULT_MAX_BYTES,
      sizeCalculation: (entry, key) => estimateEntryBytes(key, entry),
    });
  }

  /** Entries currently held. */
  get size(): number {
    return this.#lru.size;
  }

  /** Sum of the estimated bytes of the entries held; never above `maxBytes`. */
  get calculatedSize(): number {
    return this.#lru.calculatedSize;
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    return this.#lru.get(key);
  }

  async set(key: string, entry: StoredEntry, retainMs: number): Promise<void> {
    // lru-cache reads a TTL of 0 as "forever", so a non-positive retention means "do not keep".
    if (!(retainMs > 0)) {
      this.#lru.delete(key);
      return;
    }
    // An entry larger than maxBytes is silently not stored by lru-cache (and any old value is dropped).
    this.#lru.set(key, entry, { ttl: Math.ceil(retainMs) });
    while (this.#lru.size > this.#maxEntries) this.#lru.pop();
  }

  async delete(key: string): Promise<void> {
    this.#lru.delete(key);
  }

  /** Drop every entry. */
  clear(): void {
    this.#lru.clear();
  }

  async close(): Promise<void> {
    this.clear();
  }
}
