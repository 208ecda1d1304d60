/**
 * Client-side limits on outgoing requests: a sliding-window rate limiter (so bursts queue instead of
 * turning into 429 storms) and a concurrency limit. Both serve waiters first come, first served.
 */

export interface RateLimit {
  /** Requests allowed in any window of `intervalMs`. */
  requests: number;
  intervalMs: number;
}

interface Waiter {
  resolve: () => void;
  reject: (reason: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

/** Allows at most `requests` grants in any sliding window of `intervalMs`. */
export class SlidingWindowLimiter {
  readonly #requests: number;
  readonly #intervalMs: number;
  readonly #now: () => number;
  /** Grant times still inside the window, oldest first. */
  readonly #grants: number[] = [];
  readonly #queue: Waiter[] = [];
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

  /** Resolves when a request may be sent; rejects with the signal's reason if it aborts first. */
  acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.#queue.length === 0 && this.#tryGrant()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.#queue.indexOf(waiter);
          if (index !== -1) this.#queue.splice(index, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
      this.#schedule();
    });
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

  #tryGrant(): boolean {
    const now = this.#now();
    while (this.#grants.length > 0 && (this.#grants[0] ?? 0) <= now - this.#intervalMs) this.#grants.shift();
    if (this.#grants.length >= this.#requests) return false;
    this.#grants.push(now);
    return true;
  }

  #schedule(): void {
    if (this.#timer !== undefined) return;
    while (this.#queue.length > 0 && this.#tryGrant()) {
      const waiter = this.#queue.shift();
      waiter?.signal?.removeEventListener('abort', waiter.onAbort);
      waiter?.resolve();
    }
    if (this.#queue.length === 0) return;
    const oldest = this.#grants[0] ?? this.#now();
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
  readonly #queue: Waiter[] = [];

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
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        resolve: () => resolve(this.#releaser()),
        reject,
        signal,
        onAbort: () => {
          const index = this.#queue.indexOf(waiter);
          if (index !== -1) this.#queue.splice(index, 1);
          reject(signal?.reason);
        },
      };
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
      this.#queue.push(waiter);
    });
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
        next.resolve();
      } else {
        this.#active--;
      }
    };
  }
}
