/**
 * Two tiers: this process's LRU (L1) in front of Redis (L2), so a hit on a hot key costs no network
 * round trip. Every write and delete is published on a Redis channel and the other processes drop
 * their L1 copy on receipt, so they read the new entry within the pub/sub latency (milliseconds). If
 * that message is lost (the subscriber was disconnected: L1 is then cleared on reconnect) an L1 copy
 * still lives at most `l1TtlMs`: that is the bound on how long a process can serve an overwritten entry.
 */
import { L1Invalidation } from './invalidation.ts';
import { MemoryStore, type MemoryStoreOptions } from './memoryStore.ts';
import type { RedisStore } from './redisStore.ts';
import type { CacheStore, FillClaim, StoredEntry } from './types.ts';

export type CacheTier = 'l1' | 'l2';

export interface TieredStoreOptions extends MemoryStoreOptions {
  l2: RedisStore;
  /** Longest an L1 copy lives (the bound when an invalidation is lost). Default 30 s. */
  l1TtlMs?: number;
  /** Told of each read by tier (metrics); must not throw. */
  onRead?: (tier: CacheTier, hit: boolean) => void;
}

export const DEFAULT_L1_TTL_MS = 30_000;

export class TieredStore implements CacheStore {
  readonly #l1: MemoryStore;
  readonly #l2: RedisStore;
  readonly #l1TtlMs: number;
  readonly #onRead: ((tier: CacheTier, hit: boolean) => void) | undefined;
  readonly #invalidation: L1Invalidation;

  constructor(options: TieredStoreOptions) {
    this.#l1 = new MemoryStore(options);
    this.#l2 = options.l2;
    this.#l1TtlMs = options.l1TtlMs ?? DEFAULT_L1_TTL_MS;
    this.#onRead = options.onRead;
    this.#invalidation = new L1Invalidation(this.#l1, this.#l2);
  }

  /** Resolves once invalidations are being received (for tests and start-up). */
  ready(): Promise<void> {
    return this.#invalidation.ready();
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    const near = await this.#l1.get(key);
    this.#read('l1', near !== undefined);
    if (near !== undefined) return near;
    const far = await this.#l2.get(key);
    this.#read('l2', far !== undefined);
    if (far !== undefined) await this.#keep(key, far);
    return far;
  }

  async set(key: string, entry: StoredEntry, retainMs: number): Promise<void> {
    await this.#l1.set(key, entry, Math.min(retainMs, this.#l1TtlMs));
    await this.#l2.set(key, entry, retainMs);
    this.#invalidation.publish(key);
  }

  async delete(key: string): Promise<void> {
    await this.#l1.delete(key);
    await this.#l2.delete(key);
    this.#invalidation.publish(key);
  }

  claimFill(key: string): Promise<FillClaim> {
    return this.#l2.claimFill(key);
  }

  async fillState(key: string): Promise<{ entry: StoredEntry | undefined; filling: boolean }> {
    const state = await this.#l2.fillState(key);
    if (state.entry !== undefined) await this.#keep(key, state.entry);
    return state;
  }

  async close(): Promise<void> {
    this.#l1.clear();
    await this.#invalidation.close();
    await this.#l2.close();
  }

  async #keep(key: string, entry: StoredEntry): Promise<void> {
    await this.#l1.set(key, entry, this.#l1TtlMs);
  }

  #read(tier: CacheTier, hit: boolean): void {
    try {
      this.#onRead?.(tier, hit);
    } catch {
      // Metrics must not fail a read.
    }
  }
}
