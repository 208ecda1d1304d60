/**
 * Deadlines of one length on one timer: each waiting thing is a Set entry (added in order, so the oldest
 * is first and due first), and a single timer, armed for the oldest, expires every entry whose time has
 * come and re-arms for the next. Adding and removing costs a Set operation, where a timer of its own per
 * request cost a Timeout to allocate, insert and clear on every interaction: the router's deferral window
 * (answerTiming.ts) and the signed routes' body timeout (web/signedBody.ts; issue #33's CPU per
 * interaction, npm run bench -- --only http).
 */

/** A waiting thing: `expire` runs once its time is up, unless it was removed first. */
export interface Deadline {
  readonly expire: () => void;
  /** performance.now() when it expires. */
  at: number;
}

export class DeadlineQueue {
  readonly #ms: number;
  readonly #waiting = new Set<Deadline>();
  #timer: NodeJS.Timeout | undefined;

  /** Deadlines `ms` after they are added. */
  constructor(ms: number) {
    this.#ms = ms;
  }

  /** Starts `entry`'s time: its `expire` runs `ms` from now unless it is removed before. */
  add(entry: Deadline): void {
    entry.at = performance.now() + this.#ms;
    this.#waiting.add(entry);
    if (this.#timer === undefined) this.#arm(this.#ms);
  }

  /** Stops `entry`'s time (nothing when it expired or was removed already). */
  delete(entry: Deadline): void {
    this.#waiting.delete(entry);
  }

  /** How many are waiting. */
  get size(): number {
    return this.#waiting.size;
  }

  #arm(ms: number): void {
    // Unref'd: a deadline keeps nothing alive (the request's socket does while it is open).
    this.#timer = setTimeout(this.#expireDue, Math.max(1, Math.ceil(ms))).unref();
  }

  // The fired timer stays in #timer until the end, so that an entry added by an `expire` does not arm a
  // second one: the loop reaches it (it is not due) and arms for it.
  readonly #expireDue = (): void => {
    const now = performance.now();
    for (const entry of this.#waiting) {
      if (entry.at > now) {
        this.#arm(entry.at - now);
        return;
      }
      this.#waiting.delete(entry);
      entry.expire();
    }
    this.#timer = undefined;
  };
}
