import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import loadIoredis from './loadIoredis.cjs';
import type { CacheStore, FillClaim, StoredEntry } from './types.ts';

export interface RedisStoreOptions {
  /** Connection URL such as `redis://127.0.0.1:6379`; used when no `client` is given. */
  url?: string;
  /** An existing client. The store does not close a client it was given. */
  client?: Redis;
  /** Prepended to every key. Default `web3bio:`. */
  prefix?: string;
  /**
   * How long a process's claim to load a missing key holds (`claimFill`): other processes wait for its
   * entry at most this long. Default 10 s; 0 turns cross-process single-flight off.
   */
  fillLockMs?: number;
}

/** Deletes the lock only if it still holds this claim's token (it may have expired and been re-taken). */
const RELEASE_SCRIPT = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export const DEFAULT_REDIS_PREFIX = 'web3bio:';

/** The longest wait between two reconnection attempts, ms. */
export const RECONNECT_MAX_MS = 1_000;

/**
 * Settings for a client the store creates. The cache must not wait on a dead Redis: with no offline
 * queue a command fails at once while disconnected, and a hung server fails a command after a second
 * instead of stalling the lookup. Reconnection backs off as ioredis does (50 ms doubling) but to at most
 * RECONNECT_MAX_MS, not ioredis's 5 s: every replica is back within a second of Redis, which bounds how
 * long a Redis that returns empty holds deliveries (web/deliveryGenerations.ts).
 */
const OWNED_CLIENT_OPTIONS = {
  enableOfflineQueue: false,
  commandTimeout: 1_000,
  connectTimeout: 2_000,
  maxRetriesPerRequest: 1,
  retryStrategy: (times: number) => Math.min(50 * 2 ** (times - 1), RECONNECT_MAX_MS),
} as const;

/**
 * An ioredis client that never waits on a dead Redis (see OWNED_CLIENT_OPTIONS). Connection errors
 * repeat on every reconnect attempt; failed commands already reach their callers, so the `error`
 * listener only keeps ioredis from printing them as unhandled.
 */
export function createRedisClient(url: string | undefined): Redis {
  // Loaded on the first client: a process without REDIS_URL never loads ioredis (about 9 MiB).
  const { Redis: Client } = loadIoredis();
  const client = url === undefined ? new Client(OWNED_CLIENT_OPTIONS) : new Client(url, OWNED_CLIENT_OPTIONS);
  client.on('error', () => {});
  return client;
}

/**
 * Resolves once `client` is connected, or after `timeoutMs` when Redis does not answer (callers then go
 * on without it: every command fails fast until it is back).
 */
export async function untilRedisReady(client: Redis, timeoutMs = 2_000): Promise<void> {
  if (client.status === 'ready') return;
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    client.once('ready', done);
  });
}

/** Closes a client: QUIT when connected, else a hard disconnect. */
export async function closeRedisClient(client: Redis): Promise<void> {
  if (client.status === 'ready') {
    try {
      await client.quit();
      return;
    } catch {
      // Fall through to a hard disconnect.
    }
  }
  client.disconnect();
}

const NOT_OWNER: FillClaim = { owner: false, release: async () => {} };
/** With the lock off every process loads for itself, as if it had claimed the key. */
const UNCOORDINATED: FillClaim = { owner: true, release: async () => {} };

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
  readonly #fillLockMs: number;

  constructor(options: RedisStoreOptions = {}) {
    this.#prefix = options.prefix ?? DEFAULT_REDIS_PREFIX;
    this.#fillLockMs = options.fillLockMs ?? 10_000;
    if (options.client !== undefined) {
      this.#client = options.client;
      this.#ownsClient = false;
    } else {
      this.#client = createRedisClient(options.url);
      this.#ownsClient = true;
    }
  }

  /** The client, for a store that adds to this one (pub/sub of a tiered store). */
  get client(): Redis {
    return this.#client;
  }

  get prefix(): string {
    return this.#prefix;
  }

  async get(key: string): Promise<StoredEntry | undefined> {
    return this.#parse(key, await this.#client.get(this.#prefix + key));
  }

  /** SET NX PX on the key's lock: one process at a time loads a missing key. */
  async claimFill(key: string): Promise<FillClaim> {
    if (!(this.#fillLockMs > 0)) return UNCOORDINATED;
    const lock = this.#lockKey(key);
    const token = randomUUID();
    const taken = await this.#client.set(lock, token, 'PX', this.#fillLockMs, 'NX');
    if (taken !== 'OK') return NOT_OWNER;
    return {
      owner: true,
      release: async () => {
        await this.#client.eval(RELEASE_SCRIPT, 1, lock, token).catch(() => undefined);
      },
    };
  }

  /** The entry and whether the lock is held, in one round trip. */
  async fillState(key: string): Promise<{ entry: StoredEntry | undefined; filling: boolean }> {
    const replies = await this.#client
      .multi()
      .get(this.#prefix + key)
      .exists(this.#lockKey(key))
      .exec();
    const [getReply, existsReply] = replies ?? [];
    if (getReply?.[0]) throw getReply[0];
    if (existsReply?.[0]) throw existsReply[0];
    return {
      entry: this.#parse(key, (getReply?.[1] as string | null | undefined) ?? null),
      filling: existsReply?.[1] === 1,
    };
  }

  #lockKey(key: string): string {
    return `${this.#prefix}fill-lock:${key}`;
  }

  #parse(key: string, text: string | null): StoredEntry | undefined {
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
    if (this.#ownsClient) await closeRedisClient(this.#client);
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
