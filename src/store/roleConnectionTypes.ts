/** The Linked Roles part of the store: one connection per Discord account, app-wide. */
import type { HoldingClaim, HoldingRefusal, ProofMethod } from './proofTypes.ts';

/**
 * A member's Linked Roles connection (one per Discord account, for the whole app): the identity they
 * proved, their Discord tokens sealed with TOKEN_ENCRYPTION_KEY, and what was last written to Discord.
 */
export interface RoleConnectionRecord {
  userId: string;
  identity: string;
  platform: string;
  address: string | null;
  /** How the identity was proven: a signature proves its address too, a record proof only the name. */
  proofMethod: ProofMethod;
  provenAt: number;
  /** `sealToken` output, bound to the user id; null once cleared. */
  sealedAccessToken: string | null;
  sealedRefreshToken: string | null;
  /** When the access token expires (ms). */
  accessExpiresAt: number;
  /** The metadata last written to Discord; null before the first write. */
  metadata: Record<string, string> | null;
  writtenAt: number | null;
  /** Set when Discord refused a refresh: the member must open the verification URL again. */
  staleSince: number | null;
  /** When a re-check first saw the metadata get worse (a loss waits for confirmation, as role removals do). */
  lossSeenAt: number | null;
  /**
   * When the identity moved to another account (or its record stopped naming this one): the connection
   * proves nothing now, and says why until the member proves an identity again.
   */
  releasedAt: number | null;
  releasedReason: string | null;
  /**
   * When a re-check first read the record (a real answer) without the member's username in it; the
   * connection is released once a later re-check, at least the confirmation time later, agrees.
   */
  recordLossSeenAt: number | null;
  updatedAt: number;
}

/** The flags a held identity may carry, as credential categories. */
export type HeldFlag = 'isSpam' | 'isRisky';

/** An identity a Linked Roles account proved before and that may carry a flag: its flags still count. */
export interface RoleConnectionHold {
  userId: string;
  identity: string;
  platform: string;
  address: string | null;
  /** The flags it showed when it was held (both when unknown): they count while it cannot be read. */
  flags: HeldFlag[];
  since: number;
  /** When a re-check first saw its own credentials (a real answer) without a flag; dropped once confirmed. */
  clearSeenAt: number | null;
}

/** What a Linked Roles proof writes. */
export type RoleConnectionInput = Omit<
  RoleConnectionRecord,
  'updatedAt' | 'lossSeenAt' | 'releasedAt' | 'releasedReason' | 'recordLossSeenAt'
> &
  Pick<HoldingClaim, 'aliases'>;

/** The Linked Roles part of the store. */
export interface RoleConnectionStore {
  /**
   * Create or replace a member's connection (a fresh sign-in clears `staleSince` and `releasedAt`),
   * taking its identity and address in the app-wide registry from whoever held them.
   *
   * Whenever a live connection's identity stops backing it (replaced by another identity of the same
   * account, displaced, released, deleted) while its metadata may carry a flag (never written, or
   * `not_spam` / `not_risky` "0"), the same transaction keeps it as a hold with those flags.
   */
  saveRoleConnection(record: RoleConnectionInput): Promise<RoleConnectionRecord>;
  /**
   * A member's Linked Roles proof: in one transaction, claim the identity and address app-wide (the rules
   * of `proveLink`), then save the connection. Connections that lost their identity or address to it are
   * released with `releasedReason` and returned (Discord must be told: their metadata changes).
   */
  proveRoleConnection(
    record: RoleConnectionInput,
    opts: { reason: string; challengeIssuedAt?: number },
  ): Promise<
    { record: RoleConnectionRecord; displaced: RoleConnectionRecord[] } | { refusal: HoldingRefusal }
  >;
  /** Release a connection (its record no longer names the member): it proves nothing, and says why. */
  releaseRoleConnection(userId: string, reason: string, at: number): Promise<boolean>;
  /** Keep an identity's flags on the account (it was proven before and may carry a flag); an existing hold stays. */
  addRoleConnectionHold(hold: Omit<RoleConnectionHold, 'clearSeenAt'>): Promise<void>;
  listRoleConnectionHolds(userId: string): Promise<RoleConnectionHold[]>;
  /** Note (or, with null, forget) a sighting of the held identity without a flag; false when there is no hold. */
  noteRoleConnectionHoldClear(userId: string, identity: string, seenAt: number | null): Promise<boolean>;
  /** Forget a hold once the identity's own credentials show no flag; false when there was none. */
  removeRoleConnectionHold(userId: string, identity: string): Promise<boolean>;
  /** Note (or, with null, forget) a re-check's read of the record without the member; false when gone. */
  noteRoleConnectionRecordLoss(userId: string, seenAt: number | null): Promise<boolean>;
  getRoleConnection(userId: string): Promise<RoleConnectionRecord | undefined>;
  /** Connections ordered by user id, paged with `afterUserId`; stale ones are left out unless asked for. */
  listRoleConnections(opts?: {
    afterUserId?: string;
    limit?: number;
    includeStale?: boolean;
  }): Promise<RoleConnectionRecord[]>;
  /** Keep rotated tokens (after a refresh); false when the connection is gone. */
  updateRoleConnectionTokens(
    userId: string,
    tokens: { sealedAccessToken: string; sealedRefreshToken: string | null; accessExpiresAt: number },
  ): Promise<boolean>;
  /** Note what was written to Discord; false when the connection is gone. */
  recordRoleConnectionWrite(userId: string, metadata: Record<string, string>, at: number): Promise<boolean>;
  /** Note (or, with null, forget) a loss waiting for confirmation; false when the connection is gone. */
  noteRoleConnectionLoss(userId: string, seenAt: number | null): Promise<boolean>;
  /** Mark stale (Discord refused the refresh) and drop the tokens that no longer work. */
  markRoleConnectionStale(userId: string, at: number): Promise<boolean>;
  /**
   * Forget the connection. With `notWrittenAfter`, only when nothing was written to Discord after that
   * time (a deauthorization that reaches the bot after the member reconnected leaves the new connection).
   */
  deleteRoleConnection(userId: string, opts?: { notWrittenAfter?: number }): Promise<boolean>;
}
