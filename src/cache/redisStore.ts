import { Redis } from 'ioredis';
import type { CacheStore, StoredEntry } from './types.ts';

export interface RedisStoreOptions {
  /** Connection URL such as `redis://127.0.0.1:6379`; used when no `client` is given. */
  url?: string;
  /** An existing client. The store does not close a client it was given. */
  client?: Redis;
  /** Prepended to every key. Default `web3bio:`. */
  prefix?: string;
}

export const DEFAULT_REDIS_PREFIX = 'web3bio:';

/**
 * Settings for a client the store creates. The cache must not wait on a dead Redis: with no offline
 * queue a command fails at once while disconnected, and a hung server fails a command after a second
 * instead of stalling the lookup. Reconnection keeps its default backoff.
 */
const OWNED_CLIENT_OPTIONS = {
  enableOfflineQueue: false,
  commandTimeout: 1_000,
  connectTimeout: 2_000,
  maxRetriesPerRequest: 1,
} as const;

/** Thrown by `get` for a value that is not a stored entry (another writer, or a corrupted key). */
export class MalformedEntryError extends Error {
  readonly key: string;
  constructor(key: string) {
    super(`Malformed cache entry at ${key}`);
    this.name = 'MalformedEntryError';
    this.key = key;
  }
}

/** Shared store for several processes: JSON entries in Redis with `PX = retainMs`, under a key prefix. */
export class RedisStore implements CacheStore {
  readonly #client: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;

  constructor(options: RedisStoreOptions = {}) {
    this.#prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    if (options.client !== undefined) {
      this.#client = options.client;
      this.#ownsClient = false;
    } else {
      this.#client =
        options.url === undefined
          ? new Redis(OWNED_CLIENT_OPTIONS)
          : new Redis(options.url, OWNED_CLIENT_OPTIONS);
      this.#ownsClient = true;
      // Connection errors repeat on every reconnect attempt; failed commands already reach the cache's
      // onStoreError, so this listener only keeps ioredis from printing them as unhandled.
      this.#client.on('error', () => {});
    }
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    const text = await this.#client.get(this.#prefix + key);
    if (text === null) return undefined;
    const entry = parseEntry(text);
    if (entry === undefined) throw new MalformedEntryError(key);
    return entry;
  }

  async set(key: string, entry: StoredEntry, retainMs: number): Promise<void> {
    if (!(retainMs > 0)) {
      await this.#client.del(this.#prefix + key);
      return;
    }
    const px = Number.isFinite(retainMs) ? Math.ceil(retainMs) : Number.MAX_SAFE_INTEGER;
    await this.#client.set(this.#prefix + key, JSON.stringify(entry), 'PX', px);
  }

  async delete(key: string): Promise<void> {
    await this.#client.del(this.#prefix + key);
  }

  /** Closes the client if this store created it. */
  async close(): Promise<void> {
    if (!this.#ownsClient) return;
    if (this.#client.status === 'ready') {
      try {
        await this.#client.quit();
        return;
      } catch {
        // Fall through to a hard disconnect.
      }
    }
    this.#client.disconnect();
  }
}

/** The entry in `text`, or undefined when it is not JSON of a `StoredEntry`. */
export function parseEntry(text: string): StoredEntry | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  // A missing `value` is an entry whose value was `undefined` (JSON drops it).
  if (typeof data !== 'object' || data === null) return undefined;
  const { value, negative, fetchedAt, expiresAt } = data as Record<string, unknown>;
  if (typeof negative !== 'boolean' || !Number.isFinite(fetchedAt) || !Number.isFinite(expiresAt)) {
    return undefined;
  }
  return { value, negative, fetchedAt: fetchedAt as number, expiresAt: expiresAt as number };
}
