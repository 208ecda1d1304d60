/**
 * The sentences of the gating module outside interactions: each role problem's fix, the log-channel
 * lines moderators read, and the direct message a member gets when a link moves away. Gating hands over
 * codes and data (`GatingNotice`, `RoleProblem`); the words are written here. Log lines are one line each,
 * escaped, and never ping (the log channel sends with no allowed mentions).
 */
import type { RoleProblem } from '../gating/roles/hierarchy.ts';
import type { ExemptBy } from '../gating/rules/exemptions.ts';
import type { GatingNotice, RoleRefusal } from '../gating/types.ts';
import { DEFAULT_LOCALE, t } from '../i18n/index.ts';
import { escapeLine, truncate } from '../text/safety.ts';

/** Prefix of every audit-log reason gating writes; log lines leave it out. */
const REASON_PREFIX = 'web3 gating: ';
const MAX_NAME = 100;
const MAX_LINE = 300;

/** Role names are admin-chosen text: one line, bounded, in quotes. */
function quoted(name: string, locale: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = name.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  const cut = flat.length > MAX_NAME ? `${flat.slice(0, MAX_NAME - 1)}…` : flat;
  return t(locale, 'gating.notice.roleName', { name: cut || t(locale, 'gating.notice.unnamedRole') });
}

/** One sentence naming the role, what is wrong and the fix. */
export function roleProblemText(p: RoleProblem, locale: string = DEFAULT_LOCALE): string {
  const name = quoted(p.roleName, locale);
  switch (p.problem) {
    case 'everyone':
      return t(locale, 'gating.problem.everyone');
    case 'missing':
      return t(locale, 'gating.problem.missing', { roleId: p.roleId });
    case 'managed':
      return t(locale, 'gating.problem.managed', { name });
    case 'elevated':
      return p.permission
        ? t(locale, 'gating.problem.elevated', {
            name,
            permission: t(locale, `gating.permission.${p.permission}`),
          })
        : t(locale, 'gating.problem.elevatedUnknown', { name });
    case 'above_invoker':
      return t(locale, 'gating.problem.aboveInvoker', { name });
    case 'above_bot':
      return t(locale, 'gating.problem.aboveBot', { name });
    case 'no_permission':
      return t(locale, 'gating.problem.noPermission', { name });
  }
}

/** A gated role the member could not grant or take by hand (rights over roles, authority.ts), named. */
export function roleBeyondText(p: RoleProblem, locale: string = DEFAULT_LOCALE): string {
  return t(locale, 'gating.authority.roleAbove', { name: quoted(p.roleName, locale) });
}

function refusalText(r: RoleRefusal, locale: string): string {
  if (r.problem === 'missing_permissions') {
    return r.roleName === null
      ? t(locale, 'gating.notice.missingPermissionsUnknownRole')
      : t(locale, 'gating.notice.missingPermissions', { role: quoted(r.roleName, locale) });
  }
  if (r.problem === 'unknown_role') return t(locale, 'gating.notice.unknownRole');
  return roleProblemText(r, locale);
}

/**
 * What exempts a member: "exempt (member)" or "exempt (role …)", the role as `roleText` shows it (a
 * mention in the log channel, which never pings; a name in a reply).
 */
export function exemptByText(
  by: ExemptBy,
  locale: string,
  roleText = (roleId: string) => `<@&${roleId}>`,
): string {
  return by.kind === 'member'
    ? t(locale, 'gating.exempt.byMember')
    : t(locale, 'gating.exempt.byRole', { role: roleText(by.roleId) });
}

/** The line (or direct message) a person reads for a gating notice, in `locale`. */
export function gatingNoticeText(n: GatingNotice, locale: string = DEFAULT_LOCALE): string {
  switch (n.kind) {
    case 'verified':
      return t(
        locale,
        n.proof === 'record' ? 'gating.notice.verifiedRecord' : 'gating.notice.verifiedSignature',
        {
          userId: n.userId,
          identity: escapeLine(n.identity),
        },
      );
    case 'unlinked':
      return t(locale, n.flagKept ? 'gating.notice.unlinkedFlagKept' : 'gating.notice.unlinked', {
        userId: n.userId,
        identity: escapeLine(n.identity),
        reason: escapeLine(n.reason),
      });
    case 'link_moved': {
      const values = { identity: escapeLine(n.identity), reason: escapeLine(n.reason) };
      return n.guildName === null
        ? t(locale, 'gating.notice.linkMovedUnknownServer', values)
        : t(locale, 'gating.notice.linkMoved', { ...values, server: escapeLine(n.guildName) });
    }
    case 'role_changed': {
      const why = escapeLine(truncate(n.change.reason.replace(REASON_PREFIX, ''), MAX_LINE));
      const { roleId, userId } = n.change;
      return t(locale, n.change.op === 'add' ? 'gating.notice.roleAdded' : 'gating.notice.roleRemoved', {
        roleId,
        userId,
        why,
      });
    }
    case 'role_refused': {
      const { roleId, userId } = n.change;
      const why = escapeLine(refusalText(n.refusal, locale));
      return t(locale, n.change.op === 'add' ? 'gating.notice.addRefused' : 'gating.notice.removeRefused', {
        roleId,
        userId,
        why,
      });
    }
    case 'role_given_up': {
      const { roleId, userId } = n.change;
      return t(locale, n.change.op === 'add' ? 'gating.notice.addGivenUp' : 'gating.notice.removeGivenUp', {
        roleId,
        userId,
        claims: n.claims,
      });
    }
    case 'removal_exempt':
      return t(locale, 'gating.exempt.removalKept', {
        roleId: n.roleId,
        userId: n.userId,
        by: exemptByText(n.by, locale),
        why: escapeLine(truncate(n.because, MAX_LINE)),
      });
    case 'mass_removal_held':
      return t(locale, n.incident ? 'gating.notice.massHeldIncident' : 'gating.notice.massHeld', {
        roleId: n.roleId,
        count: n.count,
        holders: n.holders,
      });
  }
}
