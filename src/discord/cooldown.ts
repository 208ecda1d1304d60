/**
 * Per-user sliding window: at most `limit` uses (commands and clicks on their components) in `windowMs`.
 * A limit of 0 disables it.
 */
export class Cooldown {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #now: () => number;
  readonly #hits = new Map<string, number[]>();

  constructor(options: { limit: number; windowMs: number; now?: () => number }) {
    this.#limit = options.limit;
    this.#windowMs = options.windowMs;
    this.#now = options.now ?? Date.now;
  }

  /** Record a use; returns 0 when allowed, else how many ms until the user may run another. */
  take(userId: string): number {
    if (this.#limit === 0) return 0;
    const now = this.#now();
    const recent = (this.#hits.get(userId) ?? []).filter((t) => now - t < this.#windowMs);
    if (recent.length >= this.#limit) {
      this.#hits.set(userId, recent);
      return (recent[0] ?? now) + this.#windowMs - now;
    }
    recent.push(now);
    this.#hits.set(userId, recent);
    if (this.#hits.size > 10_000) this.#sweep(now);
    return 0;
  }

  #sweep(now: number): void {
    for (const [user, times] of this.#hits) {
      if (times.every((t) => now - t >= this.#windowMs)) this.#hits.delete(user);
    }
  }
}
