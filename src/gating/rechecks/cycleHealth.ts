/**
 * What a re-check cycle cost and whether the re-check keeps up (issue #37), for `/metrics` and the
 * dashboard's health page: the cycle's upstream credential requests, the passes' summed length, and the
 * time those requests need at the configured Web3.bio quota, against one `GATING_RECHECK_HOURS` interval.
 */
import type { RecheckCycle } from '../../store/recheckCycleTypes.ts';

/** Web3.bio's quota as the client applies it: `requests` per `intervalMs`; null when unlimited (a key). */
export type UpstreamQuota = { requests: number; intervalMs: number } | null;

export interface CycleHealth {
  /** The last finished cycle, or the one under way when none has finished yet (`finished` false). */
  finished: boolean;
  startedAt: number;
  intervalSeconds: number;
  upstreamRequests: number;
  reusedChecks: number;
  passes: number;
  /** The cycle's passes, summed (one process runs its servers' passes one after another). */
  passSeconds: number;
  /** What the cycle's upstream requests take at the quota; 0 without one. */
  quotaSeconds: number;
  /** Both fit in the interval: the passes' length and the requests' time at the quota. */
  keepingUp: boolean;
}

/** The health of the last finished cycle (else of the current one so far). */
export function cycleHealth(
  cycles: { current: RecheckCycle; previous: RecheckCycle | null },
  intervalMs: number,
  quota: UpstreamQuota,
): CycleHealth {
  const cycle = cycles.previous ?? cycles.current;
  const intervalSeconds = intervalMs / 1_000;
  const passSeconds = cycle.passMs / 1_000;
  const quotaSeconds = quota ? (cycle.upstreamRequests / quota.requests) * (quota.intervalMs / 1_000) : 0;
  return {
    finished: cycles.previous !== null,
    startedAt: cycle.startedAt,
    intervalSeconds,
    upstreamRequests: cycle.upstreamRequests,
    reusedChecks: cycle.reusedChecks,
    passes: cycle.passes,
    passSeconds,
    quotaSeconds,
    keepingUp: Math.max(passSeconds, quotaSeconds) <= intervalSeconds,
  };
}
