/**
 * What the gating module answers: the results of verification, reports, previews and status, as data
 * and codes for the commands and render that turn them into sentences.
 */

import type { GuildSettings, LinkRecord, PendingLoss, ProofMethod, RoleChange } from '../store/types.ts';
import type { CycleHealth } from './rechecks/cycleHealth.ts';
import type { RoleProblem } from './roles/hierarchy.ts';
import type { ExemptBy } from './rules/exemptions.ts';
import type { IdentityEvidence, RoleChangeWanted, RoleDecision, RoleDiff } from './rules/rules.ts';

/** Why `/verify` (or the signing page) did not link an identity. */
export type VerifyRefusal =
  | { code: 'invalid_identity'; reason: string }
  | { code: 'not_enabled' }
  | { code: 'too_many_links'; count: number; max: number }
  | { code: 'lookup_failed'; identity: string }
  | { code: 'not_found'; identity: string }
  | { code: 'no_address'; identity: string; username: string }
  /** The address already backs another member through a wallet signature; a record proof cannot take it. */
  | { code: 'address_taken'; address: string }
  /** Another account proved the wallet (or identity) after this proof's signing link was made. */
  | { code: 'raced'; subject: string }
  /** The Farcaster account (its FID) backs another member through Sign in with Farcaster: a record cannot take it. */
  | { code: 'fid_taken'; subject: string };

export type VerifyResult =
  | {
      kind: 'linked';
      link: LinkRecord;
      diff: RoleDiff;
      /** The identity or its address was linked to another member before: that link moved here. */
      moved: boolean;
      /** Proven before by the account's signature (another server, Linked Roles): brought here, no signing. */
      brought?: true;
      /** Roles whose changes wait on a permission problem the admins were told about. */
      blockedRoleIds: string[];
      /** Too new for a role: when it comes. */
      notBefore?: NotBefore;
      /**
       * The sync after the proof failed (a database or Discord fault): the roles it decides are not known
       * yet, and follow from the due check the proof saved (the due-check pass).
       */
      rolesLater?: true;
    }
  | {
      kind: 'challenge';
      url: string;
      expiresAt: number;
      address: string;
      /** A Farcaster identity, offered a wallet signature because Sign in with Farcaster is not configured. */
      farcasterUnconfigured?: true;
    }
  /** A Farcaster identity its record does not prove: the Sign in with Farcaster page for its FID. */
  | { kind: 'farcaster'; url: string; expiresAt: number; fid: number }
  | { kind: 'refused'; refusal: VerifyRefusal };

/** What one member's re-check did: changes queued now, and removals waiting for a confirming answer. */
export interface MemberSync {
  applied: RoleDiff;
  waiting: RoleChangeWanted[];
  /** The member is too new for this role until `at` (ms): it comes by itself then. */
  notBefore?: NotBefore;
}

export interface NotBefore {
  roleId: string;
  at: number;
}

/** What the signing page's completed signature came to. */
/** `queued`: handed to the shard that owns the guild, which had not answered yet (see signedProofs.ts). */
export type SignatureLinkResult = { ok: true; queued?: true } | { ok: false; refusal: VerifyRefusal };

/** A removal seen but not applied yet, and when an automated pass may apply it. */
export interface PendingRemoval extends PendingLoss {
  confirmAt: number;
}

export interface MemberReport {
  userId: string;
  links: LinkRecord[];
  /** Unlinked identities kept on the re-check list because they carried a flag. */
  released: LinkRecord[];
  evidence: IdentityEvidence[];
  decisions: RoleDecision[];
  currentRoleIds: string[];
  diff: RoleDiff;
  /** Removals the rules want that an exemption holds back. */
  kept?: RoleChangeWanted[];
  /** The exemption covering the member, or null. */
  exemptBy?: ExemptBy | null;
  pendingRemovals: PendingRemoval[];
  blockedRoleIds: string[];
}

/**
 * Switching gating off, or releasing held removals, refused: the gated roles the invoker could not grant
 * or take by hand (`above_invoker`, each named). Nothing changed.
 */
export type GatedRolesRefusal = { kind: 'refused'; problems: RoleProblem[] };
/**
 * `/gating setup`: saved (`problems` are warnings), refused over the new roles (`settings` null, and why),
 * or refused over the gated roles it would replace or drop.
 */
export type SetupResult = { settings: GuildSettings | null; problems: RoleProblem[] } | GatedRolesRefusal;
/** `/gating disable`: off now, already off, never set up, or refused. */
export type DisableResult = { kind: 'disabled' | 'already_off' | 'not_set_up' } | GatedRolesRefusal;
/** `/gating recheck confirm-removals:true`: the re-check running, or refused before it started. */
export type ConfirmRemovalsResult = { kind: 'running'; run: Promise<RecheckResult> } | GatedRolesRefusal;

export interface GuildPreview {
  members: number;
  addCount: number;
  removeCount: number;
  unknownCount: number;
  /** At most 10 members who would change (with the username the walk saw, as names are not cached). */
  sample: { userId: string; username: string | null; add: string[]; remove: string[]; because: string[] }[];
}

export interface GuildStatus {
  enabled: boolean;
  settings: GuildSettings | null;
  manageRoles: boolean;
  guildMembersIntent: boolean;
  problems: RoleProblem[];
  lastFullSyncAt: number | null;
  queueLength: number;
  linkedMembers: number;
  /** Roles whose changes wait on a permission problem. */
  blockedRoleIds: string[];
  /** Removals held back by the mass-removal breaker, waiting for a later pass or a moderator. */
  heldRemovals: number;
  /** Signing links only work for the account they were made for (DISCORD_CLIENT_SECRET is set). */
  signingLinksBound: boolean;
  /** Chains of the guild's holdings rules whose node's last read failed (their roles are kept as they are). */
  failingChains?: string[];
  /** The last re-check cycle of every server (issue #37): its cost and whether the re-check keeps up. */
  recheckCycle?: CycleHealth;
}

export interface SetupInput {
  humanRoleId: string;
  spamRoleId: string | null;
  riskyRoleId: string | null;
  minScore: number | null;
  logChannelId: string | null;
  spamRemovesHuman?: boolean;
  /** Days; 0 turns it off, left out keeps the previous value. */
  minAccountAgeDays?: number;
  minJoinAgeDays?: number;
}

export interface RecheckResult {
  members: number;
  changes: number;
  failures: number;
  unlinked: number;
  /** Removals seen but waiting for confirmation (a later answer at least GATING_CONFIRM_MINUTES on). */
  pendingRemovals: number;
  /** Removals held back by the mass-removal breaker in this pass. */
  heldRemovals: number;
  /** Another process sharing the store was re-checking the guild, so this one did not. */
  elsewhere?: boolean;
}

/** A role change as notices name it. */
export type NoticeChange = Pick<RoleChange, 'op' | 'roleId' | 'userId' | 'reason'>;

/** Why the bot did not (or may not) edit a role. */
export type RoleRefusal =
  | RoleProblem
  | { problem: 'missing_permissions'; roleName: string | null }
  | { problem: 'unknown_role' };

/**
 * What the gating module tells moderators (the log channel) and members (a direct message), as data:
 * render turns each into its sentence (`gatingNoticeText`), so the words live in one place.
 */
export type GatingNotice =
  | { kind: 'verified'; userId: string; identity: string; proof: ProofMethod }
  | { kind: 'unlinked'; userId: string; identity: string; reason: string; flagKept: boolean }
  | { kind: 'link_moved'; identity: string; guildName: string | null; reason: string }
  | { kind: 'role_changed'; change: NoticeChange }
  | { kind: 'role_refused'; change: NoticeChange; refusal: RoleRefusal }
  | { kind: 'role_given_up'; change: NoticeChange; claims: number }
  | { kind: 'mass_removal_held'; roleId: string; count: number; holders: number; incident: boolean }
  /** An exemption held back the removal of a gated role. */
  | { kind: 'removal_exempt'; userId: string; roleId: string; by: ExemptBy; because: string };

/** Turns a notice into the one line a person reads, in `locale` (a Discord locale; en-US when unknown). */
export type NoticeText = (notice: GatingNotice, locale?: string) => string;
