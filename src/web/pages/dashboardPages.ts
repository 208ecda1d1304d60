/**
 * The dashboard's smaller pages: the server list, the pages that say why nothing is shown (signed out,
 * not yours, refused, Discord down, a failed sign-in), Exemptions, Held removals and Health. Pure.
 */
import type { DashboardAnswer, DashboardResult } from '../../gating/dashboard/types.ts';
import type { ExemptResult } from '../../gating/exemptionGating.ts';
import type { GuildStatus } from '../../gating/types.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import type { Exemption, GuildListing, PendingLoss } from '../../store/types.ts';
import { csrfField, type DashboardFrame, dashboardDocument } from './dashboardDocument.ts';
import {
  answerProblem,
  channelHtml,
  type DashboardNames,
  memberHtml,
  notice,
  problemsHtml,
  roleHtml,
  timeHtml,
} from './dashboardParts.ts';
import { cyclePairs, cycleProblem } from './recheckCycleHtml.ts';
import { escapeHtml, text } from './words.ts';

type GuildFrame = DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };

const initials = (name: string) =>
  name
    .split(/\s+/)
    .filter(Boolean)
    .slice(0, 2)
    .map((w) => [...w][0] ?? '')
    .join('')
    .toUpperCase() || '?';

/** The servers the account may see, each linking to its overview. */
export function renderServerList(
  frame: DashboardFrame,
  servers: readonly (GuildListing & { iconUrl: string | null })[],
  cspNonce: string,
): string {
  const { locale, root } = frame;
  const items = servers
    .map((s) => {
      const name = s.name ?? s.guildId;
      const icon = s.iconUrl
        ? `<img class="icon" src="${escapeHtml(s.iconUrl)}" alt="" width="40" height="40">`
        : `<span class="icon" aria-hidden="true">${escapeHtml(initials(name))}</span>`;
      return `<li><a href="${escapeHtml(`${root}/${s.guildId}`)}">${icon}<span>${escapeHtml(name)}</span></a></li>`;
    })
    .join('');
  const body =
    `<p>${text(locale, 'web.dashboard.list.intro')}</p>` +
    (servers.length === 0
      ? `<p class="notice">${text(locale, 'web.dashboard.list.empty')}</p>`
      : `<ul class="servers">${items}</ul>`);
  return dashboardDocument(frame, t(locale, 'web.dashboard.list.title'), body, cspNonce);
}

/** Why a page shows nothing: each with a title, a sentence and, where it helps, a way on. */
export type DashboardMessage =
  | 'signedOut'
  | 'notFound'
  | 'forbidden'
  | 'discordDown'
  | 'ended'
  | 'denied'
  | 'signInFailed'
  | 'badState'
  | 'tooManySignIns'
  | 'signedOutDone'
  | 'tooManyChanges'
  | 'timedOut'
  | 'noAnswer';

const MESSAGES: Record<DashboardMessage, [MessageKey, MessageKey]> = {
  signedOut: ['web.dashboard.error.signedOutTitle', 'web.dashboard.error.signedOut'],
  notFound: ['web.dashboard.error.notFoundTitle', 'web.dashboard.error.notFound'],
  forbidden: ['web.dashboard.error.forbiddenTitle', 'web.dashboard.error.forbidden'],
  discordDown: ['web.dashboard.error.discordDownTitle', 'web.dashboard.error.discordDown'],
  ended: ['web.dashboard.error.endedTitle', 'web.dashboard.error.ended'],
  denied: ['web.signIn.title.denied', 'web.dashboard.signIn.denied'],
  signInFailed: ['web.signIn.title.failed', 'web.dashboard.signIn.failed'],
  badState: ['web.signIn.title.badState', 'web.dashboard.signIn.badState'],
  tooManySignIns: ['web.signIn.title.tooMany', 'web.linkedRole.tooManySignIns'],
  signedOutDone: ['web.dashboard.signedOutTitle', 'web.dashboard.signedOut'],
  tooManyChanges: ['web.dashboard.error.tooManyTitle', 'web.dashboard.error.tooMany'],
  timedOut: ['web.dashboard.error.timedOutTitle', 'web.dashboard.error.timedOut'],
  noAnswer: ['web.dashboard.error.noAnswerTitle', 'web.dashboard.error.noAnswer'],
};

/** A page that says why nothing is shown; `signIn` links to a fresh sign-in (returning to `next`). */
export function renderMessage(
  frame: DashboardFrame,
  message: DashboardMessage,
  cspNonce: string,
  o: { signIn?: string; seconds?: number } = {},
): string {
  const { locale } = frame;
  const [title, sentence] = MESSAGES[message];
  const link = o.signIn
    ? `<p><a class="button" href="${escapeHtml(o.signIn)}">${text(locale, 'web.dashboard.signIn')}</a></p>`
    : '';
  const body = `<p>${text(locale, sentence, { seconds: o.seconds ?? 60 })}</p>${link}`;
  return dashboardDocument(frame, t(locale, title), body, cspNonce);
}

const EXEMPT_TEXT = {
  member: 'web.dashboard.exemptions.member',
  role: 'web.dashboard.exemptions.role',
} as const;

export interface ExemptionsPage {
  frame: GuildFrame;
  names: DashboardNames;
  exemptions: Exemption[];
  roles: { id: string; name: string }[];
  notice?: string;
  form?: { member: string; roleId: string };
}

/** The notice for an exemption's change. */
export function exemptOutcome(
  answer: DashboardAnswer,
  names: DashboardNames,
  locale: string,
  waitSeconds: number,
): string {
  const problem = answerProblem(answer, locale, waitSeconds);
  if (problem !== undefined || answer.kind !== 'answered') return problem ?? '';
  const result: DashboardResult = answer.result;
  if (result.kind !== 'exempt') return notice('error', text(locale, 'web.dashboard.failed'));
  return exemptNotice(result.result, names, locale);
}

function targetName(names: DashboardNames, kind: 'member' | 'role', id: string): string {
  return kind === 'role' ? (names.roles.get(id) ?? id) : id;
}

function exemptNotice(result: ExemptResult, names: DashboardNames, locale: string): string {
  switch (result.kind) {
    case 'not_set_up':
      return notice('error', text(locale, 'web.dashboard.rules.notSetUp'));
    case 'refused': {
      const r = result.refusal;
      if (r.code === 'everyone') return notice('error', text(locale, 'gating.exempt.refusedEveryone'));
      const key =
        r.code === 'gated_role_above' ? 'gating.exempt.refusedGatedRole' : 'gating.exempt.refusedTargetRole';
      return notice('error', text(locale, key, { role: r.roleName }));
    }
    case 'added':
    case 'removed': {
      const e = result.exemption;
      if (result.kind === 'added' && e) {
        const target = targetName(names, e.kind, e.targetId);
        if (!result.changed)
          return notice('info', text(locale, 'gating.exempt.already', { target, by: e.addedBy }));
        const key = e.kind === 'role' ? 'gating.exempt.addedRole' : 'gating.exempt.addedMember';
        return notice('success', text(locale, key, { target }));
      }
      return notice(
        result.changed ? 'success' : 'info',
        text(
          locale,
          result.changed ? 'web.dashboard.exemptions.removed' : 'web.dashboard.exemptions.notExempt',
        ),
      );
    }
  }
}

/** The Exemptions page: the list with Remove buttons, and the form that adds one. */
export function renderExemptions(p: ExemptionsPage, cspNonce: string): string {
  const { locale, root } = p.frame;
  const base = `${root}/${p.frame.guild.id}/exemptions`;
  const rows = p.exemptions
    .map((e) => {
      const target = e.kind === 'role' ? roleHtml(p.names, e.targetId) : memberHtml(e.targetId);
      const label = t(locale, 'web.dashboard.exemptions.removeLabel', {
        target: targetName(p.names, e.kind, e.targetId),
      });
      return (
        `<tr><td>${text(locale, EXEMPT_TEXT[e.kind])}</td><td>${target}</td><td>${memberHtml(e.addedBy)}</td><td>${timeHtml(e.addedAt, p.frame.formats)}</td>` +
        `<td><form class="inline" method="post" action="${escapeHtml(`${base}/remove`)}">${csrfField(p.frame)}` +
        `<input type="hidden" name="${e.kind === 'role' ? 'role' : 'member'}" value="${escapeHtml(e.targetId)}">` +
        `<button type="submit" class="danger" aria-label="${escapeHtml(label)}">${text(locale, 'web.dashboard.exemptions.remove')}</button></form></td></tr>`
      );
    })
    .join('');
  const table =
    p.exemptions.length === 0
      ? `<p>${text(locale, 'web.dashboard.exemptions.none')}</p>`
      : `<table><caption>${text(locale, 'web.dashboard.nav.exemptions')}</caption><thead><tr>` +
        [
          'web.dashboard.exemptions.kind',
          'web.dashboard.exemptions.target',
          'web.dashboard.exemptions.addedBy',
          'web.dashboard.exemptions.addedAt',
          'web.dashboard.rules.actions',
        ]
          .map((k) => `<th scope="col">${text(locale, k as MessageKey)}</th>`)
          .join('') +
        `</tr></thead><tbody>${rows}</tbody></table>`;
  const form = p.form ?? { member: '', roleId: '' };
  const roles =
    `<option value="">${text(locale, 'web.dashboard.exemptions.noRole')}</option>` +
    p.roles
      .map(
        (r) =>
          `<option value="${escapeHtml(r.id)}"${r.id === form.roleId ? ' selected' : ''}>${escapeHtml(r.name)}</option>`,
      )
      .join('');
  const add =
    `<h2 id="add">${text(locale, 'web.dashboard.exemptions.addTitle')}</h2>` +
    `<form method="post" action="${escapeHtml(`${base}/add`)}">${csrfField(p.frame)}<div class="fields">` +
    `<div><label for="exempt-member">${text(locale, 'web.dashboard.exemptions.addMember')}</label>` +
    `<input id="exempt-member" name="member" inputmode="numeric" maxlength="20" value="${escapeHtml(form.member)}"></div>` +
    `<div><label for="exempt-role">${text(locale, 'web.dashboard.exemptions.addRole')}</label><select id="exempt-role" name="role">${roles}</select></div></div>` +
    `<div class="actions"><button type="submit">${text(locale, 'web.dashboard.exemptions.addSubmit')}</button></div></form>`;
  const body = (p.notice ?? '') + `<p>${text(locale, 'web.dashboard.exemptions.intro')}</p>${table}${add}`;
  return dashboardDocument(p.frame, t(locale, 'web.dashboard.nav.exemptions'), body, cspNonce);
}

export interface HeldPage {
  frame: GuildFrame;
  names: DashboardNames;
  held: PendingLoss[];
  count: number;
  notice?: string;
}

/** The notice for confirming or keeping held removals. */
export function heldOutcome(answer: DashboardAnswer, locale: string, waitSeconds: number): string {
  const problem = answerProblem(answer, locale, waitSeconds);
  if (problem !== undefined || answer.kind !== 'answered') return problem ?? '';
  const result = answer.result;
  if (result.kind === 'confirm') {
    const r = result.result;
    if (r.kind === 'refused')
      return notice(
        'error',
        `${text(locale, 'web.dashboard.refused')}${problemsHtml(r.problems, locale, true)}`,
      );
    if (r.kind === 'running') return notice('info', text(locale, 'web.dashboard.held.confirmRunning'));
    return notice('success', text(locale, 'web.dashboard.held.confirmDone', { changes: r.summary.changes }));
  }
  if (result.kind === 'keep') {
    const r = result.result;
    if (r.kind === 'refused')
      return notice(
        'error',
        `${text(locale, 'web.dashboard.refused')}${problemsHtml(r.problems, locale, true)}`,
      );
    return notice('success', text(locale, 'web.dashboard.held.kept', { count: r.count }));
  }
  return notice('error', text(locale, 'web.dashboard.failed'));
}

/** The Held removals page: what the breaker holds, and the buttons that confirm or keep. */
export function renderHeld(p: HeldPage, cspNonce: string): string {
  const { locale, root } = p.frame;
  const base = `${root}/${p.frame.guild.id}/held`;
  const roleOf = (subject: string) => subject.slice(subject.indexOf(':') + 1);
  const rows = p.held
    .map(
      (l) =>
        `<tr><td>${memberHtml(l.userId)}</td><td>${l.subject.startsWith('role:') ? roleHtml(p.names, roleOf(l.subject)) : escapeHtml(l.subject)}</td>` +
        `<td>${l.heldAt === null ? '' : timeHtml(l.heldAt, p.frame.formats)}</td><td>${escapeHtml(l.reason)}</td></tr>`,
    )
    .join('');
  const list =
    p.count === 0
      ? `<p>${text(locale, 'web.dashboard.held.none')}</p>`
      : `<p>${text(locale, 'web.dashboard.held.count', { count: p.count })}</p>` +
        (p.held.length < p.count
          ? `<p class="muted">${text(locale, 'web.dashboard.held.more', { shown: p.held.length, count: p.count })}</p>`
          : '') +
        `<table><caption>${text(locale, 'web.dashboard.nav.held')}</caption><thead><tr>` +
        [
          'web.dashboard.held.member',
          'web.dashboard.held.role',
          'web.dashboard.held.since',
          'web.dashboard.held.reason',
        ]
          .map((k) => `<th scope="col">${text(locale, k as MessageKey)}</th>`)
          .join('') +
        `</tr></thead><tbody>${rows}</tbody></table>`;
  const button = (path: string, key: MessageKey, hint: MessageKey, id: string, style = '') =>
    `<form method="post" action="${escapeHtml(`${base}/${path}`)}">${csrfField(p.frame)}` +
    `<p id="${id}" class="muted">${text(locale, hint)}</p><button type="submit"${style} aria-describedby="${id}">${text(locale, key)}</button></form>`;
  const actions =
    p.count === 0
      ? ''
      : `<div class="actions">${button('confirm', 'web.dashboard.held.confirm', 'web.dashboard.held.confirmHint', 'confirm-hint', ' class="danger"')}` +
        `${button('keep', 'web.dashboard.held.keep', 'web.dashboard.held.keepHint', 'keep-hint', ' class="secondary"')}</div>`;
  const body = (p.notice ?? '') + `<p>${text(locale, 'web.dashboard.held.intro')}</p>${list}${actions}`;
  return dashboardDocument(p.frame, t(locale, 'web.dashboard.nav.held'), body, cspNonce);
}

export interface HealthPage {
  frame: GuildFrame;
  names: DashboardNames;
  /** The problems `/gating status` finds, from the owning process (or why there is no answer). */
  status: DashboardAnswer;
  panels: { channelId: string; messageId: string }[];
  waitSeconds: number;
}

function statusHtml(
  status: GuildStatus,
  names: DashboardNames,
  frame: Pick<DashboardFrame, 'locale' | 'formats'>,
  heldLink: string,
): string {
  const { locale } = frame;
  const items: string[] = [];
  if (!status.manageRoles) items.push(text(locale, 'web.dashboard.health.noManageRoles'));
  if (!status.guildMembersIntent) items.push(text(locale, 'web.dashboard.health.noIntent'));
  if (status.problems.length > 0)
    items.push(`${text(locale, 'web.dashboard.health.roles')}${problemsHtml(status.problems, locale)}`);
  if (status.blockedRoleIds.length > 0)
    items.push(
      `${text(locale, 'web.dashboard.health.blocked')} ${status.blockedRoleIds.map((id) => roleHtml(names, id)).join(', ')}`,
    );
  if (status.heldRemovals > 0)
    items.push(
      `<a href="${escapeHtml(heldLink)}">${text(locale, 'web.dashboard.health.held', { count: status.heldRemovals })}</a>`,
    );
  if (!status.signingLinksBound) items.push(text(locale, 'web.dashboard.health.signingLinks'));
  const chains = (status.failingChains ?? []).join(', ');
  if (chains) items.push(text(locale, 'web.dashboard.health.chainsFailing', { chains }));
  const behind = status.recheckCycle ? cycleProblem(status.recheckCycle, locale) : null;
  if (behind) items.push(behind);
  const problems =
    items.length === 0
      ? notice('success', text(locale, 'web.dashboard.health.ok'))
      : `<ul class="notice warn">${items.map((i) => `<li>${i}</li>`).join('')}</ul>`;
  const number = frame.formats.number;
  return (
    problems +
    '<dl class="pairs">' +
    `<dt>${text(locale, 'web.dashboard.health.lastPass')}</dt><dd>${status.lastFullSyncAt === null ? text(locale, 'web.dashboard.health.never') : timeHtml(status.lastFullSyncAt, frame.formats)}</dd>` +
    `<dt>${text(locale, 'web.dashboard.count.queued')}</dt><dd>${escapeHtml(number.format(status.queueLength))}</dd>` +
    `<dt>${text(locale, 'web.dashboard.count.linked')}</dt><dd>${escapeHtml(number.format(status.linkedMembers))}</dd>` +
    (status.recheckCycle ? cyclePairs(status.recheckCycle, frame) : '') +
    '</dl>'
  );
}

/** The Health page: the problems `/gating status` finds, and where the verify panels are. */
export function renderHealth(p: HealthPage, cspNonce: string): string {
  const { locale, root } = p.frame;
  const problem = answerProblem(p.status, locale, p.waitSeconds);
  const status =
    problem ??
    (p.status.kind === 'answered' && p.status.result.kind === 'status'
      ? statusHtml(p.status.result.status, p.names, p.frame, `${root}/${p.frame.guild.id}/held`)
      : notice('error', text(locale, 'web.dashboard.failed')));
  const panels =
    p.panels.length === 0
      ? `<p>${text(locale, 'web.dashboard.health.panelsNone')}</p>`
      : `<ul>${p.panels.map((panel) => `<li>${channelHtml(p.names, panel.channelId)}</li>`).join('')}</ul>`;
  const body =
    `<h2 id="status">${text(locale, 'web.dashboard.health.status')}</h2>${status}` +
    `<h2 id="panels">${text(locale, 'web.dashboard.health.panels')}</h2>${panels}`;
  return dashboardDocument(p.frame, t(locale, 'web.dashboard.nav.health'), body, cspNonce);
}
