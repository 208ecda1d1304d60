/**
 * Members synced again at a time saved in the store (so it survives crashes and restarts): a member too
 * new for the human role gets it by themselves once old enough (each `tooNew` decision saves when), and
 * the roles a proof decides follow even when the sync right after it failed (the proof saved "now" with
 * its link). This pass syncs every member whose time has come, then forgets their due times.
 */
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';
import { PeriodicPass } from './periodicPass.ts';

const DEFAULT_DUE_CHECK_MS = 60_000;
/** Members synced in one pass; the rest wait for the next. */
const DUE_CHECK_BATCH = 200;

export interface DueChecksOptions {
  store: Pick<GatingStore, 'listDueChecks' | 'deleteDueCheck'>;
  logger: Logger;
  tasks: BackgroundTasks;
  now: () => number;
  /** Whether this process serves the guild (with shards, each syncs its own). */
  servesGuild: (guildId: string) => boolean;
  /** `memberAsked`: the member's own removal, applied at once (see `DueCheck.memberAsked`). */
  sync: (guildId: string, userId: string, memberAsked: boolean) => Promise<unknown>;
  /** How often a pass runs. Default 60 s. */
  intervalMs?: number;
}

/** Every `intervalMs`, syncs the members whose due time has passed, then forgets their due times. */
export class DueChecks extends PeriodicPass {
  readonly #o: DueChecksOptions;

  constructor(options: DueChecksOptions) {
    super(options.tasks, options.intervalMs ?? DEFAULT_DUE_CHECK_MS);
    this.#o = options;
  }

  protected async pass(): Promise<number> {
    const { store, logger, now, servesGuild, sync, tasks } = this.#o;
    const due = await store.listDueChecks(now(), DUE_CHECK_BATCH);
    let synced = 0;
    for (const check of due) {
      if (tasks.stopping) break;
      if (!servesGuild(check.guildId)) continue;
      try {
        await sync(check.guildId, check.userId, check.memberAsked === true);
        synced += 1;
      } catch (error) {
        // Kept: the next pass tries again.
        logger.warn({ err: error, guildId: check.guildId, userId: check.userId }, 'due check failed');
        continue;
      }
      // A sync that found them still too new saved a later time, which this leaves in place.
      await store.deleteDueCheck(check);
    }
    return synced;
  }
}
