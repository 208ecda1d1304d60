/**
 * Hourly upkeep of the gating store: expired nonces and Farcaster sign-ins, finished role changes and old
 * audit events go.
 */
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';

const DAY_MS = 86_400_000;
const MAINTENANCE_MS = 60 * 60_000;
/** Finished role changes are kept this long (their audit events stay for the audit retention). */
const FINISHED_CHANGE_RETENTION_MS = 7 * DAY_MS;
export const DEFAULT_AUDIT_RETENTION_MS = 180 * DAY_MS;

export interface StoreUpkeepOptions {
  store: GatingStore;
  logger: Logger;
  tasks: BackgroundTasks;
  now: () => number;
  auditRetentionMs: number;
}

/** Prunes the gating store at start and every hour after. */
export interface PruneCounts {
  nonces: number;
  farcasterFlows: number;
  changes: number;
  signedProofs: number;
  auditEvents: number;
}

export class StoreUpkeep {
  readonly #o: StoreUpkeepOptions;
  #timer: NodeJS.Timeout | null = null;

  constructor(options: StoreUpkeepOptions) {
    this.#o = options;
  }

  start(): void {
    const { tasks } = this.#o;
    tasks.run('', () => this.prune());
    this.#timer = setInterval(() => tasks.run('', () => this.prune()), MAINTENANCE_MS);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** Delete expired nonces and Farcaster sign-ins, finished role changes and signed proofs, and audit events past their retention. */
  async prune(): Promise<PruneCounts> {
    const { store, logger, now: clock, auditRetentionMs } = this.#o;
    const now = clock();
    const pruned = {
      nonces: await store.deleteExpiredNonces(now),
      farcasterFlows: await store.deleteExpiredFarcasterFlows(now),
      changes: await store.deleteFinishedRoleChanges(now - FINISHED_CHANGE_RETENTION_MS),
      signedProofs: await store.deleteFinishedSignedProofs(now - FINISHED_CHANGE_RETENTION_MS),
      auditEvents: await store.deleteAuditEvents(now - auditRetentionMs),
    };
    logger.debug(pruned, 'gating store pruned');
    return pruned;
  }
}
