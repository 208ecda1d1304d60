/**
 * The gate every upstream attempt passes: a slot under the concurrency limit, then a grant of the
 * rate limiter (when there is one), its wait reported to the observer.
 */
import { ConcurrencyLimit, type RequestLimiter } from './rateLimiter.ts';

/** The part of the transport's observer the gate tells. */
export interface LimiterWaitObserver {
  onLimiterWait?(ms: number): void;
}

export class RequestGate {
  readonly #slots: ConcurrencyLimit;
  readonly #limiter: RequestLimiter | null;
  readonly #observer: LimiterWaitObserver | undefined;

  constructor(
    concurrency: number,
    limiter: RequestLimiter | null,
    observer: LimiterWaitObserver | undefined,
  ) {
    this.#slots = new ConcurrencyLimit(concurrency);
    this.#limiter = limiter;
    this.#observer = observer;
  }

  /** Waits for a slot and a grant; resolves with the function that gives both back. */
  async enter(signal: AbortSignal | undefined): Promise<() => void> {
    const release = await this.#slots.acquire(signal);
    let finished: (() => void) | undefined;
    const leave = () => {
      finished?.();
      release();
    };
    try {
      if (this.#limiter) {
        const waitStarted = performance.now();
        finished = await this.#limiter.acquire(signal);
        this.#observer?.onLimiterWait?.(performance.now() - waitStarted);
      }
    } catch (error) {
      leave();
      throw error;
    }
    return leave;
  }

  /** Rejects the requests waiting for the rate limiter. */
  close(reason: unknown): void {
    this.#limiter?.close(reason);
  }
}
