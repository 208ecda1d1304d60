/**
 * The audit trail's records and queries, and the losses gating notes before applying them: in a file of
 * their own so the store's parts (dashboardTypes.ts) can use them without importing types.ts.
 */
import type { JsonValue } from './proofTypes.ts';

export type AuditKind =
  | 'role_added'
  | 'role_removed'
  | 'role_failed'
  | 'linked'
  | 'unlinked'
  | 'settings_changed'
  /** A whole-server re-check pass, with the role holders it counted (`details.holders`). */
  | 'recheck_pass'
  /** The breaker held a role's mass removal (`details.count` removals). */
  | 'removals_held'
  /** A moderator dropped the held removals from the dashboard (the roles stay). */
  | 'removals_kept'
  | (string & {});

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

/** A page of a guild's audit events in a period, oldest first by (createdAt, id). */
export interface AuditPageQuery {
  guildId: string;
  /** Events created at or after this time. */
  since: number;
  /** The last event of the previous page: the page starts after it. */
  after?: { createdAt: number; id: number };
  /** Default 500, at most 1000. */
  limit?: number;
}

/** A role the audit trail says gating gave a member and has not taken back since: its latest role event. */
export interface HeldRole {
  userId: string;
  roleId: string;
  reason: string;
  at: number;
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
