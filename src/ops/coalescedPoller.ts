/**
 * Work that looks for something to do every `pollMs`, and at once when nudged; looks never overlap (a
 * nudge during one runs one more afterwards). The store-backed inboxes (signed proofs, interaction
 * hand-offs) extend it with their `look`.
 */
import type { Logger } from './log.ts';

export abstract class CoalescedPoller {
  readonly #pollMs: number;
  readonly #logger: Logger;
  readonly #what: string;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #stopping = false;

  constructor(options: { pollMs: number; logger: Logger; what: string }) {
    this.#pollMs = options.pollMs;
    this.#logger = options.logger;
    this.#what = options.what;
  }

  /** One look for work; a rejection is logged, and the next look comes as usual. */
  protected abstract look(): Promise<void>;

  get stopping(): boolean {
    return this.#stopping;
  }

  /** Look now, then every `pollMs`. */
  start(): void {
    if (this.#timer || this.#stopping) return;
    this.#timer = setInterval(() => this.nudge(), this.#pollMs);
    this.#timer.unref();
    this.nudge();
  }

  /** Look now (coalesced with a look in progress). */
  nudge(): void {
    if (this.#stopping) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.look()
      .catch((error: unknown) => this.#logger.error({ err: error }, `${this.#what} failed`))
      .finally(() => {
        this.#running = null;
        if (this.#again) {
          this.#again = false;
          this.nudge();
        }
      });
  }

  /** Resolves when no look is in progress. */
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }

  async stop(): Promise<void> {
    this.#stopping = true;
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.idle();
  }
}
