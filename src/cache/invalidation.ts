/**
 * The L1 invalidation channel of a TieredStore: every write and delete is published on a Redis channel,
 * and a subscriber connection of its own drops this process's L1 copy when another process publishes.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { MemoryStore } from './memoryStore.ts';
import { closeRedisClient, type RedisStore } from './redisStore.ts';

export class L1Invalidation {
  readonly #l1: MemoryStore;
  readonly #l2: RedisStore;
  readonly #channel: string;
  readonly #origin = randomUUID();
  readonly #subscriber: Redis;

  constructor(l1: MemoryStore, l2: RedisStore) {
    this.#l1 = l1;
    this.#l2 = l2;
    this.#channel = `${l2.prefix}invalidate`;
    // A subscriber connection of its own; it queues SUBSCRIBE until connected and resubscribes after a reconnect.
    this.#subscriber = l2.client.duplicate({ enableOfflineQueue: true, lazyConnect: false });
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

  /** Resolves once invalidations are being received. */
  async ready(): Promise<void> {
    if (this.#subscriber.status === 'ready') return;
    await new Promise<void>((resolve) => this.#subscriber.once('ready', () => resolve()));
  }

  /** Tells the other processes to drop their L1 copy of `key`. */
  publish(key: string): void {
    this.#l2.client.publish(this.#channel, `${this.#origin} ${key}`).catch(() => undefined);
  }

  /** Closes the subscriber connection (the L2 store is its owner's to close). */
  close(): Promise<void> {
    return closeRedisClient(this.#subscriber);
  }

  #onInvalidate(message: string): void {
    const space = message.indexOf(' ');
    if (space === -1 || message.slice(0, space) === this.#origin) return;
    void this.#l1.delete(message.slice(space + 1));
  }
}
