/**
 * One member at a time: evaluating their proven identities and queueing the role changes that follow,
 * the report behind /whoami and /check-credentials, and the member events Discord sends.
 */

import type { Client, GuildMember } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import type { BackgroundTasks } from '../rechecks/backgroundTasks.ts';
import type { RemovalMode } from '../rechecks/losses.ts';
import { hasRecordLink, UsernameWatch } from '../rechecks/usernameWatch.ts';
import type { Evaluator } from '../rules/evaluation.ts';
import { loadRoleRules } from '../rules/ruleReads.ts';
import { notBeforeOf, type RoleDiff } from '../rules/rules.ts';
import type { MemberReport, MemberSync } from '../types.ts';
import { guildOf, memberOf, memberState, servesGuild } from './discordReads.ts';
import type { RoleSync } from './roleSync.ts';
import type { RoleWorker } from './roleWorker.ts';

export const EMPTY_DIFF: RoleDiff = { add: [], remove: [] };
const NO_SYNC: MemberSync = { applied: EMPTY_DIFF, waiting: [] };

export interface SyncOptions {
  fresh: boolean;
  checkRecords: boolean;
  mode: RemovalMode;
}

export interface MemberGatingOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  evaluator: Evaluator;
  roles: RoleSync;
  worker: RoleWorker;
  tasks: BackgroundTasks;
}

/** Evaluates one member and queues their role changes. */
export class MemberGating {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #evaluator: Evaluator;
  readonly #roles: RoleSync;
  readonly #worker: RoleWorker;
  readonly #tasks: BackgroundTasks;
  /** Usernames of members with record links, to notice renames (see onMemberUpdate). */
  readonly usernames = new UsernameWatch();
  /** The sync in flight for each `guild:user`, which the next one waits for. */
  readonly #syncing = new Map<string, Promise<void>>();
  readonly #joining: ((guildId: string, userId: string) => Promise<unknown>)[] = [];

  constructor(options: MemberGatingOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#evaluator = options.evaluator;
    this.#roles = options.roles;
    this.#worker = options.worker;
    this.#tasks = options.tasks;
  }

  /** A member's proven identities, their credentials, and the roles the rules want against the roles held. */
  async report(guildId: string, userId: string, opts: { fresh?: boolean } = {}): Promise<MemberReport> {
    const [settings, all, losses, exemptions, roleRules] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.getUserLinks(guildId, userId),
      this.#store.listPendingLosses(guildId, userId),
      this.#store.listExemptions(guildId),
      loadRoleRules(this.#store, guildId),
    ]);
    const guild = await guildOf(this.#discord, guildId);
    const state = memberState(userId, guild ? await memberOf(guild, userId) : null);
    const confirmMs = this.#roles.confirmMs;
    const base = {
      userId,
      links: all.filter((l) => l.releasedAt === null),
      released: all.filter((l) => l.releasedAt !== null),
      currentRoleIds: [...state.roleIds].filter((id) => id !== guildId),
      pendingRemovals: losses.map((l) => ({ ...l, confirmAt: l.firstSeenAt + confirmMs })),
      blockedRoleIds: this.#worker.blockedRoles(guildId),
    };
    if (!settings) {
      const evidence = await this.#evaluator.evidenceOf(base.links, opts.fresh === true);
      return { ...base, evidence, decisions: [], diff: EMPTY_DIFF, kept: [], exemptBy: null };
    }
    const evaluation = await this.#evaluator.evaluate(state, all, {
      settings,
      fresh: opts.fresh === true,
      dryRun: true,
      checkRecords: false,
      exemptions,
      roleRules,
    });
    const { evidence, decisions, diff, kept, exemptBy } = evaluation;
    return { ...base, evidence, decisions, diff, kept, exemptBy };
  }

  /**
   * Re-evaluate one member with fresh lookups and queue the changes, for a moderator: a removal applies
   * at once only when the fresh answer shows the loss (a failure or a sudden "not found" never does).
   */
  async recheckMember(guildId: string, userId: string, cause: string): Promise<MemberSync> {
    return this.sync(guildId, userId, cause, { fresh: true, checkRecords: true, mode: 'answered' });
  }

  /** Re-evaluate one member in an automated pass (join, rule change): removals need confirmation. */
  async syncMember(guildId: string, userId: string, cause: string): Promise<MemberSync> {
    return this.sync(guildId, userId, cause, { fresh: false, checkRecords: true, mode: 'confirmed' });
  }

  /**
   * Evaluate the member's links on the guild's rules and queue the role changes (nothing when gating is
   * off). One member's syncs run one after another in this process, so a sync that read the links before
   * another member took one over cannot queue its changes after the sync that followed the takeover.
   */
  async sync(guildId: string, userId: string, cause: string, o: SyncOptions): Promise<MemberSync> {
    const key = `${guildId}:${userId}`;
    const before = this.#syncing.get(key) ?? Promise.resolve();
    const run = before.then(
      () => this.#sync(guildId, userId, cause, o),
      () => this.#sync(guildId, userId, cause, o),
    );
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#syncing.set(key, settled);
    void settled.then(() => {
      if (this.#syncing.get(key) === settled) this.#syncing.delete(key);
    });
    return run;
  }

  async #sync(guildId: string, userId: string, cause: string, o: SyncOptions): Promise<MemberSync> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return NO_SYNC;
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) return NO_SYNC;
    // The queue before the member: a change the worker finishes in between is then either still queued
    // here or already on the member Discord answers, never missing from both (and never undone).
    const [queued, links, exemptions, roleRules] = await Promise.all([
      this.#store.openRoleChanges(guildId, userId),
      this.#store.getUserLinks(guildId, userId),
      this.#store.listExemptions(guildId),
      loadRoleRules(this.#store, guildId),
    ]);
    const member = await memberOf(guild, userId);
    if (!member) return NO_SYNC;
    if (hasRecordLink(links)) this.usernames.note(userId, member.user.username);
    const evaluation = await this.#evaluator.evaluate(memberState(userId, member, queued), links, {
      settings,
      fresh: o.fresh,
      dryRun: false,
      checkRecords: o.checkRecords,
      exemptions,
      roleRules,
    });
    const outcome = await this.#roles.applyMember(guildId, userId, evaluation, o.mode, cause);
    const notBefore = notBeforeOf(evaluation.decisions);
    const waits = notBefore ? { notBefore } : {};
    if (outcome.unlinked === 0) return { applied: outcome.applied, waiting: outcome.waiting, ...waits };
    // A record link was dropped (its loss confirmed): the roles it gave follow it now.
    const after = await this.#sync(guildId, userId, cause, {
      fresh: false,
      checkRecords: false,
      mode: 'immediate',
    });
    return {
      applied: {
        add: [...outcome.applied.add, ...after.applied.add],
        remove: [...outcome.applied.remove, ...after.applied.remove],
      },
      waiting: outcome.waiting,
    };
  }

  /** Run `hook` when a member joins a server with gating, before their roles follow (shared proofs). */
  onJoining(hook: (guildId: string, userId: string) => Promise<unknown>): void {
    this.#joining.push(hook);
  }

  /** A member joined: if they proved identities here before, their roles follow at once. */
  async onMemberJoin(member: GuildMember): Promise<void> {
    if (this.#tasks.stopping) return;
    const guildId = member.guild.id;
    try {
      const settings = await this.#store.getGuildSettings(guildId);
      if (!settings?.enabled) return;
      for (const hook of this.#joining) await hook(guildId, member.id);
      if ((await this.#store.getUserLinks(guildId, member.id)).length === 0) return;
      await this.syncMember(guildId, member.id, 'join');
    } catch (error) {
      this.#logger.error({ err: error, guildId, userId: member.id }, 'gating on member join failed');
    }
  }

  /**
   * Discord's GUILD_MEMBER_UPDATE, read raw: discord.js has no old user to compare with (none cached),
   * so a member whose record link was seen under another username is re-checked here.
   */
  onMemberUpdate(userId: string, username: string): void {
    if (this.usernames.renamed(userId, username)) this.#tasks.run('', () => this.onUsernameChange(userId));
  }

  /**
   * A member's Discord username changed: the old one can be taken by someone else, so each record link
   * is read again at once, and dropped when the record names someone else.
   */
  async onUsernameChange(userId: string): Promise<void> {
    const links = (await this.#store.getLinksOfUser(userId)).filter(
      (l) => l.proofMethod === 'record' && l.releasedAt === null,
    );
    for (const guildId of new Set(links.map((l) => l.guildId))) {
      // The shard serving each guild sees the same change and syncs its own.
      if (!servesGuild(this.#discord, guildId)) continue;
      await this.sync(guildId, userId, 'username changed', {
        fresh: true,
        checkRecords: true,
        mode: 'answered',
      });
    }
    // No record names them any more: their username no longer matters to gating.
    if (!hasRecordLink(await this.#store.getLinksOfUser(userId))) this.usernames.forget(userId);
  }
}
