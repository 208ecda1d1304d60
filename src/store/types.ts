/**
 * Persistence for the gating module behind one small interface. Times are ms since epoch; JSON
 * columns hold plain JSON-safe data. SQLite (embedded default) and PostgreSQL implement it.
 */
import type { CredentialSet } from '../web3bio/types.ts';
import type { AccountProofStore } from './accountProofTypes.ts';
import type {
  AuditEvent,
  AuditEventInput,
  AuditPageQuery,
  AuditQuery,
  HeldRole,
  PendingLoss,
} from './auditTypes.ts';
import type { DashboardSignOutStore } from './dashboardSignOutTypes.ts';
import type { DashboardStore } from './dashboardTypes.ts';
import type { DueCheckStore } from './dueCheckTypes.ts';
import type { ExemptionStore } from './exemptionTypes.ts';
import type { FarcasterFlowStore } from './farcasterFlowTypes.ts';
import type { GuildAuthorityStore } from './guildAuthorityTypes.ts';
import type { GuildLeaseStore } from './guildLeaseTypes.ts';
import type { HandoffStore } from './handoffTypes.ts';
import type { Holding, HoldingClaim, HoldingRefusal, NonceRecord, ProofMethod } from './proofTypes.ts';
import type { RecheckCycleStore } from './recheckCycleTypes.ts';
import type { RoleConnectionStore } from './roleConnectionTypes.ts';
import type { RoleRuleStore } from './roleRuleTypes.ts';
import type { SignedProofStore } from './signedProofTypes.ts';
import type { VerifyPanelStore } from './verifyPanelTypes.ts';

export type * from './accountProofTypes.ts';
export type * from './auditTypes.ts';
export type * from './dashboardSignOutTypes.ts';
export type * from './dashboardTypes.ts';
export type * from './dueCheckTypes.ts';
export type * from './exemptionTypes.ts';
export type * from './farcasterFlowTypes.ts';
export type * from './guildAuthorityTypes.ts';
export type * from './guildLeaseTypes.ts';
export type * from './proofTypes.ts';
export type * from './roleConnectionTypes.ts';
export type * from './roleRuleTypes.ts';
export type * from './signedProofTypes.ts';
export type * from './verifyPanelTypes.ts';

/** A guild's gating configuration. A row exists once `/gating setup` has run. */
export interface GuildSettings {
  guildId: string;
  enabled: boolean;
  humanRoleId: string;
  spamRoleId: string | null;
  riskyRoleId: string | null;
  /** Passport-style score at or above which an `isHuman` score credential earns the human role. */
  minScore: number | null;
  /** A spam flag takes the human role away. */
  spamRemovesHuman: boolean;
  /** Days the Discord account must exist before the human role is granted; 0 or null: off. */
  minAccountAgeDays?: number | null;
  /** Days the member must have been in the server before the human role is granted; 0 or null: off. */
  minJoinAgeDays?: number | null;
  logChannelId: string | null;
  lastFullSyncAt: number | null;
  updatedAt: number;
}

/** What `/gating setup` writes; the store keeps `lastFullSyncAt` and stamps `updatedAt`. */
export type GuildSettingsInput = Omit<GuildSettings, 'lastFullSyncAt' | 'updatedAt'>;

/** A Discord member's proven identity in one guild. */
export interface LinkRecord {
  guildId: string;
  userId: string;
  /** The identity as proven, e.g. `vitalik.eth`. */
  identity: string;
  platform: string;
  /** The identity's address when known (lowercase for EVM). */
  address: string | null;
  proofMethod: ProofMethod;
  provenAt: number;
  lastCheckAt: number | null;
  /** Whether the last check's lookup worked; null before the first check. */
  lastCheckOk: boolean | null;
  /** Credentials from the last successful check; kept as is when a later check fails. */
  lastResult: CredentialSet | null;
  /**
   * When the member unlinked it (or it moved away) while it carried a spam or risky flag: it proves
   * nothing any more, but stays on the re-check list so the flag holds until its own credentials clear.
   */
  releasedAt: number | null;
}

/** A link without its last credentials: what a listing of many members needs (the export). */
export type LinkSummary = Omit<LinkRecord, 'lastResult'>;

/** What a verification writes; check fields start empty unless given. */
export type LinkInput = Omit<LinkRecord, 'lastCheckAt' | 'lastCheckOk' | 'lastResult' | 'releasedAt'> &
  Partial<Pick<LinkRecord, 'lastCheckAt' | 'lastCheckOk' | 'lastResult'>> &
  Pick<HoldingClaim, 'aliases'>;

/** Identifies one link. */
export interface LinkKey {
  guildId: string;
  userId: string;
  identity: string;
}

/** The outcome of one re-check of a link. */
export interface LinkCheck {
  at: number;
  ok: boolean;
  /** Stored only when `ok`; a failed check keeps the last known result. */
  result?: CredentialSet | null;
  /** With `ok`: the answer was "not found" (no credentials), which a re-check cycle tells apart (issue #37). */
  notFound?: boolean;
}

/** A Discord OAuth2 `state` in flight: what it was issued for (a signing challenge's nonce, say). */
export interface OAuthStateRecord {
  /** SHA-256 of the state, hex; the state itself is only in the member's browser and URL. */
  stateHash: string;
  purpose: 'verify' | 'linked-role' | 'dashboard' | 'farcaster';
  nonce: string | null;
  expiresAt: number;
}

/** How `createNonce` caps an account's open challenges. */
export interface CreateNonceOptions {
  /** At most this many open challenges per account (a positive integer), the new one included. */
  maxOpenPerUser?: number;
  /** What counts as open (expiring after this instant); default the store's clock. */
  now?: number;
}

export type RoleOp = 'add' | 'remove';

export interface RoleChangeInput {
  guildId: string;
  userId: string;
  roleId: string;
  op: RoleOp;
  /** Audit-log reason, also stored with the audit event. */
  reason: string;
}

export type RoleChangeStatus = 'pending' | 'in_progress' | 'done' | 'failed';

export interface RoleChange extends RoleChangeInput {
  id: number;
  status: RoleChangeStatus;
  /** How many times it was claimed. */
  attempts: number;
  /** While in progress: when the claim lapses and another worker may take it. */
  leaseUntil: number | null;
  /** While in progress: the claim's secret; only its holder may renew, defer or complete it. */
  claimToken: string | null;
  /** A deferred change is not claimed before this time. */
  notBefore: number | null;
  detail: string | null;
  createdAt: number;
  updatedAt: number;
}

/**
 * `created`: a new pending change; `replaced`: a pending change of the opposite op now carries this op;
 * `duplicate`: the same op was already pending or in progress, nothing new was queued.
 */
export type EnqueueOutcome = 'created' | 'replaced' | 'duplicate';

export interface GatingStore
  extends RoleConnectionStore,
    AccountProofStore,
    SignedProofStore,
    VerifyPanelStore,
    ExemptionStore,
    RoleRuleStore,
    DueCheckStore,
    HandoffStore,
    GuildAuthorityStore,
    DashboardStore,
    DashboardSignOutStore,
    FarcasterFlowStore,
    GuildLeaseStore,
    RecheckCycleStore {
  getGuildSettings(guildId: string): Promise<GuildSettings | undefined>;
  /** Create or replace a guild's settings; with `actor`, a `settings_changed` event is written in the same transaction. */
  saveGuildSettings(
    settings: GuildSettingsInput,
    actor?: { userId: string; reason: string },
  ): Promise<GuildSettings>;
  /** All guilds with settings, or only enabled ones. */
  listGuildSettings(opts?: { enabledOnly?: boolean }): Promise<GuildSettings[]>;
  markFullSync(guildId: string, at: number): Promise<void>;
  /**
   * Create or refresh a link and write a `linked` audit event in the same transaction, taking its
   * identity and address in the registry from whoever held them (their links are released). For a
   * moderator's or a test's write: a member's proof goes through `proveLink`, which may refuse.
   */
  saveLink(link: LinkInput, reason: string): Promise<LinkRecord>;
  /**
   * A member's proof: in one transaction, claim the identity and address in the guild's registry (a
   * signature takes them over, a record proof takes the identity but never another account's address,
   * and nothing taken after `challengeIssuedAt` is taken), then save the link. The links that lost a
   * subject to it are released (they prove nothing now) and returned. In the same transaction, the member
   * and each member who lost a link are due for a sync at `link.provenAt` (see DueCheckStore): the roles
   * the proof decides survive a failed sync, a crash and a restart; the caller clears the check once synced.
   */
  proveLink(
    link: LinkInput,
    reason: string,
    opts?: { challengeIssuedAt?: number },
  ): Promise<{ link: LinkRecord; displaced: LinkRecord[] } | { refusal: HoldingRefusal }>;
  /** Who holds a subject in a scope (a guild id, or `LINKED_ROLES_SCOPE`). */
  getHolding(scope: string, kind: Holding['kind'], subject: string): Promise<Holding | undefined>;
  /** Delete a link and write an `unlinked` audit event in the same transaction; false when there was none. */
  removeLink(key: LinkKey, reason: string): Promise<boolean>;
  /** Mark an active link released (see `LinkRecord.releasedAt`) with an `unlinked` audit event; false when none. */
  releaseLink(key: LinkKey, reason: string): Promise<boolean>;
  getLink(key: LinkKey): Promise<LinkRecord | undefined>;
  /** A member's links in one guild, oldest proof first. */
  getUserLinks(guildId: string, userId: string): Promise<LinkRecord[]>;
  /** Links in a guild that name this identity (any member). */
  getIdentityLinks(guildId: string, identity: string): Promise<LinkRecord[]>;
  /** Links in a guild whose identity resolves to this address (lowercase EVM, base58 Solana). */
  getAddressLinks(guildId: string, address: string): Promise<LinkRecord[]>;
  /** A member's links in every guild. */
  getLinksOfUser(userId: string): Promise<LinkRecord[]>;
  /** A guild's links ordered by user id then identity; page with `afterUserId` (whole members per page). */
  listLinks(guildId: string, opts?: { afterUserId?: string; limit?: number }): Promise<LinkRecord[]>;
  /** As `listLinks`, without each link's stored credentials (neither read nor parsed). */
  listLinkSummaries(guildId: string, opts?: { afterUserId?: string; limit?: number }): Promise<LinkSummary[]>;
  /** Distinct members with at least one active (not released) link in the guild. */
  countLinkedUsers(guildId: string): Promise<number>;
  /** Record a re-check; a failed check keeps the last result; false when the link is gone. */
  recordLinkCheck(key: LinkKey, check: LinkCheck): Promise<boolean>;

  /** A member's pending losses (or the guild's, without `userId`). */
  listPendingLosses(guildId: string, userId?: string): Promise<PendingLoss[]>;
  /** Note a loss seen now; an existing one keeps its first sighting. Returns the stored loss. */
  notePendingLoss(loss: Omit<PendingLoss, 'heldAt'>): Promise<PendingLoss>;
  /** Mark losses as held by the circuit breaker. */
  holdPendingLosses(guildId: string, keys: { userId: string; subject: string }[], at: number): Promise<void>;
  /** Forget a loss (applied, or no longer seen); false when there was none. */
  clearPendingLoss(guildId: string, userId: string, subject: string): Promise<boolean>;

  addAuditEvent(event: AuditEventInput): Promise<AuditEvent>;
  /** Newest first. */
  listAuditEvents(query: AuditQuery): Promise<AuditEvent[]>;
  /** Audit events of a period, oldest first, page by page (keyset on createdAt, id). */
  pageAuditEvents(query: AuditPageQuery): Promise<AuditEvent[]>;
  /**
   * Roles whose latest `role_added`/`role_removed` event for the member is `role_added`, ordered by
   * (userId, roleId); page with `after`. Only as far back as the audit trail is kept.
   */
  listHeldRoles(
    guildId: string,
    opts?: { after?: { userId: string; roleId: string }; limit?: number },
  ): Promise<HeldRole[]>;
  /** Delete audit events created before `before`; returns how many. */
  deleteAuditEvents(before: number): Promise<number>;

  /**
   * Store a new challenge. With `maxOpenPerUser`, in the same transaction the account's other open
   * challenges (unused, expiring after `now`; default the store's clock) beyond the newest
   * `maxOpenPerUser - 1` are deleted, oldest first (by expiry, then nonce): the new one always stays.
   * Used and expired challenges are left to `deleteExpiredNonces`. Returns how many were deleted.
   */
  createNonce(
    record: Omit<NonceRecord, 'usedAt' | 'failedAttempts'>,
    options?: CreateNonceOptions,
  ): Promise<number>;
  /** Atomically mark used and return it; undefined when missing, already used or expired (at `now`). */
  consumeNonce(nonce: string, now: number): Promise<NonceRecord | undefined>;
  getNonce(nonce: string): Promise<NonceRecord | undefined>;
  /**
   * Count a refused signature on an open challenge; at `limit` the challenge is burned (marked used).
   * Returns the attempts so far, or undefined when the challenge is not open.
   */
  countFailedAttempt(nonce: string, limit: number, now: number): Promise<number | undefined>;
  /** Delete nonces whose expiry is at or before `now`; returns how many. */
  deleteExpiredNonces(now: number): Promise<number>;

  /** Remember an OAuth2 `state` (by its hash) until it expires; expired ones are dropped on the way. */
  createOAuthState(record: OAuthStateRecord, now: number): Promise<void>;
  /** Atomically delete and return a state: it works once, and not at or after its expiry. */
  consumeOAuthState(stateHash: string, now: number): Promise<OAuthStateRecord | undefined>;

  /** Queue a role change; idempotent per (guild, user, role) while pending (a newer opposite op replaces it). */
  enqueueRoleChange(change: RoleChangeInput): Promise<{ change: RoleChange; outcome: EnqueueOutcome }>;
  /**
   * Claim up to `limit` changes (oldest first), marking them in progress under a lease. Changes whose
   * lease lapsed (a crashed worker) are claimable again. A change waits while an earlier one for the
   * same (guild, user, role) is in progress.
   */
  claimRoleChanges(guildId: string | undefined, limit: number): Promise<RoleChange[]>;
  /**
   * Finish a claimed change and write its audit event in the same transaction; false when it was not in
   * progress under `claimToken` (another worker took it over after the lease lapsed).
   */
  completeRoleChange(
    id: number,
    claimToken: string,
    outcome: 'done' | 'failed',
    detail?: string,
  ): Promise<boolean>;
  /** Extend the lease of a claimed change; false when the claim is no longer held. */
  renewRoleChange(id: number, claimToken: string): Promise<boolean>;
  /**
   * Give a claimed change back, not to be claimed before `notBefore`, without counting the claim as an
   * attempt; a newer pending change for the same member and role supersedes it. False when not held.
   */
  deferRoleChange(id: number, claimToken: string, notBefore: number): Promise<boolean>;
  /** Make a guild's deferred changes claimable now (after the cause of a deferral was fixed); returns how many. */
  resumeDeferredRoleChanges(guildId: string): Promise<number>;
  /** A guild's (or one member's) changes not finished yet, oldest first. */
  openRoleChanges(guildId: string, userId?: string): Promise<RoleChange[]>;
  /** Changes not finished yet (pending or in progress). */
  pendingRoleChanges(guildId?: string): Promise<number>;
  /** When the oldest unfinished change was queued; null with none. */
  oldestOpenRoleChangeAt(): Promise<number | null>;
  /** Delete finished changes last updated before `before`; returns how many. */
  deleteFinishedRoleChanges(before: number): Promise<number>;

  close(): Promise<void>;
}

/** Options both implementations take. */
export interface StoreOptions {
  /** Clock (ms since epoch) for stamps and leases; injectable for tests. */
  now?: () => number;
  /** How long a claim on a role change lasts. Default 60 s. */
  leaseMs?: number;
}
