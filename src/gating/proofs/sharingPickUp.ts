/**
 * Sharing turned on anywhere reaches the servers this process serves (issue #36). `/verify
 * share:all-servers` links the member's proofs at once only in the servers of the process that answers
 * it; every gateway process looks in the store every `intervalMs` for the members who turned sharing on
 * since its last look (one indexed query, `proof_sharing` by `since`) and brings their proofs to its own
 * gating servers where they are members, roles following. Bringing skips what is linked, and the store
 * refuses a second link, so two processes (or this one and the command) racing on a server link once.
 */
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, SharingTurnedOn } from '../../store/types.ts';
import type { BackgroundTasks } from '../rechecks/backgroundTasks.ts';
import { PeriodicPass } from '../rechecks/periodicPass.ts';

export const DEFAULT_SHARING_PICKUP_MS = 30_000;
/**
 * How far before its last look each look reaches again: `since` is the writing process's clock, which may
 * run behind this one's, and an insert may land after a look that started later.
 */
const CLOCK_SLACK_MS = 60_000;
/**
 * How far back the first look after a start reaches: sharing turned on while this process was down
 * (a restart, a deploy) this long still reaches its servers. Older, it waits for the member's next join.
 */
export const START_LOOKBACK_MS = 15 * 60_000;
/** Rows read at once; a look reads on until the rows run out. */
const PAGE = 100;
/** A member whose proofs could not be brought is tried again on this many looks, then left to their next join. */
const MAX_ATTEMPTS = 5;

export interface SharingPickUpOptions {
  store: Pick<GatingStore, 'sharingSince'>;
  logger: Logger;
  tasks: BackgroundTasks;
  now: () => number;
  /**
   * Bring the member's shared proofs to the gating servers this process serves where they are a member:
   * how many servers linked something now, and whether any server failed (tried again next look).
   */
  bringToServed: (userId: string) => Promise<{ servers: number; failed: boolean }>;
  /** How often a look runs. Default 30 s. */
  intervalMs?: number;
}

/** Every `intervalMs`, brings the proofs of members who turned sharing on since the last look. */
export class SharingPickUp extends PeriodicPass {
  readonly #o: SharingPickUpOptions;
  /** Where the next look starts; null before the first. */
  #from: SharingTurnedOn | null = null;
  /** Rows handled in the window the next look reads again (account → its `since`). */
  readonly #done = new Map<string, number>();
  /** Rows that failed, by account: their `since` and the attempts so far. */
  readonly #failed = new Map<string, { since: number; attempts: number }>();

  constructor(options: SharingPickUpOptions) {
    super(options.tasks, options.intervalMs ?? DEFAULT_SHARING_PICKUP_MS);
    this.#o = options;
  }

  /** One look: the members whose proofs reached at least one server here. */
  protected async pass(): Promise<number> {
    const { store, now, tasks } = this.#o;
    const startedAt = now();
    let after = this.#from ?? { since: startedAt - START_LOOKBACK_MS, userId: '' };
    let picked = 0;
    const read = new Set<string>();
    for (;;) {
      const rows = await store.sharingSince(after, PAGE);
      for (const row of rows) {
        if (tasks.stopping) return picked;
        read.add(row.userId);
        if (this.#done.get(row.userId) === row.since) continue;
        if (await this.#bring(row)) picked += 1;
      }
      const last = rows.at(-1);
      if (!last || rows.length < PAGE) break;
      after = last;
    }
    // A failure whose member turned sharing off meanwhile is no longer waited for.
    for (const userId of this.#failed.keys()) if (!read.has(userId)) this.#failed.delete(userId);
    this.#forgetBefore(startedAt - CLOCK_SLACK_MS);
    return picked;
  }

  /** Bring one member's proofs here; a failure is kept for the next looks. Whether a server linked one. */
  async #bring(row: SharingTurnedOn): Promise<boolean> {
    const { logger, bringToServed } = this.#o;
    let brought: { servers: number; failed: boolean };
    try {
      brought = await bringToServed(row.userId);
    } catch (error) {
      logger.warn({ err: error, userId: row.userId }, 'picking up shared proofs failed');
      brought = { servers: 0, failed: true };
    }
    const attempts = (this.#failed.get(row.userId)?.attempts ?? 0) + 1;
    if (brought.failed && attempts < MAX_ATTEMPTS)
      this.#failed.set(row.userId, { since: row.since, attempts });
    else {
      this.#failed.delete(row.userId);
      this.#done.set(row.userId, row.since);
    }
    if (brought.servers > 0)
      logger.info({ userId: row.userId, servers: brought.servers }, 'shared proofs picked up');
    return brought.servers > 0;
  }

  /** The next look starts at `moment`, or at the oldest failure kept; what it will not read is forgotten. */
  #forgetBefore(moment: number): void {
    const since = Math.min(moment, ...[...this.#failed.values()].map((f) => f.since));
    this.#from = { since, userId: '' };
    for (const [userId, done] of this.#done) if (done < since) this.#done.delete(userId);
  }
}
