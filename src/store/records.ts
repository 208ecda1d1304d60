/**
 * The records the gating store keeps (re-exported by `types.ts`). Times are ms since epoch; JSON
 * columns hold plain JSON-safe data.
 */
import type { CredentialSet } from '../web3bio/types.ts';

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
  logChannelId: string | null;
  lastFullSyncAt: number | null;
  updatedAt: number;
}

/** What `/gating setup` writes; the store keeps `lastFullSyncAt` and stamps `updatedAt`. */
export type GuildSettingsInput = Omit<GuildSettings, 'lastFullSyncAt' | 'updatedAt'>;

export type ProofMethod = 'record' | 'signature';

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

/** What a verification writes; check fields start empty unless given. */
export type LinkInput = Omit<LinkRecord, 'lastCheckAt' | 'lastCheckOk' | 'lastResult' | 'releasedAt'> &
  Partial<Pick<LinkRecord, 'lastCheckAt' | 'lastCheckOk' | 'lastResult'>>;

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
}

export type AuditKind =
  | 'role_added'
  | 'role_removed'
  | 'role_failed'
  | 'linked'
  | 'unlinked'
  | 'settings_changed'
  | (string & {});

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

export interface AuditEvent {
  id: number;
  guildId: string;
  /** The member concerned (or the admin, for settings changes). */
  userId: string | null;
  kind: AuditKind;
  roleId: string | null;
  reason: string;
  details: JsonValue | null;
  createdAt: number;
}

export type AuditEventInput = Omit<AuditEvent, 'id' | 'createdAt' | 'userId' | 'roleId' | 'details'> &
  Partial<Pick<AuditEvent, 'userId' | 'roleId' | 'details' | 'createdAt'>>;

export interface AuditQuery {
  guildId: string;
  userId?: string;
  /** Default 50, at most 500. */
  limit?: number;
  /** Only events older than this event id (paging). */
  beforeId?: number;
}

/**
 * A loss seen but not applied yet: a gated role the rules no longer want (`role:<id>`), or a record link
 * whose record no longer names the member (`link:<identity>`). Applied once confirmed later.
 */
export interface PendingLoss {
  guildId: string;
  userId: string;
  subject: string;
  firstSeenAt: number;
  reason: string;
  /** Set when a pass held it back as part of a mass removal (the circuit breaker). */
  heldAt: number | null;
}

/** A Discord OAuth2 `state` in flight: what it was issued for (a signing challenge's nonce, say). */
export interface OAuthStateRecord {
  /** SHA-256 of the state, hex; the state itself is only in the member's browser and URL. */
  stateHash: string;
  purpose: 'verify' | 'linked-role';
  nonce: string | null;
  expiresAt: number;
}

/**
 * The ownership registry: which Discord account holds an identity or an address, in one scope (a guild,
 * or `LINKED_ROLES_SCOPE` for Linked Roles, app-wide), by which proof, since when. The store keeps one
 * holder per subject (its primary key), so two proofs racing for one wallet cannot both win.
 */
export interface Holding {
  scope: string;
  kind: 'identity' | 'address';
  /** The identity as proven, or the address (lowercase EVM, base58 Solana). */
  subject: string;
  userId: string;
  /** The proven identity that brought the subject (for an address, the name or address proven). */
  identity: string;
  proofMethod: ProofMethod;
  since: number;
}

/** What a proof claims: its identity, and the address it resolves to (or the signer). */
export interface HoldingClaim {
  scope: string;
  userId: string;
  identity: string;
  address: string | null;
  proofMethod: ProofMethod;
  at: number;
  /**
   * For a signature: when its challenge was made. A holding another account took after that is not taken
   * over (two completions racing for one wallet: the first wins, the later one is refused).
   */
  challengeIssuedAt?: number;
}

/**
 * Why a claim was refused: the address is held by another account and a record proof cannot take a
 * wallet; or another account proved the subject after this proof's challenge was made.
 */
export type HoldingRefusal = { code: 'address_taken' | 'raced'; holding: Holding };

/** A one-time SIWE nonce bound to a member, a guild, an identity and the expected signer. */
export interface NonceRecord {
  nonce: string;
  guildId: string;
  userId: string;
  /** The member's Discord username and the server's name when the challenge was made, shown when signing. */
  userName: string | null;
  guildName: string | null;
  identity: string;
  /** Expected signer, lowercase. */
  address: string;
  expiresAt: number;
  usedAt: number | null;
  /** Refused signatures so far; the challenge is burned at the limit. */
  failedAttempts: number;
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
