/**
 * `/gating rule add|remove|list`: the preview with Apply and Cancel, what was stored (or why nothing
 * was), the guild's role rules, and the words of conditions and kinds (autocomplete too). Pure.
 */
import { type APIApplicationCommandOptionChoice, ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { RuleAddResult, RuleRefusal, RuleRemoveResult } from '../gating/ruleGating.ts';
import type { RoleRule, RuleCondition, RuleKind } from '../gating/rules/roleRules.ts';
import { type MessageKey, t } from '../i18n/index.ts';
import { DISCORD_LIMITS, truncate } from '../text/safety.ts';
import { joinLinesWithin } from './format.ts';
import { problemLines } from './gatingGuild.ts';
import { embed, type GuildNames, LIST_MAX, plain, roleLabel } from './gatingLabels.ts';
import { holdingConditionText, holdingRefusalText } from './holdingRules.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

const KIND_KEYS: Readonly<Record<RuleKind, MessageKey>> = {
  score: 'gating.rule.kind.score',
  platform: 'gating.rule.kind.platform',
  'name-age': 'gating.rule.kind.nameAge',
  'name-expiry': 'gating.rule.kind.nameExpiry',
  followers: 'gating.rule.kind.followers',
  token: 'gating.rule.kind.token',
  nft: 'gating.rule.kind.nft',
};

/** What a kind checks and the value it takes, in `locale` (autocomplete names and value hints). */
export function ruleKindText(kind: RuleKind, locale: string): string {
  return t(locale, KIND_KEYS[kind]);
}

/** A condition in words: "humanity score ≥ 30". */
export function conditionText(c: RuleCondition, locale: string): string {
  switch (c.kind) {
    case 'score':
      return t(locale, 'gating.rule.condition.score', { min: c.min });
    case 'platform':
      return t(locale, 'gating.rule.condition.platform', { platform: c.platform });
    case 'name-age':
      return t(locale, 'gating.rule.condition.nameAge', { days: c.days });
    case 'name-expiry':
      return t(locale, 'gating.rule.condition.nameExpiry', { days: c.days });
    case 'followers':
      return t(locale, 'gating.rule.condition.followers', { min: c.min, platform: c.platform });
    case 'token':
    case 'nft':
      return holdingConditionText(c, locale);
  }
}

/** A rule in one line: "**Role**: all of: humanity score ≥ 30; a proven ens identity". */
export function ruleText(rule: RoleRule, names: GuildNames, locale: string): string {
  return t(locale, 'gating.rule.ruleLine', {
    role: roleLabel(rule.roleId, names, locale),
    match: t(locale, rule.match === 'any' ? 'gating.rule.match.any' : 'gating.rule.match.all'),
    conditions: rule.conditions.map((c) => conditionText(c, locale)).join('; '),
  });
}

/** A condition as a choice of the remove command's `rule` option: "Role: humanity score ≥ 30". */
export function ruleChoiceName(roleId: string, c: RuleCondition, names: GuildNames, locale: string): string {
  const role = names.roles.get(roleId) ?? roleId;
  return truncate(`${role}: ${conditionText(c, locale)}`, 100);
}

/** A kind as an autocomplete choice. */
export function ruleKindChoice(kind: RuleKind, locale: string): APIApplicationCommandOptionChoice<string> {
  return { name: truncate(ruleKindText(kind, locale), 100), value: kind };
}

function refusalText(refusal: RuleRefusal, names: GuildNames, locale: string): string {
  switch (refusal.code) {
    case 'bad_condition':
      if (refusal.refusal.code === 'bad_holding') return holdingRefusalText(refusal.refusal, locale);
      return refusal.refusal.code === 'unknown_kind'
        ? t(locale, 'gating.rule.badKind')
        : t(locale, 'gating.rule.badValue', { hint: ruleKindText(refusal.refusal.kind, locale) });
    case 'chain_not_configured':
    case 'not_a_token':
    case 'chain_failed':
      return holdingRefusalText(refusal, locale);
    case 'gated_role':
      return t(locale, 'gating.rule.gatedRole', { role: roleLabel(refusal.roleId, names, locale) });
    case 'too_many':
      return t(locale, 'gating.rule.tooMany', { max: refusal.max });
    case 'role_problems': {
      const lines = problemLines(refusal.problems, locale);
      return `${t(locale, 'gating.rule.nothingStored')}\n${joinLinesWithin(lines, LIST_MAX * 3)}`;
    }
  }
}

function refused(refusal: RuleRefusal, names: GuildNames, ctx: RenderContext): MessagePayload {
  const text = refusalText(refusal, names, ctx.locale);
  return plain(embed(t(ctx.locale, 'gating.rule.refusedTitle'), text, COLORS.warning), ctx);
}

/** `add`: the preview with Apply and Cancel, what was stored, or why nothing was (`not_set_up` is the caller's). */
export function renderRuleAdd(
  result: Exclude<RuleAddResult, { kind: 'not_set_up' }>,
  ids: { apply: string; cancel: string },
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  if (result.kind === 'refused') return refused(result.refusal, names, ctx);
  const rule = ruleText(result.rule, names, locale);
  if (result.kind === 'applied') {
    return result.changed
      ? plain(
          embed(
            t(locale, 'gating.rule.addedTitle'),
            t(locale, 'gating.rule.added', { rule }),
            COLORS.success,
          ),
          ctx,
        )
      : plain(
          embed(
            t(locale, 'gating.rule.unchangedTitle'),
            t(locale, 'gating.rule.already', { role: roleLabel(result.rule.roleId, names, locale), rule }),
            COLORS.neutral,
          ),
          ctx,
        );
  }
  const { preview } = result;
  const description = t(locale, 'gating.rule.preview', {
    rule,
    members: preview.members,
    add: preview.addCount,
    remove: preview.removeCount,
    unknown: preview.unknownCount,
  });
  return finishPayload(
    [embed(t(locale, 'gating.rule.previewTitle'), description, COLORS.info)],
    [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.Button,
            style: ButtonStyle.Success,
            label: t(locale, 'gating.rule.apply'),
            custom_id: ids.apply,
          },
          {
            type: ComponentType.Button,
            style: ButtonStyle.Secondary,
            label: t(locale, 'gating.rule.cancel'),
            custom_id: ids.cancel,
          },
        ],
      },
    ],
    { ...ctx, stale: undefined },
  );
}

/** Cancel on a preview: nothing stored. */
export function renderRuleCancelled(ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  return plain(
    embed(t(locale, 'gating.rule.cancelledTitle'), t(locale, 'gating.rule.nothingStored'), COLORS.neutral),
    ctx,
  );
}

/** `remove`: what was removed, or why nothing was (`not_set_up` is the caller's). */
export function renderRuleRemove(
  result: Exclude<RuleRemoveResult, { kind: 'not_set_up' }>,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  if (result.kind === 'refused') return refused(result.refusal, names, ctx);
  if (result.kind === 'not_found') {
    return plain(
      embed(t(locale, 'gating.rule.unchangedTitle'), t(locale, 'gating.rule.notFound'), COLORS.neutral),
      ctx,
    );
  }
  const text = t(locale, 'gating.rule.removed', {
    condition: conditionText(result.condition, locale),
    role: roleLabel(result.roleId, names, locale),
  });
  return plain(embed(t(locale, 'gating.rule.removedTitle'), text, COLORS.success), ctx);
}

/** `list`: one line per role rule. */
export function renderRuleList(
  rules: readonly RoleRule[],
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  if (rules.length === 0) {
    return plain(
      embed(t(locale, 'gating.rule.listTitle'), t(locale, 'gating.rule.listEmpty'), COLORS.neutral),
      ctx,
    );
  }
  const lines = rules.map((r) => `• ${ruleText(r, names, locale)}`);
  const description = `${t(locale, 'gating.rule.listIntro')}\n\n${joinLinesWithin(lines, DISCORD_LIMITS.description - 400)}`;
  return plain(embed(t(locale, 'gating.rule.listTitle'), description, COLORS.info), ctx);
}
