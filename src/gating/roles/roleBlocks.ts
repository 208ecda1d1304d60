/**
 * Roles the bot may not manage right now (Discord answered Missing Permissions, or the cache shows a
 * hierarchy problem an admin can fix). A blocked role's changes wait in the queue until the block lifts
 * (a change in the server that may fix it) or a probe, at 30 s doubling up to every 10 minutes, succeeds.
 */

/** A role the bot may not manage right now, and when it tries again. */
interface RoleBlock {
  probeAt: number;
  waitMs: number;
}

export interface RoleBlocksOptions {
  /** First wait before a probe, doubled each time. Default 30 s. */
  probeMs?: number;
  /** Longest wait between probes. Default 10 min. */
  maxProbeMs?: number;
  now: () => number;
}

export class RoleBlocks {
  readonly #blocks = new Map<string, RoleBlock>();
  /** `guild:role:problem` refusals already told to the admins (until the guild changes). */
  readonly #told = new Set<string>();
  readonly #probeMs: number;
  readonly #maxProbeMs: number;
  readonly #now: () => number;

  constructor(options: RoleBlocksOptions) {
    this.#probeMs = options.probeMs ?? 30_000;
    this.#maxProbeMs = options.maxProbeMs ?? 10 * 60_000;
    this.#now = options.now;
  }

  /** Until when the role's changes wait; null when it is not blocked or its probe is due. */
  waitUntil(guildId: string, roleId: string): number | null {
    const block = this.#blocks.get(`${guildId}:${roleId}`);
    return block && block.probeAt > this.#now() ? block.probeAt : null;
  }

  isBlocked(guildId: string, roleId: string): boolean {
    return this.#blocks.has(`${guildId}:${roleId}`);
  }

  /** Block (again) after a refusal: the next probe waits twice as long. `first` when it was not blocked. */
  block(guildId: string, roleId: string): { probeAt: number; waitMs: number; first: boolean } {
    const key = `${guildId}:${roleId}`;
    const previous = this.#blocks.get(key);
    const waitMs = previous ? Math.min(this.#maxProbeMs, previous.waitMs * 2) : this.#probeMs;
    const block = { probeAt: this.#now() + waitMs, waitMs };
    this.#blocks.set(key, block);
    return { ...block, first: previous === undefined };
  }

  /** Lift every block of the guild and forget what the admins were told; true when any role was blocked. */
  lift(guildId: string): boolean {
    const prefix = `${guildId}:`;
    for (const key of this.#told) if (key.startsWith(prefix)) this.#told.delete(key);
    let had = false;
    for (const key of this.#blocks.keys()) {
      if (key.startsWith(prefix)) {
        this.#blocks.delete(key);
        had = true;
      }
    }
    return had;
  }

  /** Roles of the guild whose changes wait on a block. */
  blockedRoles(guildId: string): string[] {
    const prefix = `${guildId}:`;
    return [...this.#blocks.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  }

  /** When the guild's earliest probe is due; null without blocks. */
  nextProbe(guildId: string): number | null {
    const due = this.blockedRoles(guildId).map((r) => this.#blocks.get(`${guildId}:${r}`)?.probeAt ?? 0);
    return due.length === 0 ? null : Math.min(...due);
  }

  get size(): number {
    return this.#blocks.size;
  }

  /** True the first time a refusal is seen (since the guild last changed): tell the admins then only. */
  firstTime(guildId: string, roleId: string, problem: string): boolean {
    const key = `${guildId}:${roleId}:${problem}`;
    if (this.#told.has(key)) return false;
    this.#told.add(key);
    return true;
  }
}
