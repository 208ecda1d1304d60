/**
 * Two tiers: this process's LRU (L1) in front of Redis (L2), so a hit on a hot key costs no network
 * round trip. Every write and delete is published on a Redis channel and the other processes drop
 * their L1 copy on receipt, so they read the new entry within the pub/sub latency (milliseconds). If
 * that message is lost (the subscriber was disconnected: L1 is then cleared on reconnect) an L1 copy
 * still lives at most `l1TtlMs`: that is the bound on how long a process can serve an overwritten entry.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { MemoryStore, type MemoryStoreOptions } from './memoryStore.ts';
import { closeRedisClient, type RedisStore } from './redisStore.ts';
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
  readonly #channel: string;
  readonly #origin = randomUUID();
  readonly #subscriber: Redis;

  constructor(options: TieredStoreOptions) {
    this.#l1 = new MemoryStore(options);
    this.#l2 = options.l2;
    this.#l1TtlMs = options.l1TtlMs ?? DEFAULT_L1_TTL_MS;
    this.#onRead = options.onRead;
    this.#channel = `${this.#l2.prefix}invalidate`;
    // A subscriber connection of its own; it queues SUBSCRIBE until connected and resubscribes after a reconnect.
    this.#subscriber = this.#l2.client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
    this.#subscriber.on('error', () => {});
    this.#subscriber.on('message', (_channel: string, message: string) => this.#onInvalidate(message));
    // Messages sent while disconnected are lost: forget every L1 copy when the subscription resumes.
    let connectedBefore = false;
    this.#subscriber.on('ready', () => {
      if (connectedBefore) this.#l1.clear();
      connectedBefore = true;
    });
    this.#subscriber.subscribe(this.#channel).catch(() => undefined);
  }

  /** Resolves once invalidations are being received (for tests and start-up). */
  async ready(): Promise<void> {
    if (this.#subscriber.status === 'ready') return;
    await new Promise<void>((resolve) => this.#subscriber.once('ready', () => resolve()));
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
    this.#publish(key);
  }

  async delete(key: string): Promise<void> {
    await this.#l1.delete(key);
    await this.#l2.delete(key);
    this.#publish(key);
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
    await closeRedisClient(this.#subscriber);
    await this.#l2.close();
  }

  async #keep(key: string, entry: StoredEntry): Promise<void> {
    await this.#l1.set(key, entry, this.#l1TtlMs);
  }

  #publish(key: string): void {
    this.#l2.client.publish(this.#channel, `${this.#origin} ${key}`).catch(() => undefined);
  }

  #onInvalidate(message: string): void {
    const space = message.indexOf(' ');
    if (space === -1 || message.slice(0, space) === this.#origin) return;
    void this.#l1.delete(message.slice(space + 1));
  }

  #read(tier: CacheTier, hit: boolean): void {
    try {
      this.#onRead?.(tier, hit);
    } catch {
      // Metrics must not fail a read.
    }
  }
}
