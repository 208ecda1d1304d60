/**
 * The upstream rate limit shared by every process on one key, kept in Redis by two atomic Lua
 * scripts, with the local limiter's semantics: a request holds its slot from when it is granted until
 * `intervalMs` after it finished. Processes take turns through a queue of waiting processes in Redis
 * (one entry per process, its oldest waiter), so a process with a long queue cannot starve the others.
 * When Redis cannot be reached the limiter fails open to a local `SlidingWindowLimiter` and says so.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedisClient } from '../cache/redisStore.ts';
import {
  enqueue,
  type RateLimit,
  type RequestLimiter,
  SlidingWindowLimiter,
  type Waiter,
} from './rateLimiter.ts';

/**
 * KEYS: slots (zset: slot id -> when it finished, or grant time + lease while in flight), waiters
 * (zset: process -> when it began waiting), seen (hash: process -> when it last asked).
 * ARGV: limit, intervalMs, leaseMs, slot id, process id, waiterStaleMs, pollMs.
 * Returns {1, 0} when granted, else {0, ms to wait before asking again}. Time is the server's, so
 * processes on machines with different clocks agree.
 */
const ACQUIRE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local limit = tonumber(ARGV[1])
local interval = tonumber(ARGV[2])
local lease = tonumber(ARGV[3])
local stale = tonumber(ARGV[6])
local poll = tonumber(ARGV[7])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - interval)
local seen = redis.call('HGETALL', KEYS[3])
for i = 1, #seen, 2 do
  if tonumber(seen[i + 1]) < now - stale then
    redis.call('ZREM', KEYS[2], seen[i])
    redis.call('HDEL', KEYS[3], seen[i])
  end
end
local free = limit - redis.call('ZCARD', KEYS[1])
local rank = redis.call('ZRANK', KEYS[2], ARGV[5])
if not rank then rank = redis.call('ZCARD', KEYS[2]) end
if free > rank then
  redis.call('ZADD', KEYS[1], now + lease, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], lease + interval)
  redis.call('ZREM', KEYS[2], ARGV[5])
  redis.call('HDEL', KEYS[3], ARGV[5])
  return {1, 0}
end
redis.call('ZADD', KEYS[2], 'NX', now, ARGV[5])
redis.call('HSET', KEYS[3], ARGV[5], now)
redis.call('PEXPIRE', KEYS[2], stale)
redis.call('PEXPIRE', KEYS[3], stale)
local wait = poll
if free > 0 then
  wait = 2
else
  local oldest = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', now, 'WITHSCORES', 'LIMIT', 0, 1)
  if oldest[2] then wait = math.min(poll, math.max(1, tonumber(oldest[2]) + interval - now)) end
end
return {0, wait}
`;

/** KEYS: slots. ARGV: slot id. Marks the slot finished now (it stays counted for one more window). */
const FINISH_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1])
return 1
`;

/** Longest wait for the first connection before the local limiter takes over. */
const CONNECT_WAIT_MS = 2_000;

interface LimiterCommands {
  web3bioLimiterAcquire(...args: (string | number)[]): Promise<[number, number]>;
  web3bioLimiterFinish(...args: (string | number)[]): Promise<number>;
}

/** pino-compatible subset. */
export interface SharedLimiterLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SharedRateLimiterOptions {
  /** An ioredis client with no offline queue (commands fail at once while Redis is down). */
  redis: Redis;
  /** Close `redis` on `close()`. Default false. */
  ownsRedis?: boolean;
  limit: RateLimit;
  /** Which quota: the API key (hashed, never stored) or undefined for the keyless per-IP quota. */
  apiKey?: string | undefined;
  /** Prepended to the limiter's keys. Default `web3bio:`. */
  prefix?: string;
  /** How long a granted request may stay in flight before a crashed holder's slot is let go. Default 60 s. */
  leaseMs?: number;
  /** Longest pause between two asks while waiting. Default 250 ms. */
  pollMs?: number;
  logger?: SharedLimiterLogger | undefined;
  /** Told when the limiter switches between the shared quota (true) and the local fallback (false). */
  onSharedChange?: (shared: boolean) => void;
}

/** Redis key of the quota: one per API key (by hash) or one for keyless use. */
export function quotaKey(prefix: string, apiKey: string | undefined): string {
  const id = apiKey ? createHash('sha256').update(apiKey).digest('hex').slice(0, 16) : 'keyless';
  // The braces keep the three keys in one Redis Cluster slot, as a script needs.
  return `${prefix}ratelimit:{${id}}`;
}

/** A `RequestLimiter` whose quota every process on the same Redis and key shares. */
export class SharedRateLimiter implements RequestLimiter {
  readonly #redis: Redis & LimiterCommands;
  readonly #ownsRedis: boolean;
  readonly #limit: RateLimit;
  readonly #keys: [string, string, string];
  readonly #processId = randomUUID();
  readonly #leaseMs: number;
  readonly #pollMs: number;
  readonly #local: SlidingWindowLimiter;
  readonly #logger: SharedLimiterLogger | undefined;
  readonly #onSharedChange: ((shared: boolean) => void) | undefined;
  readonly #queue: Waiter<() => void>[] = [];
  #pumping = false;
  /** Whether this process has an entry in the Redis queue of waiting processes. */
  #queued = false;
  #closed = false;
  #shared = true;
  #wake: (() => void) | undefined;

  constructor(options: SharedRateLimiterOptions) {
    const { requests, intervalMs } = options.limit;
    if (!(requests >= 1) || !(intervalMs > 0)) {
      throw new RangeError('rate limit needs requests >= 1 and intervalMs > 0');
    }
    this.#limit = { requests: Math.floor(requests), intervalMs };
    this.#local = new SlidingWindowLimiter(this.#limit);
    const base = quotaKey(options.prefix ?? 'web3bio:', options.apiKey);
    this.#keys = [`${base}:slots`, `${base}:waiters`, `${base}:seen`];
    this.#leaseMs = options.leaseMs ?? 60_000;
    this.#pollMs = options.pollMs ?? 250;
    this.#logger = options.logger;
    this.#onSharedChange = options.onSharedChange;
    const redis = options.redis as Redis & Partial<LimiterCommands>;
    if (redis.web3bioLimiterAcquire === undefined) {
      redis.defineCommand('web3bioLimiterAcquire', { numberOfKeys: 3, lua: ACQUIRE_SCRIPT });
      redis.defineCommand('web3bioLimiterFinish', { numberOfKeys: 1, lua: FINISH_SCRIPT });
    }
    this.#redis = redis as Redis & LimiterCommands;
    this.#ownsRedis = options.ownsRedis ?? false;
  }

  /** Whether grants currently come from the shared quota (false: Redis is unreachable, local fallback). */
  get shared(): boolean {
    return this.#shared;
  }

  /** Waiters queued behind the limit in this process. */
  get pending(): number {
    return this.#queue.length;
  }

  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#closed) return Promise.reject(new Error('rate limiter closed'));
    const waiting = enqueue(this.#queue, signal);
    void this.#pump();
    return waiting;
  }

  close(reason: unknown = new Error('rate limiter closed')): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#ownsRedis) void closeRedisClient(this.#redis);
    this.#wake?.();
    this.#local.close(reason);
    for (const waiter of this.#queue.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(reason);
    }
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0 && !this.#closed) {
        let answer: [number, number];
        const slotId = `${this.#processId}:${randomUUID()}`;
        try {
          await this.#connected();
          answer = await this.#redis.web3bioLimiterAcquire(
            ...this.#keys,
            this.#limit.requests,
            this.#limit.intervalMs,
            this.#leaseMs,
            slotId,
            this.#processId,
            // A waiter asks at least every pollMs; one silent for much longer has gone away.
            Math.max(5_000, this.#pollMs * 20),
            this.#pollMs,
          );
        } catch (error) {
          this.#fallBack(error);
          continue;
        }
        this.#setShared(true);
        const [granted, waitMs] = answer;
        this.#queued = granted !== 1;
        if (granted === 1) this.#grant(slotId);
        else await this.#sleep(waitMs);
      }
      // Every waiter here aborted while this process stood in the Redis queue: leave it at once.
      if (this.#queued) {
        this.#queued = false;
        await this.#redis
          .multi()
          .zrem(this.#keys[1], this.#processId)
          .hdel(this.#keys[2], this.#processId)
          .exec()
          .catch(() => undefined);
      }
    } finally {
      this.#pumping = false;
      // A waiter that arrived while the pump was leaving the Redis queue still needs a pump.
      if (this.#queue.length > 0 && !this.#closed) void this.#pump();
    }
  }

  /** Hands a granted slot to the oldest waiter, or gives it back when every waiter aborted meanwhile. */
  #grant(slotId: string): void {
    const done = this.#finisher(slotId);
    const waiter = this.#queue.shift();
    if (waiter === undefined) {
      done();
      return;
    }
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(done);
  }

  #finisher(slotId: string): () => void {
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      // A lost finish only keeps the slot until its lease runs out: later, never more requests.
      this.#redis.web3bioLimiterFinish(this.#keys[0], slotId).catch(() => undefined);
    };
  }

  /** Redis is unreachable: every queued waiter moves to the local limiter. */
  #fallBack(error: unknown): void {
    this.#setShared(false, error);
    for (const waiter of this.#queue.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#local.acquire(waiter.signal).then(waiter.resolve, waiter.reject);
    }
  }

  #setShared(shared: boolean, error?: unknown): void {
    if (this.#shared === shared) return;
    this.#shared = shared;
    if (shared) this.#logger?.info({}, 'shared upstream rate limit reachable again: using it');
    else {
      const reason = error instanceof Error ? error.message : String(error);
      this.#logger?.warn(
        { reason },
        'shared upstream rate limit unreachable (Redis): using the local limiter',
      );
    }
    this.#onSharedChange?.(shared);
  }

  /**
   * While the client is making its first connection, wait for it (bounded): with no offline queue a
   * command would fail at once and a healthy Redis would count as down. Reconnects do not wait.
   */
  async #connected(): Promise<void> {
    const status = this.#redis.status;
    if (status !== 'connecting' && status !== 'connect' && status !== 'wait') return;
    if (status === 'wait') this.#redis.connect().catch(() => undefined);
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        this.#redis.off('ready', finish);
        this.#redis.off('close', finish);
        resolve();
      };
      const timer = setTimeout(finish, CONNECT_WAIT_MS);
      this.#redis.once('ready', finish);
      this.#redis.once('close', finish);
    });
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#wake = undefined;
        resolve();
      }, ms);
      timer.unref();
      this.#wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
