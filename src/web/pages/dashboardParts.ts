/**
 * What the dashboard's pages share: names of roles and channels (admin-chosen text, always escaped),
 * times in UTC in the page's language, notices, the words of rule conditions and refusals (the same
 * sentences `/gating` uses), and the answer when the owning process gave none. Pure.
 */
import type { DashboardAnswer } from '../../gating/dashboard/types.ts';
import type { RoleProblem } from '../../gating/roles/hierarchy.ts';
import type { RuleRefusal } from '../../gating/ruleGating.ts';
import type { RoleRule } from '../../gating/rules/roleRules.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import { type NumberFormatter, numberFormat } from '../../i18n/numbers.ts';
import { roleBeyondText, roleProblemText } from '../../render/gatingNotices.ts';
import { conditionText, ruleKindText } from '../../render/gatingRule.ts';
import { holdingRefusalText } from '../../render/holdingRules.ts';
import type { GuildSettings } from '../../store/types.ts';
import { escapeHtml, text } from './words.ts';

/** A server's role and channel names (from the snapshot the gateway side keeps). */
export interface DashboardNames {
  roles: ReadonlyMap<string, string>;
  channels: ReadonlyMap<string, string>;
}

/** A role by name, or its id in code when the server no longer has it. Escaped. */
export function roleHtml(names: DashboardNames, roleId: string): string {
  const name = names.roles.get(roleId);
  return name === undefined ? `<code>${escapeHtml(roleId)}</code>` : escapeHtml(name);
}

/** A channel as `#name`, or its id in code. Escaped. */
export function channelHtml(names: DashboardNames, channelId: string): string {
  const name = names.channels.get(channelId);
  return name === undefined ? `<code>${escapeHtml(channelId)}</code>` : `#${escapeHtml(name)}`;
}

/** A Discord user id, in code. */
export function memberHtml(userId: string | null): string {
  return userId === null ? '' : `<code>${escapeHtml(userId)}</code>`;
}

/**
 * The page language's number, day and time formats. Each Intl object holds native (ICU) memory that
 * the allocator keeps after it is collected (about 14 KiB a pair here): the caller makes these once per
 * locale and reuses them, rather than every page making dozens (RSS grew to 4 GiB in the benchmark).
 */
export interface Formats {
  number: NumberFormatter;
  day: Intl.DateTimeFormat;
  time: Intl.DateTimeFormat;
}

export function createFormats(locale: string): Formats {
  return {
    number: numberFormat(locale),
    day: new Intl.DateTimeFormat(locale, { month: 'short', day: 'numeric', timeZone: 'UTC' }),
    time: new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' }),
  };
}

/** A moment in UTC in the page's language (e.g. "Nov 26, 2026, 14:05 UTC"). Escaped. */
export function timeHtml(ms: number, formats: Formats): string {
  const date = new Date(ms);
  return `<time datetime="${date.toISOString()}">${escapeHtml(formats.time.format(date))} UTC</time>`;
}

/** A day (whole UTC days since the epoch) as a short date in the page's language. */
export function dayText(day: number, formats: Formats): string {
  return formats.day.format(new Date(day * 86_400_000));
}

export type NoticeKind = 'info' | 'success' | 'warn' | 'error';

/** A notice: `role=status` for news, `role=alert` for errors. `html` is escaped already. */
export function notice(kind: NoticeKind, html: string): string {
  const role = kind === 'error' ? 'alert' : 'status';
  return `<div class="notice ${kind === 'info' ? '' : kind}" role="${role}">${html}</div>`;
}

/** A list of role problems (the hierarchy's, or the rights over roles), each its own sentence. */
export function problemsHtml(problems: readonly RoleProblem[], locale: string, beyond = false): string {
  return `<ul>${problems
    .map((p) => `<li>${escapeHtml(beyond ? roleBeyondText(p, locale) : roleProblemText(p, locale))}</li>`)
    .join('')}</ul>`;
}

/** A rule's match and conditions, in words: "all of: humanity score ≥ 30; a proven ens identity". */
export function ruleConditionsText(rule: RoleRule, locale: string): string {
  return t(locale, 'web.dashboard.rules.line', {
    match: t(locale, rule.match === 'any' ? 'gating.rule.match.any' : 'gating.rule.match.all'),
    conditions: rule.conditions.map((c) => conditionText(c, locale)).join('; '),
  });
}

/** Why a rule was refused: the same sentences as `/gating rule add`. Escaped. */
export function ruleRefusalHtml(refusal: RuleRefusal, names: DashboardNames, locale: string): string {
  switch (refusal.code) {
    case 'bad_condition':
      if (refusal.refusal.code === 'bad_holding')
        return escapeHtml(holdingRefusalText(refusal.refusal, locale));
      return escapeHtml(
        refusal.refusal.code === 'unknown_kind'
          ? t(locale, 'gating.rule.badKind')
          : t(locale, 'gating.rule.badValue', { hint: ruleKindText(refusal.refusal.kind, locale) }),
      );
    case 'gated_role':
      return escapeHtml(
        t(locale, 'gating.rule.gatedRole', { role: names.roles.get(refusal.roleId) ?? refusal.roleId }),
      );
    case 'too_many':
      return escapeHtml(t(locale, 'gating.rule.tooMany', { max: refusal.max }));
    case 'role_problems':
      return `${text(locale, 'gating.rule.nothingStored')}${problemsHtml(refusal.problems, locale)}`;
    case 'chain_not_configured':
    case 'not_a_token':
    case 'chain_failed':
      return escapeHtml(holdingRefusalText(refusal, locale));
  }
}

/**
 * The notice for an answer that is not a result of the request itself: the owning process did not
 * answer in time, refused for rights, is not running the server, or failed. Undefined for a real result.
 */
export function answerProblem(
  answer: DashboardAnswer,
  locale: string,
  waitSeconds: number,
): string | undefined {
  if (answer.kind === 'timeout')
    return notice('warn', text(locale, 'web.dashboard.timeout', { seconds: waitSeconds }));
  switch (answer.result.kind) {
    case 'no_rights':
      return notice('error', text(locale, 'web.dashboard.noRights'));
    case 'unavailable':
      return notice('error', text(locale, 'web.dashboard.unavailable'));
    case 'failed':
      return notice('error', text(locale, 'web.dashboard.failed'));
    default:
      return undefined;
  }
}

/** The setup of `/gating setup` (roles, score, ages, log channel), or that there is none. */
export function setupHtml(
  s: GuildSettings | null,
  names: DashboardNames,
  locale: string,
  formats: Formats,
): string {
  const title = `<h2 id="setup">${text(locale, 'web.dashboard.setup.title')}</h2>`;
  if (!s) return `${title}<p>${text(locale, 'web.dashboard.setup.none')}</p>`;
  const none = text(locale, 'web.dashboard.none');
  const days = (n: number | null | undefined) =>
    n ? text(locale, 'web.dashboard.setup.days', { days: n }) : none;
  const pair = (key: MessageKey, value: string) => `<dt>${text(locale, key)}</dt><dd>${value}</dd>`;
  return (
    title +
    (s.enabled ? '' : `<p class="notice warn">${text(locale, 'web.dashboard.setup.off')}</p>`) +
    '<dl class="pairs">' +
    pair('web.dashboard.setup.humanRole', roleHtml(names, s.humanRoleId)) +
    pair(
      'web.dashboard.setup.minScore',
      s.minScore === null ? none : escapeHtml(formats.number.format(s.minScore)),
    ) +
    pair('web.dashboard.setup.spamRole', s.spamRoleId ? roleHtml(names, s.spamRoleId) : none) +
    pair('web.dashboard.setup.riskyRole', s.riskyRoleId ? roleHtml(names, s.riskyRoleId) : none) +
    pair(
      'web.dashboard.setup.spamRemovesHuman',
      text(locale, s.spamRemovesHuman ? 'web.dashboard.yes' : 'web.dashboard.no'),
    ) +
    pair('web.dashboard.setup.accountAge', days(s.minAccountAgeDays)) +
    pair('web.dashboard.setup.joinAge', days(s.minJoinAgeDays)) +
    pair('web.dashboard.setup.logChannel', s.logChannelId ? channelHtml(names, s.logChannelId) : none) +
    '</dl>'
  );
}
