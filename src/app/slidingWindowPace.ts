import { setTimeout as sleep } from 'node:timers/promises';

/**
 * At most `limit` starts in any `windowMs`, in the order asked: a sliding log of start times. A fixed
 * window (what @discordjs/rest keeps: 50 from its first request, then a fresh 50) lets the end of one
 * window and the start of the next go out together; when Discord's own window began later than the
 * proxy's (a first request slowed by a new connection), both land in it and it answers 429s. In a sliding
 * window, any `windowMs` holds at most `limit` starts, whenever Discord's window begins.
 */
export class SlidingWindowPace {
  readonly #starts: number[] = [];
  #queue: Promise<void> = Promise.resolve();
  readonly #limit: number;
  readonly #windowMs: number;

  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }

  /** Resolves when one more may start now (counted as started); rejects if `signal` aborts first. */
  take(signal?: AbortSignal): Promise<void> {
    const turn = this.#queue.then(() => this.#wait(signal));
    this.#queue = turn.catch(() => undefined);
    return turn;
  }

  async #wait(signal: AbortSignal | undefined): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = Date.now();
      while (this.#starts.length > 0 && now - (this.#starts[0] ?? now) >= this.#windowMs)
        this.#starts.shift();
      const oldest = this.#starts[0];
      if (oldest === undefined || this.#starts.length < this.#limit) {
        this.#starts.push(now);
        return;
      }
      await sleep(oldest + this.#windowMs - now, undefined, signal ? { signal } : {});
    }
  }
}
