/**
 * The upstream rate limit shared by every process on one key, kept in Redis by two atomic Lua
 * scripts, with the local limiter's semantics: a request holds its slot from when it is granted until
 * `intervalMs` after it finished. Processes take turns through a queue of waiting processes in Redis
 * (one entry per process, its oldest waiter), so a process with a long queue cannot starve the others.
 * When Redis cannot be reached the limiter fails open to a local `SlidingWindowLimiter` and says so.
 */
import type { Redis } from 'ioredis';
import {
  enqueue,
  type RateLimit,
  type RequestLimiter,
  SlidingWindowLimiter,
  type Waiter,
} from './rateLimiter.ts';
import { type QuotaAnswer, RedisQuota } from './redisQuota.ts';

export { quotaKey } from './redisQuota.ts';

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

/** Whether grants come from the shared quota, logged and told to the owner when that changes. */
class SharedState {
  #shared = true;
  readonly #logger: SharedLimiterLogger | undefined;
  readonly #onChange: ((shared: boolean) => void) | undefined;

  constructor(logger: SharedLimiterLogger | undefined, onChange: ((shared: boolean) => void) | undefined) {
    this.#logger = logger;
    this.#onChange = onChange;
  }

  get shared(): boolean {
    return this.#shared;
  }

  set(shared: boolean, error?: unknown): void {
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
    this.#onChange?.(shared);
  }
}

/** A sleep between two asks that `wake()` cuts short (on close). */
class Pause {
  #wake: (() => void) | undefined;

  sleep(ms: number): Promise<void> {
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

  wake(): void {
    this.#wake?.();
  }
}

/** A `RequestLimiter` whose quota every process on the same Redis and key shares. */
export class SharedRateLimiter implements RequestLimiter {
  readonly #quota: RedisQuota;
  readonly #local: SlidingWindowLimiter;
  readonly #state: SharedState;
  readonly #pause = new Pause();
  readonly #queue: Waiter<() => void>[] = [];
  #pumping = false;
  #closed = false;

  constructor(options: SharedRateLimiterOptions) {
    const { requests, intervalMs } = options.limit;
    if (!(requests >= 1) || !(intervalMs > 0)) {
      throw new RangeError('rate limit needs requests >= 1 and intervalMs > 0');
    }
    const limit = { requests: Math.floor(requests), intervalMs };
    this.#local = new SlidingWindowLimiter(limit);
    this.#quota = new RedisQuota({
      redis: options.redis,
      ownsRedis: options.ownsRedis ?? false,
      limit,
      apiKey: options.apiKey,
      prefix: options.prefix ?? 'web3bio:',
      leaseMs: options.leaseMs ?? 60_000,
      pollMs: options.pollMs ?? 250,
    });
    this.#state = new SharedState(options.logger, options.onSharedChange);
  }

  /** Whether grants currently come from the shared quota (false: Redis is unreachable, local fallback). */
  get shared(): boolean {
    return this.#state.shared;
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
    this.#quota.close();
    this.#pause.wake();
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
        let answer: QuotaAnswer;
        try {
          answer = await this.#quota.ask();
        } catch (error) {
          this.#fallBack(error);
          continue;
        }
        this.#state.set(true);
        if (answer.granted) this.#grant(answer.release);
        else await this.#pause.sleep(answer.waitMs);
      }
      // Every waiter here aborted while this process stood in the Redis queue: leave it at once.
      await this.#quota.leave();
    } finally {
      this.#pumping = false;
      // A waiter that arrived while the pump was leaving the Redis queue still needs a pump.
      if (this.#queue.length > 0 && !this.#closed) void this.#pump();
    }
  }

  /** Hands a granted slot to the oldest waiter, or gives it back when every waiter aborted meanwhile. */
  #grant(done: () => void): void {
    const waiter = this.#queue.shift();
    if (waiter === undefined) {
      done();
      return;
    }
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.resolve(done);
  }

  /** Redis is unreachable: every queued waiter moves to the local limiter. */
  #fallBack(error: unknown): void {
    this.#state.set(false, error);
    for (const waiter of this.#queue.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      this.#local.acquire(waiter.signal).then(waiter.resolve, waiter.reject);
    }
  }
}
