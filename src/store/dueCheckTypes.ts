/**
 * Due checks (`gating_due_checks`, migration 12): when a member is synced again by the due-check pass. A
 * member too new for the human role is due when old enough; a member whose roles a proof decided (the
 * prover, and whoever lost a link to the proof) is due at once, until the sync after the proof succeeded.
 */

export interface DueCheck {
  guildId: string;
  userId: string;
  /** When the member is synced again (ms since epoch). */
  dueAt: number;
  /**
   * The member asked for the change (`/unverify` in a server another process serves): removals apply at
   * once, as for the member's own action, not after confirmation. Kept until a sync of that time runs.
   */
  memberAsked?: boolean;
}

export interface DueCheckStore {
  /** Remember when to sync the member again (one time per member: a later save replaces it). */
  saveDueCheck(check: DueCheck): Promise<void>;
  /** Checks due at or before `at`, earliest first, at most `limit`. */
  listDueChecks(at: number, limit: number): Promise<DueCheck[]>;
  /** Forget a check, only if it is still the one listed (a sync since may have saved a later time). */
  deleteDueCheck(check: DueCheck): Promise<void>;
}
