/** Role rules (`gating_rules`, migration 13): one row per condition of a role's rule. */

export type StoredRuleMatch = 'all' | 'any';

/** One condition of a role's rule, as stored: its canonical key (see gating/rules/roleRules.ts). */
export interface StoredRuleCondition {
  guildId: string;
  roleId: string;
  /** The canonical key, e.g. `score:30` or `followers:farcaster:1000`. */
  condition: string;
  /** The rule's match mode (the same on every row of the role). */
  match: StoredRuleMatch;
  /** The moderator who added it. */
  addedBy: string;
  addedAt: number;
}

export interface AddRuleConditionInput {
  guildId: string;
  roleId: string;
  condition: string;
  /** Set the rule's match mode; null keeps the rule's own (`all` for a new rule). */
  match: StoredRuleMatch | null;
  addedBy: string;
  /** The most conditions the guild may hold: past it nothing is added (`full`). */
  maxPerGuild: number;
}

export interface RoleRuleStore {
  /**
   * Add a condition to a role's rule (audited, in one transaction with the match mode change); `created`
   * false when the role had it already (its match mode is still set when given), `full` when the guild
   * holds `maxPerGuild` conditions already (nothing changed).
   */
  addRuleCondition(input: AddRuleConditionInput): Promise<{ created: boolean; full: boolean }>;
  /** Remove one condition (audited); false when there was none. */
  removeRuleCondition(
    key: Pick<StoredRuleCondition, 'guildId' | 'roleId' | 'condition'>,
    actorId: string,
  ): Promise<boolean>;
  /** The guild's conditions, oldest first. */
  listRuleConditions(guildId: string): Promise<StoredRuleCondition[]>;
}
