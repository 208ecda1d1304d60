/**
 * Guild re-check leases (`guild_leases`, migration 4): the right to run a guild's whole pass, held by one
 * part of one process (`<PROCESS_INSTANCE>/<part>`) for the store's lease (GATING_LEASE_SECONDS), renewed
 * at a third of it while the pass runs and released when it ends. A row whose lease ran out without being
 * released is a pass its process never finished (killed mid-way): the next look resumes it.
 */
export interface GuildLeaseStore {
  /** How long a guild lease lasts unless renewed: the store's lease (ms). */
  readonly guildLeaseMs: number;
  /**
   * Take (or renew) the right to re-check a guild until `until`, for `holder` (a process); false while
   * another holder's lease runs. One guild is re-checked by one process at a time.
   */
  acquireGuildLease(guildId: string, holder: string, until: number): Promise<boolean>;
  /** Give the lease back early (a finished pass); only its holder can. */
  releaseGuildLease(guildId: string, holder: string): Promise<void>;
  /**
   * End now the lease on the guild held by any part of `processId` (a process known dead: a worker took
   * its hand-off over), so its pass can be taken over at once; the row stays, lapsed. False when that
   * process held none.
   */
  expireGuildLease(guildId: string, processId: string): Promise<boolean>;
  /** Leases that ran out unreleased (passes cut short), the longest lapsed first. */
  lapsedGuildLeases(limit: number): Promise<{ guildId: string; holder: string }[]>;
}
