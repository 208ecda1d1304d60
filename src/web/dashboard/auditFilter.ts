/**
 * The audit page's filter, read from its query: each field trimmed and bounded, ids and days checked, and
 * the kind one of the audit's own (its own keys only: `constructor`, `__proto__` or `toString` is no kind).
 */
import type { MessageKey } from '../../i18n/index.ts';
import type { AuditFilter } from '../../store/types.ts';
import { AUDIT_KINDS, type AuditFilterForm } from '../pages/dashboardAudit.ts';

/** A Discord id (snowflake) as a form or query may give it. */
export const USER_ID = /^\d{17,20}$/;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DAY_MS = 86_400_000;

function dayStart(value: string): number | undefined {
  const match = DATE.exec(value);
  if (!match) return undefined;
  const ms = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  const back = new Date(ms);
  return back.getUTCDate() === Number(match[3]) && back.getUTCMonth() === Number(match[2]) - 1
    ? ms
    : undefined;
}

/** The filter a query asks for, or the key of what is wrong with it. */
export function auditFilterOf(
  guildId: string,
  query: URLSearchParams,
): { form: AuditFilterForm; filter?: AuditFilter; error?: MessageKey } {
  const form: AuditFilterForm = {
    member: (query.get('member') ?? '').trim().slice(0, 40),
    role: (query.get('role') ?? '').trim().slice(0, 40),
    kind: (query.get('kind') ?? '').trim().slice(0, 40),
    from: (query.get('from') ?? '').trim().slice(0, 20),
    to: (query.get('to') ?? '').trim().slice(0, 20),
  };
  if (form.member !== '' && !USER_ID.test(form.member)) return { form, error: 'web.dashboard.bad.member' };
  if (form.role !== '' && !USER_ID.test(form.role)) return { form, error: 'web.dashboard.bad.role' };
  if (form.kind !== '' && !Object.hasOwn(AUDIT_KINDS, form.kind))
    return { form, error: 'web.dashboard.bad.kind' };
  const from = form.from === '' ? undefined : dayStart(form.from);
  const to = form.to === '' ? undefined : dayStart(form.to);
  if ((form.from !== '' && from === undefined) || (form.to !== '' && to === undefined))
    return { form, error: 'web.dashboard.bad.date' };
  return {
    form,
    filter: {
      guildId,
      ...(form.member ? { userId: form.member } : {}),
      ...(form.role ? { roleId: form.role } : {}),
      ...(form.kind ? { kind: form.kind } : {}),
      ...(from === undefined ? {} : { from }),
      ...(to === undefined ? {} : { to: to + DAY_MS }),
    },
  };
}
