/**
 * `/gating rule`: roles given for conditions on what members proved. Adding one is checked (the value,
 * the role's place in the hierarchy, the invoker's rights over it) and previewed by a dry run before it is
 * stored; only `apply` stores it, after checking everything again, and queues a whole-guild re-check.
 */
import type { Client } from 'discord.js';
import type { GatingStore } from '../store/types.ts';
import type { GuildGating } from './guildGating.ts';
import type { HoldingsReader } from './holdings/holdingsReader.ts';
import type { HoldingChain } from './holdings/holdingValues.ts';
import { targetOf } from './holdings/holdingValues.ts';
import type { BackgroundTasks } from './rechecks/backgroundTasks.ts';
import { guildOf, guildRoleProblems, invokerRights, memberOf } from './roles/discordReads.ts';
import type { RoleProblem } from './roles/hierarchy.ts';
import {
  type ConditionRefusal,
  conditionKey,
  conditionOfKey,
  MAX_GUILD_CONDITIONS,
  parseCondition,
  type RoleRule,
  type RuleCondition,
  type RuleMatch,
  withCondition,
} from './rules/roleRules.ts';
import { loadRoleRules } from './rules/ruleReads.ts';
import type { GuildPreview } from './types.ts';

/** A condition to add to a role's rule, as checked: what `apply` stores. */
export interface RuleProposal {
  roleId: string;
  condition: RuleCondition;
  /** Set the rule's match mode; null keeps it (`all` for a new rule). */
  match: RuleMatch | null;
}

/** Why a condition was not added or removed (nothing stored). */
export type RuleRefusal =
  | { code: 'bad_condition'; refusal: ConditionRefusal }
  /** The role is the human, spam or risky role of `/gating setup`. */
  | { code: 'gated_role'; roleId: string }
  | { code: 'too_many'; max: number }
  /** The bot cannot hand the role out, or the invoker could not by hand. */
  | { code: 'role_problems'; problems: RoleProblem[] }
  /** A holdings rule (issue #35): the chain's RPC URL is not set. */
  | { code: 'chain_not_configured'; chain: HoldingChain }
  /** The contract is no token of the rule's kind (`decimals()` or `balanceOf` reverts). */
  | { code: 'not_a_token'; kind: 'token' | 'nft'; chain: HoldingChain }
  /** The chain's node did not answer: the contract could not be checked. */
  | { code: 'chain_failed'; chain: HoldingChain };

export type RuleAddResult =
  | { kind: 'not_set_up' }
  | { kind: 'refused'; refusal: RuleRefusal }
  /** Checked and dry-run: nothing stored yet. `rule` is the role's rule as it would be. */
  | { kind: 'preview'; proposal: RuleProposal; rule: RoleRule; preview: GuildPreview }
  /** Stored (`changed`), or it was there already. */
  | { kind: 'applied'; changed: boolean; rule: RoleRule };

export type RuleRemoveResult =
  | { kind: 'not_set_up' }
  | { kind: 'refused'; refusal: RuleRefusal }
  | { kind: 'not_found' }
  | { kind: 'removed'; roleId: string; condition: RuleCondition };

export interface RuleGatingOptions {
  store: GatingStore;
  discord: Client;
  guilds: GuildGating;
  tasks: BackgroundTasks;
  /** Reads holdings rules' contracts when they are added; without it, no chain is configured. */
  holdings?: HoldingsReader | undefined;
}

/** Checks, previews, adds, removes and lists a guild's role rules. */
export class RuleGating {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #guilds: GuildGating;
  readonly #tasks: BackgroundTasks;
  readonly #holdings: HoldingsReader | undefined;

  constructor(options: RuleGatingOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#guilds = options.guilds;
    this.#tasks = options.tasks;
    this.#holdings = options.holdings;
  }

  /** What a moderator typed, checked and dry-run against the guild's members; nothing is stored. */
  async preview(
    guildId: string,
    typed: { roleId: string; kind: string; value: string; match: RuleMatch | null },
    actorId: string,
  ): Promise<RuleAddResult> {
    const parsed = parseCondition(typed.kind, typed.value);
    if (!parsed.ok) return { kind: 'refused', refusal: { code: 'bad_condition', refusal: parsed.refusal } };
    const proposal: RuleProposal = { roleId: typed.roleId, condition: parsed.condition, match: typed.match };
    const checked = await this.#check(guildId, proposal, actorId);
    if (checked.kind !== 'ok') return checked;
    const roleRules = withCondition(checked.rules, proposal.roleId, proposal.condition, proposal.match);
    const rule = roleRules.find((r) => r.roleId === proposal.roleId);
    if (!rule) throw new Error('the proposed rule is missing');
    const preview = await this.#guilds.preview(guildId, { roleRules, roleId: proposal.roleId });
    return { kind: 'preview', proposal, rule, preview };
  }

  /** Store a previewed condition, after checking it all again now, and re-check the guild. */
  async apply(guildId: string, proposal: RuleProposal, actorId: string): Promise<RuleAddResult> {
    const checked = await this.#check(guildId, proposal, actorId);
    if (checked.kind !== 'ok') return checked;
    const { created, full } = await this.#store.addRuleCondition({
      guildId,
      roleId: proposal.roleId,
      condition: conditionKey(proposal.condition),
      match: proposal.match,
      addedBy: actorId,
      maxPerGuild: MAX_GUILD_CONDITIONS,
    });
    if (full) return { kind: 'refused', refusal: { code: 'too_many', max: MAX_GUILD_CONDITIONS } };
    const rules = await loadRoleRules(this.#store, guildId);
    const rule = rules.find((r) => r.roleId === proposal.roleId) ?? {
      roleId: proposal.roleId,
      match: proposal.match ?? 'all',
      conditions: [proposal.condition],
    };
    this.#recheck(guildId, 'role rule added');
    return { kind: 'applied', changed: created, rule };
  }

  /** Remove one condition (`roleId:key`, as the rule option's suggestions carry it), when the invoker may. */
  async remove(guildId: string, ruleOption: string, actorId: string): Promise<RuleRemoveResult> {
    if (!(await this.#store.getGuildSettings(guildId))) return { kind: 'not_set_up' };
    const colon = ruleOption.indexOf(':');
    const roleId = ruleOption.slice(0, colon);
    const key = ruleOption.slice(colon + 1);
    const condition = colon > 0 ? conditionOfKey(key) : null;
    const stored = await this.#store.listRuleConditions(guildId);
    if (!condition || !stored.some((c) => c.roleId === roleId && c.condition === key))
      return { kind: 'not_found' };
    const problems = await this.#roleProblems(guildId, roleId, actorId);
    if (problems.length > 0) return { kind: 'refused', refusal: { code: 'role_problems', problems } };
    if (!(await this.#store.removeRuleCondition({ guildId, roleId, condition: key }, actorId))) {
      return { kind: 'not_found' };
    }
    this.#recheck(guildId, 'role rule removed');
    return { kind: 'removed', roleId, condition };
  }

  /** The chains holdings rules may name (their RPC URL is set). */
  get chains(): HoldingChain[] {
    return this.#holdings?.chains ?? [];
  }

  /** The guild's role rules. */
  list(guildId: string): Promise<RoleRule[]> {
    return loadRoleRules(this.#store, guildId);
  }

  async #check(
    guildId: string,
    proposal: RuleProposal,
    actorId: string,
  ): Promise<{ kind: 'ok'; rules: RoleRule[] } | Exclude<RuleAddResult, { kind: 'preview' | 'applied' }>> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return { kind: 'not_set_up' };
    const { roleId } = proposal;
    if ([settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId].includes(roleId)) {
      return { kind: 'refused', refusal: { code: 'gated_role', roleId } };
    }
    const problems = await this.#roleProblems(guildId, roleId, actorId);
    if (problems.length > 0) return { kind: 'refused', refusal: { code: 'role_problems', problems } };
    const rules = await loadRoleRules(this.#store, guildId);
    const count = rules.reduce((n, r) => n + r.conditions.length, 0);
    const key = conditionKey(proposal.condition);
    const known = rules.some((r) => r.roleId === roleId && r.conditions.some((c) => conditionKey(c) === key));
    if (!known && count >= MAX_GUILD_CONDITIONS) {
      return { kind: 'refused', refusal: { code: 'too_many', max: MAX_GUILD_CONDITIONS } };
    }
    const holding = await this.#probe(proposal.condition);
    return holding ? { kind: 'refused', refusal: holding } : { kind: 'ok', rules };
  }

  /** A holdings condition's chain must be configured and its contract a token of that kind (read now). */
  async #probe(condition: RuleCondition): Promise<RuleRefusal | null> {
    if (condition.kind !== 'token' && condition.kind !== 'nft') return null;
    const { chain } = condition;
    const verdict = this.#holdings ? await this.#holdings.probe(targetOf(condition)) : 'not_configured';
    if (verdict === 'not_configured') return { code: 'chain_not_configured', chain };
    if (verdict === 'not_a_token') return { code: 'not_a_token', kind: condition.kind, chain };
    return verdict === 'failed' ? { code: 'chain_failed', chain } : null;
  }

  /** Every reason the bot could not hand out the role, or the invoker could not by hand (read now). */
  async #roleProblems(guildId: string, roleId: string, actorId: string): Promise<RoleProblem[]> {
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) throw new Error('the bot is not in this server');
    return guildRoleProblems(guild, [roleId], invokerRights(guild, await memberOf(guild, actorId)));
  }

  #recheck(guildId: string, cause: string): void {
    this.#tasks.run(guildId, () => this.#guilds.recheckGuild(guildId, { fresh: true, cause }));
  }
}
