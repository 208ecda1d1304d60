/**
 * Client-side limits on outgoing requests: a sliding-window rate limiter (so bursts queue instead of
 * turning into 429 storms) and a concurrency limit. Both serve waiters first come, first served.
 */

export interface RateLimit {
  /** Requests allowed in any window of `intervalMs`. */
  requests: number;
  intervalMs: number;
}

/** What the transport needs of a rate limiter: the local `SlidingWindowLimiter` or the shared one. */
export interface RequestLimiter {
  /** Resolves with `done` when a request may be sent; call `done` once its answer (or failure) is in. */
  acquire(signal?: AbortSignal): Promise<() => void>;
  /** Stop and reject every waiter. */
  close(reason?: unknown): void;
}

export interface Waiter<T> {
  resolve: (value: T) => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Queue a waiter; it leaves the queue and rejects with the reason when `signal` aborts first. */
export function enqueue<T>(queue: Waiter<T>[], signal: AbortSignal | undefined): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const waiter: Waiter<T> = {
      resolve,
      reject,
      signal,
      onAbort: () => {
        const index = queue.indexOf(waiter);
        if (index !== -1) queue.splice(index, 1);
        reject(signal?.reason);
      },
    };
    signal?.addEventListener('abort', waiter.onAbort, { once: true });
    queue.push(waiter);
  });
}

/**
 * Allows at most `requests` requests in any sliding window of `intervalMs`, where a request occupies
 * its slot from when it is granted until `intervalMs` after it finished (the `done` callback). Counting
 * from the answer rather than the send keeps the limit even when requests reach the server unevenly:
 * the server counts a request on arrival, which is always before its answer.
 */
export class SlidingWindowLimiter implements RequestLimiter {
  readonly #requests: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** When each request still counted finished (Infinity while in flight). */
  #finishedAt: number[] = [];
  readonly #queue: Waiter<() => void>[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(limit: RateLimit, now: () => number = Date.now) {
    if (!(limit.requests >= 1) || !(limit.intervalMs > 0)) {
      throw new RangeError('rate limit needs requests >= 1 and intervalMs > 0');
    }
    this.#requests = Math.floor(limit.requests);
    this.#intervalMs = limit.intervalMs;
    this.#now = now;
  }

  /** Waiters queued behind the limit. */
  get pending(): number {
    return this.#queue.length;
  }

  /**
   * Resolves with `done` when a request may be sent; call `done` once its answer (or failure) is in.
   * Rejects with the signal's reason if it aborts first.
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    const done = this.#queue.length === 0 ? this.#tryGrant() : undefined;
    if (done) return Promise.resolve(done);
    const waiting = enqueue(this.#queue, signal);
    this.#schedule();
    return waiting;
  }

  /** Stop the timer and reject every waiter (used on close). */
  close(reason: unknown = new Error('rate limiter closed')): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const waiter of this.#queue.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(reason);
    }
  }

  #tryGrant(): (() => void) | undefined {
    const horizon = this.#now() - this.#intervalMs;
    this.#finishedAt = this.#finishedAt.filter((t) => t > horizon);
    if (this.#finishedAt.length >= this.#requests) return undefined;
    this.#finishedAt.push(Number.POSITIVE_INFINITY);
    let finished = false;
    return () => {
      if (finished) return;
      finished = true;
      // In-flight markers are all alike and pruning moves them: finishing any one of them is exact.
      const slot = this.#finishedAt.indexOf(Number.POSITIVE_INFINITY);
      if (slot !== -1) this.#finishedAt[slot] = this.#now();
      this.#schedule();
    };
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    while (this.#queue.length > 0) {
      const done = this.#tryGrant();
      if (!done) break;
      const waiter = this.#queue.shift();
      waiter?.signal?.removeEventListener('abort', waiter.onAbort);
      waiter?.resolve(done);
    }
    if (this.#queue.length === 0) return;
    // Wait for the oldest finished request to leave the window; with every slot in flight, `done` wakes us.
    const oldest = Math.min(...this.#finishedAt);
    if (oldest === Number.POSITIVE_INFINITY) return;
    const wait = Math.max(1, oldest + this.#intervalMs - this.#now());
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#schedule();
    }, wait);
    // A queue waiting on the limiter must not keep a finished process alive.
    this.#timer.unref();
  }
}

/** At most `max` holders at a time. */
export class ConcurrencyLimit {
  readonly #max: number;
  #active = 0;
  readonly #queue: Waiter<() => void>[] = [];

  constructor(max: number) {
    if (!(max >= 1)) throw new RangeError('concurrency needs to be at least 1');
    this.#max = Math.floor(max);
  }

  get active(): number {
    return this.#active;
  }

  /** Resolves with a release function once a slot is free. */
  acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.#active < this.#max) {
      this.#active++;
      return Promise.resolve(this.#releaser());
    }
    return enqueue(this.#queue, signal);
  }

  #releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#queue.shift();
      if (next) {
        // The slot passes straight to the next waiter, so `active` stays the same.
        next.signal?.removeEventListener('abort', next.onAbort);
        next.resolve(this.#releaser());
      } else {
        this.#active--;
      }
    };
  }
}
