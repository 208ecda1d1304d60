/**
 * Pure rules for taking something away: a gated role the rules no longer want, a record link whose
 * record no longer names the member, or the flag hold of an unlinked identity. An upstream incident can
 * look exactly like a loss, so in automated passes a loss is applied only when it was seen in two
 * answers at least `confirmMs` apart, the later one a real answer (not a "not found" for an identity
 * that resolved before); and a pass that would take a role from many members at once holds them all.
 */
import type { PendingLoss } from '../../store/types.ts';

/**
 * - `immediate`: the member's own action (unverify, a new proof): applied now.
 * - `answered`: a moderator's `/gating recheck member:` or a username change: applied now when the fresh
 *   answer shows the loss, else noted like an automated one.
 * - `confirmed`: automated passes (periodic, join, rule change, whole-guild recheck).
 */
export type RemovalMode = 'immediate' | 'answered' | 'confirmed';

/** A pass holds its losses of a role when they exceed this share of the role's holders… */
export const BREAKER_SHARE = 0.1;
/** …and this many members. */
export const BREAKER_MIN_MEMBERS = 5;

export const roleSubject = (roleId: string): string => `role:${roleId}`;
export const linkSubject = (identity: string): string => `link:${identity}`;
export const holdSubject = (identity: string): string => `hold:${identity}`;

export interface LossSighting {
  /** The loss as noted before (first sighting), if it was. */
  noted: PendingLoss | undefined;
  /** This sighting is a real answer showing the loss (not a "not found" for a known identity). */
  confirmable: boolean;
  mode: RemovalMode;
  now: number;
  confirmMs: number;
}

export interface LossDecision {
  apply: boolean;
  /** When an automated pass may apply it (first sighting + confirmMs). */
  confirmAt: number;
}

/** Whether a loss seen now is applied now, or waits for a later confirming answer. */
export function decideLoss(s: LossSighting): LossDecision {
  const firstSeenAt = s.noted?.firstSeenAt ?? s.now;
  const confirmAt = firstSeenAt + s.confirmMs;
  if (s.mode === 'immediate') return { apply: true, confirmAt };
  if (!s.confirmable) return { apply: false, confirmAt };
  if (s.mode === 'answered') return { apply: true, confirmAt };
  return { apply: s.noted !== undefined && s.now >= confirmAt, confirmAt };
}

/**
 * Whether one pass's new losses of a role (those not held by an earlier pass) are a mass removal: more
 * than BREAKER_SHARE of the role's holders and at least BREAKER_MIN_MEMBERS members.
 */
export function breakerTrips(holders: number, newLosses: number): boolean {
  return newLosses >= BREAKER_MIN_MEMBERS && newLosses > holders * BREAKER_SHARE;
}
