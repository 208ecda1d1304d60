/**
 * Turns a member's evaluation into changes: additions and flags at once; removals and dropped record
 * links only as `losses.ts` allows (confirmed over time in automated passes), and in a whole-guild pass
 * only after the mass-removal breaker had its say. Every change is queued durably with its reason.
 */
import type { Guild } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, LinkRecord, PendingLoss } from '../../store/types.ts';
import { truncate } from '../../text/safety.ts';
import {
  breakerTrips,
  decideLoss,
  holdSubject,
  linkSubject,
  type RemovalMode,
  roleSubject,
} from '../rechecks/losses.ts';
import type { Evaluation } from '../rules/evaluation.ts';
import { notBeforeOf, type RoleChangeWanted } from '../rules/rules.ts';
import type { MemberSync } from '../types.ts';
import type { GuildNotices } from './logChannel.ts';
import { REASON_PREFIX } from './roleChangeApplier.ts';

const MAX_REASON = 400;

/** Role losses of one whole-guild pass, decided together at its end. */
export class PassLosses {
  readonly byRole = new Map<
    string,
    { userId: string; change: RoleChangeWanted; loss: PendingLoss; apply: boolean }[]
  >();
  /** The guild's losses noted before the pass, by member: read once, not once per member. */
  readonly noted = new Map<string, PendingLoss[]>();
  /** Removals applied during the walk, by role (see `mayApplyEarly`). */
  readonly early = new Map<string, number>();
  /** Per role: how many removals this pass can confirm at most (noted earlier, due, not held). */
  readonly #due = new Map<string, number>();
  /** How many members hold a role (from the walk's member list). */
  readonly holders: (roleId: string) => number;
  readonly #safe = new Map<string, boolean>();

  constructor(
    noted: readonly PendingLoss[] = [],
    o: { dueBy: number; holders: (roleId: string) => number } = { dueBy: 0, holders: () => 0 },
  ) {
    for (const loss of noted) {
      this.noted.set(loss.userId, [...(this.noted.get(loss.userId) ?? []), loss]);
      const [kind, roleId = ''] = loss.subject.split(':');
      if (kind === 'role' && loss.heldAt === null && loss.firstSeenAt <= o.dueBy) {
        this.#due.set(roleId, (this.#due.get(roleId) ?? 0) + 1);
      }
    }
    this.holders = o.holders;
  }

  /**
   * Whether a confirmed removal may go out during the walk: only losses noted before the pass can be
   * confirmed in it, so when even all of those due for the role stay under the breaker, the pass
   * cannot hold them, and they need not wait for its end (removals then overlap the walk, like additions).
   */
  mayApplyEarly(roleId: string): boolean {
    let safe = this.#safe.get(roleId);
    if (safe === undefined) {
      safe = !breakerTrips(this.holders(roleId), this.#due.get(roleId) ?? 0);
      this.#safe.set(roleId, safe);
    }
    return safe;
  }
}

export interface RoleSyncOptions {
  store: GatingStore;
  logger: Logger;
  notices: GuildNotices;
  /** Called after changes were queued for the guild. */
  kick: (guildId: string) => void;
  /** Drops a link (released when it carried a flag). */
  dropLink: (link: LinkRecord, reason: string) => Promise<void>;
  now: () => number;
  confirmMs: number;
}

export interface MemberOutcome extends MemberSync {
  changes: number;
  unlinked: number;
  pendingRemovals: number;
}

export class RoleSync {
  readonly #store: GatingStore;
  readonly #logger: Logger;
  readonly #notices: GuildNotices;
  readonly #kick: (guildId: string) => void;
  readonly #dropLink: (link: LinkRecord, reason: string) => Promise<void>;
  readonly #now: () => number;
  readonly #confirmMs: number;
  /** Per `guild:user`, the roles whose held removal the log channel was told of: once, not every pass. */
  readonly #toldKept = new Map<string, Set<string>>();

  /** How far apart two sightings of a loss must be in automated passes. */
  get confirmMs(): number {
    return this.#confirmMs;
  }

  constructor(options: RoleSyncOptions) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#notices = options.notices;
    this.#kick = options.kick;
    this.#dropLink = options.dropLink;
    this.#now = options.now;
    this.#confirmMs = options.confirmMs;
  }

  /**
   * Apply one member's evaluation. In a whole-guild pass (`pass`), role removals are collected for
   * `finishPass`; otherwise they are decided here.
   */
  async applyMember(
    guildId: string,
    userId: string,
    evaluation: Evaluation,
    mode: RemovalMode,
    cause: string,
    pass?: PassLosses,
  ): Promise<MemberOutcome> {
    const outcome: MemberOutcome = {
      changes: 0,
      unlinked: 0,
      pendingRemovals: 0,
      applied: { add: evaluation.diff.add, remove: [] },
      waiting: [],
    };
    const notBefore = notBeforeOf(evaluation.decisions);
    // Too new for the human role: the due-check pass syncs them again when they are old enough.
    if (notBefore) await this.#store.saveDueCheck({ guildId, userId, dueAt: notBefore.at });
    const earlier = pass
      ? (pass.noted.get(userId) ?? [])
      : await this.#store.listPendingLosses(guildId, userId);
    const noted = new Map(earlier.map((l) => [l.subject, l] as const));
    const now = this.#now();
    const decide = (subject: string, confirmable: boolean) =>
      decideLoss({ noted: noted.get(subject), confirmable, mode, now, confirmMs: this.#confirmMs });
    const note = async (subject: string, reason: string, counted = true) => {
      if (counted) outcome.pendingRemovals += 1;
      const loss = { guildId, userId, subject, firstSeenAt: now, reason: truncate(reason, MAX_REASON) };
      return this.#store.notePendingLoss(loss);
    };
    const seen = new Set<string>();

    for (const gone of evaluation.recordsGone) {
      const subject = linkSubject(gone.link.identity);
      seen.add(subject);
      if (decide(subject, gone.confirmable).apply) {
        await this.#dropLink(gone.link, gone.reason);
        await this.#store.clearPendingLoss(guildId, userId, subject);
        outcome.unlinked += 1;
      } else await note(subject, gone.reason);
    }
    for (const link of evaluation.clearedHolds) {
      const subject = holdSubject(link.identity);
      seen.add(subject);
      if (decide(subject, true).apply) {
        const key = { guildId, userId, identity: link.identity };
        await this.#store.removeLink(key, `${link.identity} no longer carries a spam or risky flag`);
        await this.#store.clearPendingLoss(guildId, userId, subject);
      } else await note(subject, `${link.identity} no longer carries a flag`);
    }

    outcome.changes += await this.enqueue(guildId, userId, evaluation.diff.add, 'add', cause);
    this.#tellKept(guildId, userId, evaluation);
    const removals: RoleChangeWanted[] = [];
    for (const change of evaluation.diff.remove) {
      if (change.byFlag || change.unproven) {
        removals.push(change);
        continue;
      }
      const subject = roleSubject(change.roleId);
      seen.add(subject);
      const decision = decide(subject, evaluation.confirmable);
      if (
        pass &&
        decision.apply &&
        noted.get(subject)?.heldAt === null &&
        pass.mayApplyEarly(change.roleId)
      ) {
        removals.push(change);
        await this.#store.clearPendingLoss(guildId, userId, subject);
        pass.early.set(change.roleId, (pass.early.get(change.roleId) ?? 0) + 1);
        continue;
      }
      if (pass) {
        // finishPass decides (and counts) the pass's role losses together.
        const loss = noted.get(subject) ?? (await note(subject, change.because, false));
        const list = pass.byRole.get(change.roleId) ?? [];
        list.push({ userId, change, loss, apply: decision.apply });
        pass.byRole.set(change.roleId, list);
        continue;
      }
      if (decision.apply) {
        removals.push(change);
        await this.#store.clearPendingLoss(guildId, userId, subject);
      } else {
        await note(subject, change.because);
        outcome.waiting.push(change);
      }
    }
    outcome.changes += await this.enqueue(guildId, userId, removals, 'remove', cause);
    outcome.applied.remove = removals;

    // A loss noted earlier that this answer no longer shows (the role is wanted, or gone already; the
    // record names the member again) is forgotten; one hidden by a failed lookup waits.
    for (const [subject, loss] of noted) {
      if (seen.has(subject) || !this.#contradicted(loss, evaluation)) continue;
      await this.#store.clearPendingLoss(guildId, userId, subject);
    }
    return outcome;
  }

  /**
   * The end of a whole-guild pass: per role, when the losses not held before are a mass removal, hold
   * them all and alert the log channel once; apply the confirmed rest (held ones a later pass agrees on
   * included). With `confirmRemovals` (a moderator's say-so) the breaker does not hold anything.
   */
  async finishPass(
    guild: Guild,
    pass: PassLosses,
    cause: string,
    confirmRemovals: boolean,
  ): Promise<{ changes: number; held: number; pending: number }> {
    let changes = 0;
    let held = 0;
    let pending = 0;
    for (const [roleId, losses] of pass.byRole) {
      const fresh = losses.filter((l) => l.loss.heldAt === null);
      const early = pass.early.get(roleId) ?? 0;
      const trips = !confirmRemovals && breakerTrips(pass.holders(roleId), fresh.length + early);
      if (trips) {
        await this.#store.holdPendingLosses(
          guild.id,
          fresh.map((l) => ({ userId: l.userId, subject: roleSubject(roleId) })),
          this.#now(),
        );
        held += fresh.length;
        this.#alert(guild, roleId, pass.holders(roleId), fresh.length + early, losses);
        // The dashboard's chart of breaker holds counts these (audit_daily), and its audit page lists them.
        await this.#store.addAuditEvent({
          guildId: guild.id,
          kind: 'removals_held',
          roleId,
          reason: `mass removal held: ${fresh.length + early} of ${pass.holders(roleId)} holders (${cause})`,
          details: { count: fresh.length, holders: pass.holders(roleId) },
        });
      }
      for (const l of losses) {
        if (trips && l.loss.heldAt === null) continue;
        if (!l.apply && !(confirmRemovals && l.loss.heldAt !== null)) {
          pending += 1;
          continue;
        }
        changes += await this.enqueue(guild.id, l.userId, [l.change], 'remove', cause);
        await this.#store.clearPendingLoss(guild.id, l.userId, roleSubject(roleId));
      }
    }
    return { changes, held, pending };
  }

  async enqueue(
    guildId: string,
    userId: string,
    changes: RoleChangeWanted[],
    op: 'add' | 'remove',
    cause: string,
  ): Promise<number> {
    for (const change of changes) {
      await this.#store.enqueueRoleChange({
        guildId,
        userId,
        roleId: change.roleId,
        op,
        reason: truncate(`${REASON_PREFIX}${change.because}`, MAX_REASON),
      });
    }
    if (changes.length > 0) {
      this.#logger.debug({ guildId, userId, cause, changes: changes.length, op }, 'role changes queued');
      this.#kick(guildId);
    }
    return changes.length;
  }

  /** Tell the log channel of each removal an exemption holds back, the first time it is held. */
  #tellKept(guildId: string, userId: string, evaluation: Evaluation): void {
    const key = `${guildId}:${userId}`;
    const told = this.#toldKept.get(key);
    const by = evaluation.exemptBy;
    if (by === null || evaluation.kept.length === 0) {
      this.#toldKept.delete(key);
      return;
    }
    for (const change of evaluation.kept) {
      if (told?.has(change.roleId)) continue;
      this.#logger.info({ guildId, userId, roleId: change.roleId, by }, 'removal held by an exemption');
      this.#notices.post(guildId, {
        kind: 'removal_exempt',
        userId,
        roleId: change.roleId,
        by,
        because: change.because,
      });
    }
    this.#toldKept.set(key, new Set(evaluation.kept.map((c) => c.roleId)));
  }

  #contradicted(loss: PendingLoss, evaluation: Evaluation): boolean {
    const [kind, ...rest] = loss.subject.split(':');
    const id = rest.join(':');
    if (kind === 'role') {
      const decision = evaluation.decisions.find((d) => d.roleId === id);
      if (!decision) return true;
      if (decision.want === null) return false;
      return !evaluation.diff.remove.some((r) => r.roleId === id);
    }
    if (kind === 'link') {
      return evaluation.recordsNaming.has(id) || !evaluation.links.some((l) => l.identity === id);
    }
    if (kind === 'hold') {
      return evaluation.stillFlagged.has(id) || !evaluation.released.some((l) => l.identity === id);
    }
    return true;
  }

  #alert(
    guild: Guild,
    roleId: string,
    holders: number,
    count: number,
    losses: { change: RoleChangeWanted }[],
  ): void {
    const allMissing = losses.every((l) => l.change.because.startsWith('no unexpired'));
    this.#logger.warn({ guildId: guild.id, roleId, count, holders }, 'mass removal held by the breaker');
    this.#notices.post(guild.id, { kind: 'mass_removal_held', roleId, count, holders, incident: allMissing });
  }
}
