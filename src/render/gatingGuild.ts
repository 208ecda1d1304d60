/**
 * Gating messages about a server: `/gating setup`, rules, disable, status, preview and whole-server
 * re-check, and the notices when a gating command can't run. Pure: data in, payload out.
 */
import type { APIEmbedField } from 'discord-api-types/v10';
import type { RoleProblem } from '../gating/roles/hierarchy.ts';
import type { DisableResult, GuildPreview, GuildStatus, RecheckResult } from '../gating/types.ts';
import { type MessageKey, t } from '../i18n/index.ts';
import type { GuildSettings } from '../store/types.ts';
import { DISCORD_LIMITS, discordTime, escapeText, truncate } from '../text/safety.ts';
import { formatNumber, joinLinesWithin } from './format.ts';
import {
  channelLabel,
  embed,
  type GuildNames,
  LIST_MAX,
  memberText,
  plain,
  REASON_MAX,
  reasonText,
  roleLabel,
  roleList,
} from './gatingLabels.ts';
import { roleBeyondText, roleProblemText } from './gatingNotices.ts';
import { unboundLinksField } from './signing.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Each role problem on a line of its own, with its fix. */
export function problemLines(problems: RoleProblem[], locale: string): string[] {
  return problems.map(
    (p) => `⚠️ ${escapeText(truncate(roleProblemText(p, locale), REASON_MAX)).replace(/\n+/g, ' ')}`,
  );
}

function lastSync(at: number | null, locale: string): string {
  return at === null ? t(locale, 'gating.rules.never') : discordTime(at / 1000, 'R');
}

function rulesFields(settings: GuildSettings, names: GuildNames, ctx: RenderContext): APIEmbedField[] {
  const { locale } = ctx;
  const role = roleLabel(settings.humanRoleId, names, locale);
  const human =
    settings.minScore === null
      ? t(locale, 'gating.rules.human', { role })
      : t(locale, 'gating.rules.humanOrScore', { role, score: settings.minScore });
  const ages = [
    settings.minAccountAgeDays
      ? t(locale, 'gating.accountAge.rulesAccount', { days: settings.minAccountAgeDays })
      : '',
    settings.minJoinAgeDays
      ? t(locale, 'gating.accountAge.rulesJoin', { days: settings.minJoinAgeDays })
      : '',
  ].filter(Boolean);
  const flags = [
    settings.spamRoleId
      ? t(locale, 'gating.rules.spam', { role: roleLabel(settings.spamRoleId, names, locale) })
      : t(locale, 'gating.rules.spamNone'),
    settings.riskyRoleId
      ? t(locale, 'gating.rules.risky', { role: roleLabel(settings.riskyRoleId, names, locale) })
      : t(locale, 'gating.rules.riskyNone'),
    t(locale, settings.spamRemovesHuman ? 'gating.rules.spamRemovesHuman' : 'gating.rules.spamKeepsHuman'),
  ];
  const log = settings.logChannelId
    ? channelLabel(settings.logChannelId, names, locale)
    : t(locale, 'gating.rules.noLogChannel');
  return [
    { name: t(locale, 'gating.rules.humanRole'), value: [human, ...ages].join('\n') },
    { name: t(locale, 'gating.rules.flags'), value: flags.join('\n') },
    { name: t(locale, 'gating.rules.logChannel'), value: log, inline: true },
    {
      name: t(locale, 'gating.rules.status'),
      value: t(locale, settings.enabled ? 'gating.rules.on' : 'gating.rules.off'),
      inline: true,
    },
    {
      name: t(locale, 'gating.rules.lastSync'),
      value: lastSync(settings.lastFullSyncAt, locale),
      inline: true,
    },
  ];
}

/** `/gating setup`: saved (with the rules), or refused with every role problem and its fix. */
export function renderSetupResult(
  result: { settings: GuildSettings | null; problems: RoleProblem[] },
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  if (!result.settings) {
    const lines = problemLines(result.problems, locale);
    const description = `${t(locale, 'gating.setup.nothingSaved')}\n${joinLinesWithin(lines, LIST_MAX * 3)}`;
    return plain(embed(t(locale, 'gating.setup.refusedTitle'), description, COLORS.danger), ctx);
  }
  const warnings = problemLines(result.problems, locale);
  const description = [
    t(locale, 'gating.setup.on'),
    warnings.length > 0 ? `\n${joinLinesWithin(warnings, LIST_MAX)}` : '',
  ].join('');
  return plain(
    embed(
      t(locale, 'gating.setup.title'),
      description,
      COLORS.success,
      rulesFields(result.settings, names, ctx),
    ),
    ctx,
  );
}

/** `/gating rules`. */
export function renderRules(
  settings: GuildSettings | undefined,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  if (!settings) return renderNotSetUp(ctx);
  const description = t(ctx.locale, settings.enabled ? 'gating.rules.enabled' : 'gating.rules.disabled');
  return plain(
    embed(
      t(ctx.locale, 'gating.rules.title'),
      description,
      settings.enabled ? COLORS.info : COLORS.neutral,
      rulesFields(settings, names, ctx),
    ),
    ctx,
  );
}

/** `/gating disable`: off now, already off (or never set up), or refused with each role beyond the invoker. */
export function renderDisabled(result: DisableResult, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  switch (result.kind) {
    case 'disabled':
      return notice(ctx, 'gating.disable.title', 'gating.disable.description', COLORS.neutral);
    case 'refused':
      return renderGatedRolesRefused('disable', result.problems, ctx);
    default:
      return plain(
        embed(t(locale, 'gating.disable.alreadyTitle'), t(locale, 'gating.disable.nothing'), COLORS.neutral),
        ctx,
      );
  }
}

const GATED_ROLES_REFUSED = {
  disable: ['gating.disable.refusedTitle', 'gating.disable.refused'],
  confirmRemovals: ['gating.recheck.confirmRefusedTitle', 'gating.recheck.confirmRefused'],
  setup: ['gating.setup.refusedTitle', 'gating.setup.replaceRefused'],
} as const;

/**
 * Switching gating off, releasing held removals, or a setup that replaces or drops gated roles, refused:
 * the invoker could not grant or take these gated roles by hand, each named on a line. Nothing changed.
 */
export function renderGatedRolesRefused(
  action: keyof typeof GATED_ROLES_REFUSED,
  problems: readonly RoleProblem[],
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const [title, intro] = GATED_ROLES_REFUSED[action];
  const lines = problems.map(
    (p) => `⚠️ ${escapeText(truncate(roleBeyondText(p, locale), REASON_MAX)).replace(/\n+/g, ' ')}`,
  );
  const description = `${t(locale, intro)}\n${joinLinesWithin(lines, LIST_MAX * 3)}`;
  return plain(embed(t(locale, title), description, COLORS.warning), ctx);
}

export type GuildRecheckOutcome =
  | ({ kind: 'done' } & RecheckResult)
  | { kind: 'running'; linkedMembers: number };

/** `/gating recheck` for the whole server: the counts, or a note that it goes on in the background. */
export function renderGuildRecheck(outcome: GuildRecheckOutcome, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  if (outcome.kind === 'running') {
    return plain(
      embed(
        t(locale, 'gating.recheck.startedTitle'),
        t(locale, 'gating.recheck.started', { count: outcome.linkedMembers }),
        COLORS.info,
      ),
      ctx,
    );
  }
  if (outcome.elsewhere) {
    return plain(
      embed(t(locale, 'gating.recheck.elsewhereTitle'), t(locale, 'gating.recheck.elsewhere'), COLORS.info),
      ctx,
    );
  }
  const count = (key: MessageKey, value: number) => (value > 0 ? t(locale, key, { count: value }) : '');
  const lines = [
    t(locale, 'gating.recheck.checked', { count: outcome.members }),
    t(locale, 'gating.recheck.changes', { count: outcome.changes }),
    count('gating.recheck.unlinked', outcome.unlinked),
    count('gating.recheck.failures', outcome.failures),
    count('gating.recheck.pendingRemovals', outcome.pendingRemovals),
    count('gating.recheck.heldRemovals', outcome.heldRemovals),
  ];
  return plain(
    embed(
      t(locale, 'gating.recheck.title'),
      lines.filter(Boolean).join('\n'),
      outcome.failures > 0 ? COLORS.warning : COLORS.success,
    ),
    ctx,
  );
}

/** `/gating preview`: a dry run for the whole server. */
export function renderPreview(preview: GuildPreview, names: GuildNames, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  const lines = [
    t(locale, 'gating.preview.members', { count: preview.members }),
    t(locale, 'gating.preview.changes', { add: preview.addCount, remove: preview.removeCount }),
    preview.unknownCount > 0 ? t(locale, 'gating.preview.failures', { count: preview.unknownCount }) : '',
    t(locale, 'gating.preview.nothingChanged'),
  ];
  const fields = preview.sample.slice(0, 10).map((entry): APIEmbedField => {
    const changes = [
      ...entry.add.map((roleId) => `➕ ${roleLabel(roleId, names, locale)}`),
      ...entry.remove.map((roleId) => `➖ ${roleLabel(roleId, names, locale)}`),
    ];
    const because = entry.because.slice(0, 3).map((b) => `↳ ${reasonText(b)}`);
    return {
      name:
        memberText(entry.userId, names, entry.username) ??
        t(locale, 'gating.preview.member', { id: entry.userId }),
      value: joinLinesWithin([...changes, ...because], DISCORD_LIMITS.fieldValue),
    };
  });
  const color = preview.addCount + preview.removeCount > 0 ? COLORS.warning : COLORS.neutral;
  return plain(
    embed(t(locale, 'gating.preview.title'), lines.filter(Boolean).join('\n'), color, fields),
    ctx,
  );
}

/** `/gating status`: permissions, role problems, intents, last sync and the queue. */
export function renderStatus(status: GuildStatus, names: GuildNames, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  const n = (value: number) => formatNumber(value, locale);
  const ok = (good: boolean, yes: MessageKey, no: MessageKey) =>
    good ? `✅ ${t(locale, yes)}` : `❌ ${t(locale, no)}`;
  const problems = problemLines(status.problems, locale);
  const gatingState = t(
    locale,
    !status.settings ? 'gating.status.notSetUp' : status.enabled ? 'gating.rules.on' : 'gating.status.off',
  );
  const fields: APIEmbedField[] = [
    { name: t(locale, 'gating.status.gating'), value: gatingState },
    {
      name: t(locale, 'gating.status.permissions'),
      value: ok(status.manageRoles, 'gating.status.manageRoles', 'gating.status.manageRolesMissing'),
    },
    {
      name: t(locale, 'gating.status.intents'),
      value: ok(status.guildMembersIntent, 'gating.status.membersIntent', 'gating.status.membersIntentOff'),
    },
    {
      name: t(locale, 'gating.status.hierarchy'),
      value:
        problems.length > 0
          ? joinLinesWithin(problems, DISCORD_LIMITS.fieldValue)
          : t(locale, 'gating.status.hierarchyOk'),
    },
    {
      name: t(locale, 'gating.rules.lastSync'),
      value: lastSync(status.lastFullSyncAt, locale),
      inline: true,
    },
    { name: t(locale, 'gating.status.queue'), value: n(status.queueLength), inline: true },
    { name: t(locale, 'gating.status.linkedMembers'), value: n(status.linkedMembers), inline: true },
  ];
  if (status.blockedRoleIds.length > 0) {
    fields.push({
      name: t(locale, 'gating.status.blockedTitle'),
      value: t(locale, 'gating.status.blocked', { roles: roleList(status.blockedRoleIds, names, locale) }),
    });
  }
  if (status.heldRemovals > 0) {
    fields.push({
      name: t(locale, 'gating.status.heldTitle'),
      value: t(locale, 'gating.status.held', { count: status.heldRemovals }),
    });
  }
  if (!status.signingLinksBound) fields.push(unboundLinksField(locale));
  const chains = status.failingChains ?? [];
  if (chains.length > 0) {
    const value = t(locale, 'gating.status.chainsFailing', { chains: chains.join(', ') });
    fields.push({ name: t(locale, 'gating.status.chainsFailingTitle'), value });
  }
  if (status.settings) fields.push(...rulesFields(status.settings, names, ctx).slice(0, 2));
  const healthy =
    status.signingLinksBound &&
    status.manageRoles &&
    status.guildMembersIntent &&
    status.problems.length === 0 &&
    status.blockedRoleIds.length === 0 &&
    status.heldRemovals === 0 &&
    chains.length === 0;
  return plain(
    embed(
      t(locale, 'gating.status.title'),
      t(locale, healthy ? 'gating.status.healthy' : 'gating.status.attention'),
      healthy ? COLORS.success : COLORS.warning,
      fields,
    ),
    ctx,
  );
}

function notice(
  ctx: RenderContext,
  title: MessageKey,
  description: MessageKey,
  color: number,
): MessagePayload {
  return plain(embed(t(ctx.locale, title), t(ctx.locale, description), color), ctx);
}

/** A member without Manage Roles ran a moderator command. */
export function renderNeedsManageRoles(ctx: RenderContext): MessagePayload {
  return notice(ctx, 'gating.needsManageRoles.title', 'gating.needsManageRoles.description', COLORS.warning);
}

/** A moderator's command or click by a member whose timeout takes their rights (as in Discord). */
export function renderTimedOut(ctx: RenderContext): MessagePayload {
  return notice(ctx, 'gating.timedOut.title', 'gating.timedOut.description', COLORS.warning);
}

/** A gating command outside a server. */
export function renderGuildOnly(ctx: RenderContext): MessagePayload {
  return notice(ctx, 'gating.guildOnly.title', 'gating.guildOnly.description', COLORS.neutral);
}

/** The deployment runs without the gating module. */
export function renderGatingUnavailable(ctx: RenderContext): MessagePayload {
  return notice(ctx, 'gating.unavailable.title', 'gating.unavailable.description', COLORS.neutral);
}

/** The server has not run `/gating setup`, or turned gating off. */
export function renderNotSetUp(ctx: RenderContext): MessagePayload {
  return notice(ctx, 'gating.notSetUp.title', 'gating.notSetUp.description', COLORS.neutral);
}
