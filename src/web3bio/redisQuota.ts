/**
 * The Redis side of the shared upstream rate limit: the two atomic Lua scripts, the quota's keys, this
 * process's place in the Redis queue of waiting processes, and the first-connection wait.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { closeRedisClient } from '../cache/redisStore.ts';
import type { RateLimit } from './rateLimiter.ts';

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

/** Redis key of the quota: one per API key (by hash) or one for keyless use. */
export function quotaKey(prefix: string, apiKey: string | undefined): string {
  const id = apiKey ? createHash('sha256').update(apiKey).digest('hex').slice(0, 16) : 'keyless';
  // The braces keep the three keys in one Redis Cluster slot, as a script needs.
  return `${prefix}ratelimit:{${id}}`;
}

export interface RedisQuotaOptions {
  /** An ioredis client with no offline queue (commands fail at once while Redis is down). */
  redis: Redis;
  /** Close `redis` on `close()`. */
  ownsRedis: boolean;
  /** Already checked and rounded by the limiter. */
  limit: RateLimit;
  /** Which quota: the API key (hashed, never stored) or undefined for the keyless per-IP quota. */
  apiKey: string | undefined;
  prefix: string;
  leaseMs: number;
  pollMs: number;
}

/** One ask of the shared quota: a granted slot (with its release) or how long to wait before asking again. */
export type QuotaAnswer = { granted: true; release: () => void } | { granted: false; waitMs: number };

/** This process's handle on one shared quota in Redis. */
export class RedisQuota {
  readonly #redis: Redis & LimiterCommands;
  readonly #options: Omit<RedisQuotaOptions, 'redis' | 'apiKey' | 'prefix'>;
  readonly #keys: [string, string, string];
  readonly #processId = randomUUID();
  /** Whether this process has an entry in the Redis queue of waiting processes. */
  #queued = false;

  constructor(options: RedisQuotaOptions) {
    const base = quotaKey(options.prefix, options.apiKey);
    this.#keys = [`${base}:slots`, `${base}:waiters`, `${base}:seen`];
    this.#options = {
      ownsRedis: options.ownsRedis,
      limit: options.limit,
      leaseMs: options.leaseMs,
      pollMs: options.pollMs,
    };
    const redis = options.redis as Redis & Partial<LimiterCommands>;
    if (redis.web3bioLimiterAcquire === undefined) {
      redis.defineCommand('web3bioLimiterAcquire', { numberOfKeys: 3, lua: ACQUIRE_SCRIPT });
      redis.defineCommand('web3bioLimiterFinish', { numberOfKeys: 1, lua: FINISH_SCRIPT });
    }
    this.#redis = redis as Redis & LimiterCommands;
  }

  /** Asks for one slot; throws when Redis cannot be reached. */
  async ask(): Promise<QuotaAnswer> {
    const { limit, leaseMs, pollMs } = this.#options;
    const slotId = `${this.#processId}:${randomUUID()}`;
    await this.#connected();
    const [granted, waitMs] = await this.#redis.web3bioLimiterAcquire(
      ...this.#keys,
      limit.requests,
      limit.intervalMs,
      leaseMs,
      slotId,
      this.#processId,
      // A waiter asks at least every pollMs; one silent for much longer has gone away.
      Math.max(5_000, pollMs * 20),
      pollMs,
    );
    this.#queued = granted !== 1;
    return granted === 1 ? { granted: true, release: this.#finisher(slotId) } : { granted: false, waitMs };
  }

  /** Leaves the Redis queue of waiting processes, if this process stands in it. */
  async leave(): Promise<void> {
    if (!this.#queued) return;
    this.#queued = false;
    await this.#redis
      .multi()
      .zrem(this.#keys[1], this.#processId)
      .hdel(this.#keys[2], this.#processId)
      .exec()
      .catch(() => undefined);
  }

  close(): void {
    if (this.#options.ownsRedis) void closeRedisClient(this.#redis);
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
}
