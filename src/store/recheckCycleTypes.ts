/**
 * Re-check cycles (`recheck_cycles`, migration 24): one `GATING_RECHECK_HOURS` interval of periodic
 * passes, shared by every process on the store, so a cycle reads each identity's credentials once
 * however many servers it is proven in (issue #37), and what the cycle cost, counted by all of them.
 */
import type { CredentialSet } from '../web3bio/types.ts';

/** One cycle: when it began, and what its passes cost so far (every process's passes added up). */
export interface RecheckCycle {
  startedAt: number;
  /** Credential reads that went upstream (not answered by the cache or by another server's check). */
  upstreamRequests: number;
  /** Credential reads answered by a check of the same identity earlier in the cycle. */
  reusedChecks: number;
  /** Guild passes finished in the cycle, and their summed length (ms). */
  passes: number;
  passMs: number;
}

/** What a pass adds to its cycle's counts. */
export type RecheckCycleCounts = Omit<RecheckCycle, 'startedAt'>;

/** An identity's newest credentials read upstream since a time, from any server's link. */
export interface IdentityCheck {
  at: number;
  result: CredentialSet;
  /** The answer was Web3.bio's "not found" (recorded as no credentials). */
  notFound: boolean;
}

export interface RecheckCycleStore {
  /**
   * The cycle under way at `now`, begun when the last one is `intervalMs` old (cycles follow each other
   * by whole intervals from the first, so every process names the same one), and the one before it.
   */
  recheckCycle(
    now: number,
    intervalMs: number,
  ): Promise<{ current: RecheckCycle; previous: RecheckCycle | null }>;
  /** Adds a pass's counts to the cycle that began at `startedAt`. */
  countRecheckCycle(startedAt: number, counts: RecheckCycleCounts): Promise<void>;
  /** Each identity's newest successful credential check at or after `since`, over every server's links. */
  identityChecksSince(identities: readonly string[], since: number): Promise<Map<string, IdentityCheck>>;
}
