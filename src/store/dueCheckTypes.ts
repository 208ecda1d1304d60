/** Due checks (`gating_due_checks`, migration 12): when a member too new for the human role is synced again. */

export interface DueCheck {
  guildId: string;
  userId: string;
  /** When the member becomes old enough (ms since epoch). */
  dueAt: number;
}

export interface DueCheckStore {
  /** Remember when to sync the member again (one time per member: a later save replaces it). */
  saveDueCheck(check: DueCheck): Promise<void>;
  /** Checks due at or before `at`, earliest first, at most `limit`. */
  listDueChecks(at: number, limit: number): Promise<DueCheck[]>;
  /** Forget a check, only if it is still the one listed (a sync since may have saved a later time). */
  deleteDueCheck(check: DueCheck): Promise<void>;
}
