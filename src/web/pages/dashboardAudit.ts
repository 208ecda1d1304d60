/**
 * The Audit page: the server's events newest first, filtered by member, role, kind and time (a GET form,
 * so a filtered view is a link), paged by keyset (Older, Newer, Newest), with the filtered events as a
 * CSV download. An event's reason is the stored record, shown as data. Pure.
 */
import type { AuditPage } from '../../gating/dashboard/reads.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import type { AuditCursor } from '../../store/types.ts';
import type { DashboardFrame } from './dashboardDocument.ts';
import { dashboardDocument } from './dashboardDocument.ts';
import { type DashboardNames, memberHtml, notice, roleHtml, timeHtml } from './dashboardParts.ts';
import { escapeHtml, text } from './words.ts';

/** The audit kinds the filter offers, with their words. */
export const AUDIT_KINDS: Readonly<Record<string, MessageKey>> = {
  role_added: 'web.dashboard.kind.roleAdded',
  role_removed: 'web.dashboard.kind.roleRemoved',
  role_failed: 'web.dashboard.kind.roleFailed',
  linked: 'web.dashboard.kind.linked',
  unlinked: 'web.dashboard.kind.unlinked',
  settings_changed: 'web.dashboard.kind.settingsChanged',
  rule_added: 'web.dashboard.kind.ruleAdded',
  rule_removed: 'web.dashboard.kind.ruleRemoved',
  exemption_added: 'web.dashboard.kind.exemptionAdded',
  exemption_removed: 'web.dashboard.kind.exemptionRemoved',
  recheck_pass: 'web.dashboard.kind.recheckPass',
  removals_held: 'web.dashboard.kind.removalsHeld',
  removals_kept: 'web.dashboard.kind.removalsKept',
};

/** The filter as typed (text, shown again in the form); the route checks it before it is used. */
export interface AuditFilterForm {
  member: string;
  role: string;
  kind: string;
  from: string;
  to: string;
}

export interface AuditPageView {
  frame: DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };
  names: DashboardNames;
  roles: { id: string; name: string }[];
  filter: AuditFilterForm;
  /** Null when the filter was refused (then `error` says why). */
  page: AuditPage | null;
  error?: MessageKey;
}

export function cursorParam(c: AuditCursor): string {
  return `${c.createdAt}.${c.id}`;
}

/** The filter as query parameters (empty ones left out), for links and the download. */
export function filterQuery(filter: AuditFilterForm): URLSearchParams {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filter)) if (value !== '') query.set(name, value);
  return query;
}

export function renderAudit(v: AuditPageView, cspNonce: string): string {
  const { locale, root } = v.frame;
  const base = `${root}/${v.frame.guild.id}/audit`;
  const f = v.filter;
  const selected = (on: boolean) => (on ? ' selected' : '');
  const roleOptions =
    `<option value="">${text(locale, 'web.dashboard.audit.anyRole')}</option>` +
    v.roles
      .map(
        (r) =>
          `<option value="${escapeHtml(r.id)}"${selected(r.id === f.role)}>${escapeHtml(r.name)}</option>`,
      )
      .join('');
  const kindOptions =
    `<option value="">${text(locale, 'web.dashboard.audit.anyKind')}</option>` +
    Object.entries(AUDIT_KINDS)
      .map(
        ([kind, key]) => `<option value="${kind}"${selected(kind === f.kind)}>${text(locale, key)}</option>`,
      )
      .join('');
  const field = (id: string, label: MessageKey, input: string) =>
    `<div><label for="${id}">${text(locale, label)}</label>${input}</div>`;
  const form =
    `<form method="get" action="${escapeHtml(base)}"><fieldset><legend>${text(locale, 'web.dashboard.audit.filters')}</legend><div class="fields">` +
    field(
      'audit-member',
      'web.dashboard.audit.member',
      `<input id="audit-member" name="member" inputmode="numeric" maxlength="20" value="${escapeHtml(f.member)}">`,
    ) +
    field(
      'audit-role',
      'web.dashboard.audit.role',
      `<select id="audit-role" name="role">${roleOptions}</select>`,
    ) +
    field(
      'audit-kind',
      'web.dashboard.audit.kind',
      `<select id="audit-kind" name="kind">${kindOptions}</select>`,
    ) +
    field(
      'audit-from',
      'web.dashboard.audit.from',
      `<input id="audit-from" name="from" type="date" value="${escapeHtml(f.from)}">`,
    ) +
    field(
      'audit-to',
      'web.dashboard.audit.to',
      `<input id="audit-to" name="to" type="date" value="${escapeHtml(f.to)}">`,
    ) +
    `</div><div class="actions"><button type="submit">${text(locale, 'web.dashboard.audit.show')}</button></div></fieldset></form>`;
  const query = filterQuery(f);
  const link = (extra: Record<string, string>) => {
    const q = new URLSearchParams(query);
    for (const [k, val] of Object.entries(extra)) q.set(k, val);
    const s = q.toString();
    return escapeHtml(s ? `${base}?${s}` : base);
  };
  const download = `<p><a href="${escapeHtml(`${base}.csv${query.size > 0 ? `?${query.toString()}` : ''}`)}" download>${text(locale, 'web.dashboard.audit.download')}</a></p>`;
  let results = '';
  if (v.error) results = notice('error', text(locale, v.error));
  else if (v.page) {
    const page = v.page;
    const rows = page.events
      .map(
        (e) =>
          `<tr><td>${timeHtml(e.createdAt, v.frame.formats)}</td><td>${AUDIT_KINDS[e.kind] ? text(locale, AUDIT_KINDS[e.kind] as MessageKey) : escapeHtml(e.kind)}</td>` +
          `<td>${memberHtml(e.userId)}</td><td>${e.roleId ? roleHtml(v.names, e.roleId) : ''}</td><td>${escapeHtml(e.reason)}</td></tr>`,
      )
      .join('');
    const table =
      page.events.length === 0
        ? `<p>${text(locale, 'web.dashboard.audit.none')}</p>`
        : `<table><caption>${text(locale, 'web.dashboard.nav.audit')}</caption><thead><tr>` +
          (
            [
              'web.dashboard.audit.time',
              'web.dashboard.audit.kind',
              'web.dashboard.audit.memberColumn',
              'web.dashboard.audit.role',
              'web.dashboard.audit.reason',
            ] as const
          )
            .map((k) => `<th scope="col">${text(locale, k)}</th>`)
            .join('') +
          `</tr></thead><tbody>${rows}</tbody></table>`;
    const pager = [
      page.newer ? `<a href="${link({})}">${text(locale, 'web.dashboard.audit.newest')}</a>` : '',
      page.newer
        ? `<a href="${link({ after: cursorParam(page.newer) })}" rel="prev">${text(locale, 'web.dashboard.audit.newer')}</a>`
        : '',
      page.older
        ? `<a href="${link({ before: cursorParam(page.older) })}" rel="next">${text(locale, 'web.dashboard.audit.older')}</a>`
        : '',
    ].filter(Boolean);
    results =
      table +
      (pager.length > 0
        ? `<nav class="pager" aria-label="${text(locale, 'web.dashboard.audit.pages')}">${pager.join('')}</nav>`
        : '');
  }
  const body = form + download + results;
  return dashboardDocument(v.frame, t(locale, 'web.dashboard.nav.audit'), body, cspNonce);
}
