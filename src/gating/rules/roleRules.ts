/**
 * Role rules (issue #19 part 2): a role given for conditions on what a member proved, all of them or any
 * of them. A condition is stored as its canonical key (`score:30`, `platform:ens`, `name-age:365`,
 * `name-expiry:30`, `followers:farcaster:1000`); what a moderator types is validated here with zod before
 * anything is stored. Pure: no clock, no lookups.
 */
import { z } from 'zod';
import {
  type HoldingCondition,
  type HoldingValueProblem,
  holdingValueKey,
  parseNftValue,
  parseTokenValue,
} from '../holdings/holdingValues.ts';

export const RULE_KINDS = [
  'score',
  'platform',
  'name-age',
  'name-expiry',
  'followers',
  'token',
  'nft',
] as const;
export type RuleKind = (typeof RULE_KINDS)[number];

/** Platforms a `platform` condition asks a proven identity on. */
export const RULE_PLATFORMS = ['ens', 'basenames', 'linea', 'farcaster', 'lens', 'solana'] as const;
export type RulePlatform = (typeof RULE_PLATFORMS)[number];

/** Platforms whose profiles carry follower counts. */
export const FOLLOWER_PLATFORMS = ['farcaster', 'lens'] as const;
export type FollowerPlatform = (typeof FOLLOWER_PLATFORMS)[number];

export const RULE_MATCHES = ['all', 'any'] as const;
export type RuleMatch = (typeof RULE_MATCHES)[number];

export const MAX_RULE_SCORE = 1_000_000;
export const MAX_RULE_DAYS = 36_500;
export const MAX_RULE_FOLLOWERS = 1_000_000_000;
/** The longest value a moderator may type: an ERC-1155 contract, its token id and a minimum. */
export const MAX_RULE_VALUE = 160;
/** Conditions a guild may hold in all (one autocomplete page, one list). */
export const MAX_GUILD_CONDITIONS = 25;

export type RuleCondition =
  | { kind: 'score'; min: number }
  | { kind: 'platform'; platform: RulePlatform }
  | { kind: 'name-age'; days: number }
  | { kind: 'name-expiry'; days: number }
  | { kind: 'followers'; platform: FollowerPlatform; min: number }
  | HoldingCondition;

/** One role, given when its conditions hold (all of them, or any of them). */
export interface RoleRule {
  roleId: string;
  match: RuleMatch;
  conditions: RuleCondition[];
}

/** Plain decimal digits only: no exponent, hex, sign or spaces inside (`1e3` and `0x10` are refused). */
const wholeNumber = (max: number) =>
  z
    .string()
    .regex(/^\d{1,12}$/)
    .transform(Number)
    .pipe(z.number().int().min(1).max(max));
const scoreNumber = z
  .string()
  .regex(/^\d{1,9}(\.\d{1,4})?$/)
  .transform(Number)
  .pipe(z.number().min(0).max(MAX_RULE_SCORE));

const VALUE_SCHEMAS = {
  score: z.string().trim().pipe(scoreNumber),
  platform: z.string().trim().toLowerCase().pipe(z.enum(RULE_PLATFORMS)),
  'name-age': z.string().trim().pipe(wholeNumber(MAX_RULE_DAYS)),
  'name-expiry': z.string().trim().pipe(wholeNumber(MAX_RULE_DAYS)),
  followers: z
    .string()
    .trim()
    .toLowerCase()
    .transform((text) => {
      const [platform = '', min = ''] = text.split(/[:\s]+/, 2);
      return { platform, min };
    })
    .pipe(
      z.object({
        platform: z.enum(FOLLOWER_PLATFORMS),
        min: wholeNumber(MAX_RULE_FOLLOWERS),
      }),
    ),
} as const;

/** Why what a moderator typed is not a condition. */
export type ConditionRefusal =
  | { code: 'unknown_kind' }
  | { code: 'bad_value'; kind: RuleKind }
  /** A holdings value (issue #35), with what is wrong in it. */
  | { code: 'bad_holding'; kind: 'token' | 'nft'; problem: HoldingValueProblem };

export function isRuleKind(text: string): text is RuleKind {
  return (RULE_KINDS as readonly string[]).includes(text);
}

/** The condition a moderator typed (`kind` and its value), or why it is none. */
export function parseCondition(
  kindText: string,
  valueText: string,
): { ok: true; condition: RuleCondition } | { ok: false; refusal: ConditionRefusal } {
  const kind = kindText.trim().toLowerCase();
  if (!isRuleKind(kind)) return { ok: false, refusal: { code: 'unknown_kind' } };
  const bad = { ok: false as const, refusal: { code: 'bad_value' as const, kind } };
  switch (kind) {
    case 'score': {
      const parsed = VALUE_SCHEMAS.score.safeParse(valueText);
      return parsed.success ? { ok: true, condition: { kind, min: parsed.data } } : bad;
    }
    case 'platform': {
      const parsed = VALUE_SCHEMAS.platform.safeParse(valueText);
      return parsed.success ? { ok: true, condition: { kind, platform: parsed.data } } : bad;
    }
    case 'name-age':
    case 'name-expiry': {
      const parsed = VALUE_SCHEMAS[kind].safeParse(valueText);
      return parsed.success ? { ok: true, condition: { kind, days: parsed.data } } : bad;
    }
    case 'followers': {
      const parsed = VALUE_SCHEMAS.followers.safeParse(valueText);
      return parsed.success ? { ok: true, condition: { kind, ...parsed.data } } : bad;
    }
    case 'token':
    case 'nft': {
      const parsed = kind === 'token' ? parseTokenValue(valueText) : parseNftValue(valueText);
      return parsed.ok
        ? parsed
        : { ok: false, refusal: { code: 'bad_holding', kind, problem: parsed.problem } };
    }
  }
}

/** The canonical key of a condition, as stored and as option values carry it. */
export function conditionKey(c: RuleCondition): string {
  switch (c.kind) {
    case 'score':
      return `score:${c.min}`;
    case 'platform':
      return `platform:${c.platform}`;
    case 'name-age':
    case 'name-expiry':
      return `${c.kind}:${c.days}`;
    case 'followers':
      return `followers:${c.platform}:${c.min}`;
    case 'token':
    case 'nft':
      return `${c.kind}:${holdingValueKey(c)}`;
  }
}

/** The condition a stored key names, or null for a key this version does not read. */
export function conditionOfKey(key: string): RuleCondition | null {
  const colon = key.indexOf(':');
  if (colon === -1) return null;
  const parsed = parseCondition(key.slice(0, colon), key.slice(colon + 1));
  return parsed.ok && conditionKey(parsed.condition) === key ? parsed.condition : null;
}

/** What rules are made of, as the store keeps them: one row per condition, the match mode per role. */
export interface RuleConditionRow {
  roleId: string;
  condition: string;
  match: RuleMatch;
}

/** The guild's rules from its stored conditions, one per role in first-seen order; unreadable keys skipped. */
export function rulesOfRows(rows: readonly RuleConditionRow[]): RoleRule[] {
  const byRole = new Map<string, RoleRule>();
  for (const row of rows) {
    const condition = conditionOfKey(row.condition);
    if (!condition) continue;
    const rule = byRole.get(row.roleId) ?? { roleId: row.roleId, match: row.match, conditions: [] };
    rule.conditions.push(condition);
    byRole.set(row.roleId, rule);
  }
  return [...byRole.values()];
}

/** The guild's rules with one condition added to `roleId`'s rule (created when new), `match` set when given. */
export function withCondition(
  rules: readonly RoleRule[],
  roleId: string,
  condition: RuleCondition,
  match: RuleMatch | null,
): RoleRule[] {
  const key = conditionKey(condition);
  const found = rules.some((r) => r.roleId === roleId);
  const next = rules.map((r) =>
    r.roleId !== roleId
      ? r
      : {
          roleId,
          match: match ?? r.match,
          conditions: r.conditions.some((c) => conditionKey(c) === key)
            ? r.conditions
            : [...r.conditions, condition],
        },
  );
  return found ? next : [...next, { roleId, match: match ?? 'all', conditions: [condition] }];
}

/** What the rules need read beyond credentials: `/domain` of proven names, profiles of proven socials, holdings. */
export function rulesNeed(rules: readonly RoleRule[]): {
  names: boolean;
  followers: Set<FollowerPlatform>;
  holdings: HoldingCondition[];
} {
  const conditions = rules.flatMap((r) => r.conditions);
  const followers = new Set<FollowerPlatform>();
  for (const c of conditions) if (c.kind === 'followers') followers.add(c.platform);
  return {
    names: conditions.some((c) => c.kind === 'name-age' || c.kind === 'name-expiry'),
    followers,
    holdings: conditions.filter((c): c is HoldingCondition => c.kind === 'token' || c.kind === 'nft'),
  };
}
