/**
 * A guild's gating: its rules (checked against the role hierarchy before they are saved), turning it
 * off, its health, whole-guild re-checks and their dry run.
 */

import type { Client } from 'discord.js';
import type { GatingStore, GuildSettings } from '../store/types.ts';
import type { HoldingsReader } from './holdings/holdingsReader.ts';
import type { BackgroundTasks } from './rechecks/backgroundTasks.ts';
import type { GuildRechecks, RecheckGuildOptions } from './rechecks/guildRechecks.ts';
import type { GuildWalk } from './rechecks/guildWalk.ts';
import { rolesBeyondMember } from './roles/authority.ts';
import { guildAuthorityOf, memberRolesOf } from './roles/authorityReads.ts';
import {
  botCanManageRoles,
  guildOf,
  guildRoleProblems,
  hasMembersIntent,
  invokerRights,
  memberOf,
} from './roles/discordReads.ts';
import type { RoleProblem } from './roles/hierarchy.ts';
import type { RoleWorker } from './roles/roleWorker.ts';
import { failingChains } from './rules/holdingFacts.ts';
import type { RoleRule } from './rules/roleRules.ts';
import { loadRoleRules } from './rules/ruleReads.ts';
import type { RoleDiff } from './rules/rules.ts';
import type {
  ConfirmRemovalsResult,
  DisableResult,
  GuildPreview,
  GuildStatus,
  RecheckResult,
  SetupInput,
  SetupResult,
} from './types.ts';

const PREVIEW_SAMPLE = 10;

export interface GuildGatingOptions {
  /** Signing links only work for the account they were made for (the signing page's Discord sign-in). */
  signingLinksBound?: boolean;
  store: GatingStore;
  discord: Client;
  worker: RoleWorker;
  tasks: BackgroundTasks;
  rechecks: GuildRechecks;
  walk: GuildWalk;
  /** Holdings rules' chain reads: which chains are failing, for the status. */
  holdings?: HoldingsReader | undefined;
}

/** Sets up, turns off, reports on and re-checks the gating of a guild. */
export class GuildGating {
  readonly #store: GatingStore;
  readonly #holdings: HoldingsReader | undefined;
  readonly #discord: Client;
  readonly #worker: RoleWorker;
  readonly #tasks: BackgroundTasks;
  readonly #rechecks: GuildRechecks;
  readonly #walk: GuildWalk;
  readonly #signingLinksBound: boolean;

  constructor(options: GuildGatingOptions) {
    this.#store = options.store;
    this.#holdings = options.holdings;
    this.#discord = options.discord;
    this.#worker = options.worker;
    this.#tasks = options.tasks;
    this.#rechecks = options.rechecks;
    this.#walk = options.walk;
    this.#signingLinksBound = options.signingLinksBound === true;
  }

  /**
   * Save the guild's rules when every role can be managed by the bot and handed out by the invoker, and
   * the invoker has the rights `disable` takes over every gated role the new rules replace or drop; then
   * re-check the whole guild with fresh lookups.
   */
  async setup(guildId: string, input: SetupInput, actorId: string): Promise<SetupResult> {
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) throw new Error('the bot is not in this server');
    const roleIds = [input.humanRoleId, input.spamRoleId, input.riskyRoleId].filter((r) => r !== null);
    const member = await memberOf(guild, actorId);
    const problems = guildRoleProblems(guild, roleIds, invokerRights(guild, member));
    if (problems.length > 0) return { settings: null, problems };
    const previous = await this.#store.getGuildSettings(guildId);
    const replaced = replacedRoles(previous, roleIds);
    const actor = member ? memberRolesOf(member) : { userId: actorId, roleIds: [] };
    const beyond = rolesBeyondMember(guildAuthorityOf(guild), actor, replaced);
    if (beyond.length > 0) return { kind: 'refused', problems: beyond };

    const minScore = input.minScore !== null && Number.isFinite(input.minScore) ? input.minScore : null;
    const settings = await this.#store.saveGuildSettings(
      {
        guildId,
        enabled: true,
        humanRoleId: input.humanRoleId,
        spamRoleId: input.spamRoleId,
        riskyRoleId: input.riskyRoleId,
        minScore,
        spamRemovesHuman: input.spamRemovesHuman ?? previous?.spamRemovesHuman ?? true,
        minAccountAgeDays: input.minAccountAgeDays ?? previous?.minAccountAgeDays ?? null,
        minJoinAgeDays: input.minJoinAgeDays ?? previous?.minJoinAgeDays ?? null,
        logChannelId: input.logChannelId,
      },
      { userId: actorId, reason: previous ? 'gating settings changed' : 'gating set up' },
    );
    await this.#worker.unblock(guildId);
    this.#tasks.run(guildId, () => this.recheckGuild(guildId, { fresh: true, cause: 'setup' }));
    return { settings, problems: [] };
  }

  /**
   * Turn gating off in a guild (roles stay as they are). It decides who keeps the gated roles from now
   * on, so it takes the rights `/gating setup` takes over every one of them.
   */
  async disable(guildId: string, actorId: string): Promise<DisableResult> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return { kind: 'not_set_up' };
    if (!settings.enabled) return { kind: 'already_off' };
    const problems = await this.gatedRolesBeyond(guildId, actorId, settings);
    if (problems.length > 0) return { kind: 'refused', problems };
    const { lastFullSyncAt: _sync, updatedAt: _updated, ...input } = settings;
    await this.#store.saveGuildSettings(
      { ...input, enabled: false },
      { userId: actorId, reason: 'gating disabled' },
    );
    return { kind: 'disabled' };
  }

  /**
   * A moderator's whole-guild re-check that releases held removals: it takes gated roles away, so it
   * takes the rights `/gating setup` takes over every gated role; refused, nothing runs.
   */
  async confirmRemovals(guildId: string, actorId: string, cause: string): Promise<ConfirmRemovalsResult> {
    const problems = await this.gatedRolesBeyond(guildId, actorId);
    if (problems.length > 0) return { kind: 'refused', problems };
    return {
      kind: 'running',
      run: this.recheckGuild(guildId, { fresh: true, cause, confirmRemovals: true }),
    };
  }

  /**
   * The gated roles (human, spam, risky and every role rule's) the actor could not grant or take by hand,
   * read now from the server's roles and the actor's (see authority.ts); none for the owner or an
   * Administrator, and none when gating was never set up.
   */
  async gatedRolesBeyond(guildId: string, actorId: string, known?: GuildSettings): Promise<RoleProblem[]> {
    const settings = known ?? (await this.#store.getGuildSettings(guildId));
    if (!settings) return [];
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) throw new Error('the bot is not in this server');
    const ruleRoles = (await loadRoleRules(this.#store, guildId)).map((r) => r.roleId);
    const gated = [settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId, ...ruleRoles].filter(
      (id) => id !== null,
    );
    const member = await memberOf(guild, actorId);
    const actor = member ? memberRolesOf(member) : { userId: actorId, roleIds: [] };
    return rolesBeyondMember(guildAuthorityOf(guild), actor, gated);
  }

  /** The guild's gating settings, if it was ever set up. */
  getSettings(guildId: string): Promise<GuildSettings | undefined> {
    return this.#store.getGuildSettings(guildId);
  }

  /**
   * Re-evaluate every linked member of the guild (records re-checked in batches) and queue the changes.
   * Removals need confirmation, and a mass removal is held; `confirmRemovals` (a moderator) releases it.
   */
  recheckGuild(guildId: string, opts: RecheckGuildOptions = {}): Promise<RecheckResult> {
    return this.#rechecks.recheckGuild(guildId, opts);
  }

  /**
   * A dry run of a guild re-check (cached lookups, nothing written). With `only`, the guild's role rules
   * are replaced by `only.roleRules` and only the changes of `only.roleId` are counted (a rule's preview).
   */
  async preview(
    guildId: string,
    only?: { roleRules: readonly RoleRule[]; roleId: string },
  ): Promise<GuildPreview> {
    const result: GuildPreview = { members: 0, addCount: 0, removeCount: 0, unknownCount: 0, sample: [] };
    const settings = await this.#store.getGuildSettings(guildId);
    const guild = await guildOf(this.#discord, guildId);
    if (!settings || !guild) return result;
    await this.#walk.walk(
      guild,
      await this.#walk.snapshot(guild),
      {
        settings,
        fresh: false,
        dryRun: true,
        checkRecords: true,
        exemptions: await this.#store.listExemptions(guildId),
        roleRules: only?.roleRules ?? (await loadRoleRules(this.#store, guildId)),
      },
      async (state, evaluation) => {
        const { failed } = evaluation;
        const diff = only ? onlyRole(evaluation.diff, only.roleId) : evaluation.diff;
        result.members += 1;
        result.addCount += diff.add.length;
        result.removeCount += diff.remove.length;
        if (failed) result.unknownCount += 1;
        const changes = diff.add.length + diff.remove.length;
        if (changes > 0 && result.sample.length < PREVIEW_SAMPLE) {
          result.sample.push({
            userId: state.userId,
            username: state.username,
            add: diff.add.map((a) => a.roleId),
            remove: diff.remove.map((r) => r.roleId),
            because: [...diff.add, ...diff.remove].map((c) => c.because),
          });
        }
      },
      () => {
        result.unknownCount += 1;
      },
    );
    return result;
  }

  /** Permissions, intents, hierarchy problems, blocked roles, held removals, last sync and queue. */
  async status(guildId: string): Promise<GuildStatus> {
    const [settings, queueLength, linkedMembers, losses, roleRules, recheckCycle] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.pendingRoleChanges(guildId),
      this.#store.countLinkedUsers(guildId),
      this.#store.listPendingLosses(guildId),
      loadRoleRules(this.#store, guildId),
      this.#rechecks.cycleHealth(),
    ]);
    const guild = await guildOf(this.#discord, guildId);
    const ruleRoles = roleRules.map((r) => r.roleId);
    const roleIds = settings
      ? [settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId, ...ruleRoles]
      : [];
    return {
      enabled: settings?.enabled ?? false,
      settings: settings ?? null,
      manageRoles: guild ? botCanManageRoles(guild) : false,
      guildMembersIntent: hasMembersIntent(this.#discord),
      problems: guild
        ? guildRoleProblems(
            guild,
            roleIds.filter((r) => r !== null),
          )
        : [],
      lastFullSyncAt: settings?.lastFullSyncAt ?? null,
      queueLength,
      linkedMembers,
      blockedRoleIds: this.#worker.blockedRoles(guildId),
      heldRemovals: losses.filter((l) => l.heldAt !== null).length,
      signingLinksBound: this.#signingLinksBound,
      failingChains: failingChains(this.#holdings, roleRules),
      recheckCycle,
    };
  }
}

/**
 * The gated roles of switched-on settings that new rules with `kept` roles would replace or drop (the
 * human, spam and risky roles; rule roles stay as they are). Settings switched off gate nothing.
 */
function replacedRoles(previous: GuildSettings | undefined, kept: readonly string[]): string[] {
  if (!previous?.enabled) return [];
  return [previous.humanRoleId, previous.spamRoleId, previous.riskyRoleId].filter(
    (id): id is string => id !== null && !kept.includes(id),
  );
}

/** A diff's changes of one role. */
function onlyRole(diff: RoleDiff, roleId: string): RoleDiff {
  return {
    add: diff.add.filter((c) => c.roleId === roleId),
    remove: diff.remove.filter((c) => c.roleId === roleId),
  };
}
