/**
 * `/gating rule add|remove|list`: the subcommand group of commands/gating.ts, kept apart from it, with
 * its buttons (Apply and Cancel on a preview) and its suggestions (kinds, and the guild's conditions).
 */
import {
  type APIApplicationCommandOptionChoice,
  type APIApplicationCommandSubcommandGroupOption,
  ApplicationCommandOptionType,
} from 'discord-api-types/v10';
import type {
  CommandContext,
  CommandOptions,
  ComponentHandler,
  OptionSuggester,
} from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import { answeringAuthority, gatingAccess, guildNames, invokerOf } from '../src/discord/gatingContext.ts';
import { holdingValueChoices } from '../src/gating/holdings/holdingSuggestions.ts';
import { holdsRight } from '../src/gating/roles/authority.ts';
import type { RuleProposal } from '../src/gating/ruleGating.ts';
import {
  conditionKey,
  conditionOfKey,
  MAX_RULE_VALUE,
  type RoleRule,
  RULE_KINDS,
  RULE_MATCHES,
  type RuleMatch,
} from '../src/gating/rules/roleRules.ts';
import { loadRoleRules } from '../src/gating/rules/ruleReads.ts';
import type { GatingService } from '../src/gating/service.ts';
import { described, named } from '../src/i18n/index.ts';
import { renderNotSetUp } from '../src/render/gatingGuild.ts';
import { type GuildNames, NO_NAMES } from '../src/render/gatingLabels.ts';
import {
  renderRuleAdd,
  renderRuleCancelled,
  renderRuleList,
  renderRuleRemove,
  ruleChoiceName,
  ruleKindChoice,
} from '../src/render/gatingRule.ts';
import type { MessagePayload } from '../src/render/types.ts';

const { String: Text, Role, Subcommand, SubcommandGroup } = ApplicationCommandOptionType;
const MAX_CHOICES = 25;
/** Discord refuses a whole answer whose choice carries a longer value. */
const CHOICE_VALUE_MAX = 100;

export const RULE_GROUP: APIApplicationCommandSubcommandGroupOption = {
  type: SubcommandGroup,
  name: 'rule',
  ...described('commands.gating.rule.description'),
  options: [
    {
      type: Subcommand,
      name: 'add',
      ...described('commands.gating.rule.add.description'),
      options: [
        { type: Role, name: 'role', ...described('commands.gating.rule.add.options.role'), required: true },
        {
          type: Text,
          name: 'kind',
          ...described('commands.gating.rule.add.options.kind'),
          required: true,
          autocomplete: true,
          max_length: 20,
        },
        {
          type: Text,
          name: 'value',
          ...described('commands.gating.rule.add.options.value'),
          required: true,
          autocomplete: true,
          max_length: MAX_RULE_VALUE,
        },
        {
          type: Text,
          name: 'match',
          ...described('commands.gating.rule.add.options.match'),
          required: false,
          choices: RULE_MATCHES.map((match) => ({ ...named(`gating.rule.match.${match}`), value: match })),
        },
      ],
    },
    {
      type: Subcommand,
      name: 'remove',
      ...described('commands.gating.rule.remove.description'),
      options: [
        {
          type: Text,
          name: 'rule',
          ...described('commands.gating.rule.remove.options.rule'),
          required: true,
          autocomplete: true,
          // A role id and an ERC-1155 condition's key run past a choice's 100 characters: typed in full.
          max_length: 200,
        },
      ],
    },
    { type: Subcommand, name: 'list', ...described('commands.gating.rule.list.description') },
  ],
};

const text = (options: CommandOptions, name: string): string => {
  const value = options[name];
  return typeof value === 'string' ? value : '';
};

const matchOf = (value: string): RuleMatch | null =>
  (RULE_MATCHES as readonly string[]).includes(value) ? (value as RuleMatch) : null;

/** Apply and Cancel: Apply carries the whole proposal, so it works after a restart or on another process. */
function buttonIds(proposal: RuleProposal): { apply: string; cancel: string } {
  return {
    apply: encodeCustomId(
      'gating',
      'ruleApply',
      proposal.roleId,
      conditionKey(proposal.condition),
      proposal.match ?? '-',
    ),
    cancel: encodeCustomId('gating', 'ruleCancel'),
  };
}

/** `/gating rule …` for a moderator who passed `gatingAccess`. */
export async function answerRule(
  service: GatingService,
  guildId: string,
  options: CommandOptions,
  ctx: CommandContext,
): Promise<MessagePayload> {
  if (options.subcommand === 'list') {
    return renderRuleList(await service.rules.list(guildId), guildNames(ctx), ctx.render);
  }
  if (options.subcommand === 'remove') {
    const result = await service.rules.remove(guildId, text(options, 'rule'), ctx.userId);
    if (result.kind === 'not_set_up') return renderNotSetUp(ctx.render);
    return renderRuleRemove(result, guildNames(ctx), ctx.render);
  }
  const typed = {
    roleId: text(options, 'role'),
    kind: text(options, 'kind'),
    value: text(options, 'value'),
    match: matchOf(text(options, 'match')),
  };
  const result = await service.rules.preview(guildId, typed, ctx.userId);
  if (result.kind === 'not_set_up') return renderNotSetUp(ctx.render);
  const ids = result.kind === 'preview' ? buttonIds(result.proposal) : { apply: '', cancel: '' };
  return renderRuleAdd(result, ids, guildNames(ctx), ctx.render);
}

/** Apply on a preview: everything is checked again now (rights, hierarchy, the value), then stored. */
const apply: ComponentHandler = async ([roleId = '', key = '', match = ''], _values, ctx) => {
  const access = gatingAccess(ctx, { moderator: true });
  if (!access.ok) return access.answer;
  const condition = conditionOfKey(key);
  if (!condition) return renderRuleRemove({ kind: 'not_found' }, guildNames(ctx), ctx.render);
  const proposal: RuleProposal = { roleId, condition, match: matchOf(match) };
  const result = await access.service.rules.apply(access.guildId, proposal, ctx.userId);
  if (result.kind === 'not_set_up') return renderNotSetUp(ctx.render);
  return renderRuleAdd(result, buttonIds(proposal), guildNames(ctx), ctx.render);
};

export const RULE_COMPONENTS: Record<string, ComponentHandler> = {
  ruleApply: apply,
  ruleCancel: async (_args, _values, ctx) => renderRuleCancelled(ctx.render),
};

const matching = (typed: string) => {
  const needle = typed.trim().toLowerCase();
  return (choice: APIApplicationCommandOptionChoice<string>) =>
    needle === '' ||
    choice.value.toLowerCase().includes(needle) ||
    choice.name.toLowerCase().includes(needle);
};

/** The kinds, with what each checks, in the member's language; holdings kinds only with a chain configured. */
const suggestKinds: OptionSuggester = async (typed, _options, ctx) =>
  RULE_KINDS.filter((kind) => (kind !== 'token' && kind !== 'nft') || ctx.deps.gating?.rules.chains.length)
    .map((kind) => ruleKindChoice(kind, ctx.render.locale))
    .filter(matching(typed))
    .slice(0, MAX_CHOICES);

/** The guild's role rules: from the service where gating runs, else (a web replica) from the shared store. */
function rulesOf(ctx: CommandContext, guildId: string): Promise<RoleRule[]> {
  if (ctx.deps.gating) return ctx.deps.gating.rules.list(guildId);
  return ctx.deps.sharedGating ? loadRoleRules(ctx.deps.sharedGating, guildId) : Promise.resolve([]);
}

/**
 * The guild's conditions, by role name, for a moderator only (others are told nothing). Suggestions
 * cannot be handed to the gateway worker: a web replica decides from the snapshot the gateway side keeps.
 */
const suggestRules: OptionSuggester = async (typed, _options, ctx) => {
  const guildId = ctx.guildId;
  const invoker = invokerOf(ctx);
  if (!guildId || !invoker) return [];
  try {
    const authority = await answeringAuthority(ctx);
    if (!authority || !holdsRight(authority, invoker, 'moderate')) return [];
    const rules = await rulesOf(ctx, guildId);
    const names: GuildNames = {
      ...NO_NAMES,
      roles: new Map([...authority.roles.values()].map((r) => [r.id, r.name])),
    };
    return rules
      .flatMap((rule) =>
        rule.conditions.map((c) => ({
          name: ruleChoiceName(rule.roleId, c, names, ctx.render.locale),
          value: `${rule.roleId}:${conditionKey(c)}`,
        })),
      )
      .filter((choice) => choice.value.length <= CHOICE_VALUE_MAX && matching(typed)(choice))
      .slice(0, MAX_CHOICES);
  } catch (error) {
    ctx.deps.logger.warn({ err: error, guildId }, 'role rule suggestions failed');
    return [];
  }
};

/** A holdings value: the configured chains and the contracts the server's rules already use. */
const suggestValues: OptionSuggester = async (typed, options, ctx) => {
  if (!ctx.guildId) return [];
  const kind = text(options, 'kind').trim().toLowerCase();
  const chains = ctx.deps.gating?.rules.chains ?? [];
  return holdingValueChoices(kind, typed, chains, await rulesOf(ctx, ctx.guildId).catch(() => []));
};

export const RULE_SUGGEST: Record<string, OptionSuggester> = {
  kind: suggestKinds,
  rule: suggestRules,
  value: suggestValues,
};
