/**
 * The sentences of the gating module outside interactions: each role problem's fix, the log-channel
 * lines moderators read, and the direct message a member gets when a link moves away. Gating hands over
 * codes and data (`GatingNotice`, `RoleProblem`); the words are written here. Log lines are one line each,
 * escaped, and never ping (the log channel sends with no allowed mentions).
 */
import type { RoleProblem } from '../gating/roles/hierarchy.ts';
import type { GatingNotice, NoticeChange, RoleRefusal } from '../gating/types.ts';
import { escapeLine, truncate } from '../text/safety.ts';

/** Prefix of every audit-log reason gating writes; log lines leave it out. */
const REASON_PREFIX = 'web3 gating: ';
const MAX_NAME = 100;
const MAX_LINE = 300;

/** Role names are admin-chosen text: one line, bounded, in quotes. */
function quoted(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = name.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  const cut = flat.length > MAX_NAME ? `${flat.slice(0, MAX_NAME - 1)}…` : flat;
  return `“${cut || 'unnamed role'}”`;
}

/** One sentence naming the role, what is wrong and the fix. */
export function roleProblemText(p: RoleProblem): string {
  const name = quoted(p.roleName);
  switch (p.problem) {
    case 'everyone':
      return 'Every member already has @everyone, so it cannot be a gated role: pick or create a dedicated role.';
    case 'missing':
      return `The role ${p.roleId} no longer exists in this server: pick an existing role in /gating setup.`;
    case 'managed':
      return `${name} is managed by an integration (a bot, a booster or a linked role), so no one can assign it: pick or create a regular role.`;
    case 'elevated':
      return `${name} carries the ${p.permission ?? 'an elevated'} permission, and the bot never hands out a role with moderator powers: pick a role without it, or remove ${p.permission ?? 'it'} from ${name}.`;
    case 'above_invoker':
      return `${name} is at or above your highest role, so you could not give it by hand and cannot make the bot give it: pick a role below your own, or ask the server owner or an administrator.`;
    case 'above_bot':
      return `Move the bot’s role above ${name} in Server Settings → Roles.`;
    case 'no_permission':
      return `Give the bot’s role the Manage Roles permission in Server Settings → Roles, so it can assign ${name}.`;
  }
}

function refusalText(r: RoleRefusal): string {
  if (r.problem === 'missing_permissions') {
    const role = r.roleName === null ? 'the gated role' : quoted(r.roleName);
    return `Discord answered Missing Permissions. Give the bot’s role Manage Roles and move it above ${role} in Server Settings → Roles; waiting changes then go out by themselves.`;
  }
  if (r.problem === 'unknown_role') return 'The role no longer exists: pick another one with /gating setup.';
  return roleProblemText(r);
}

function changeText(change: NoticeChange): string {
  return change.op === 'add'
    ? `add <@&${change.roleId}> to <@${change.userId}>`
    : `remove <@&${change.roleId}> from <@${change.userId}>`;
}

/** The line (or direct message) a person reads for a gating notice. */
export function gatingNoticeText(n: GatingNotice): string {
  switch (n.kind) {
    case 'verified':
      return `Verified <@${n.userId}> as ${escapeLine(n.identity)} (${n.proof === 'record' ? 'record' : 'wallet signature'}).`;
    case 'unlinked':
      return `Unlinked ${escapeLine(n.identity)} from <@${n.userId}>: ${escapeLine(n.reason)}.${n.flagKept ? ' Any spam or risky flag it carries stays until its own credentials clear.' : ''}`;
    case 'link_moved':
      return escapeLine(
        `Your link of ${n.identity} in ${n.guildName ?? 'a server'} moved to another Discord account: ${n.reason}. Run /whoami there to see your roles.`,
      );
    case 'role_changed': {
      const why = escapeLine(truncate(n.change.reason.replace(REASON_PREFIX, ''), MAX_LINE));
      return n.change.op === 'add'
        ? `Added <@&${n.change.roleId}> to <@${n.change.userId}>: ${why}`
        : `Removed <@&${n.change.roleId}> from <@${n.change.userId}>: ${why}`;
    }
    case 'role_refused':
      return `⚠️ Could not ${changeText(n.change)}. ${escapeLine(refusalText(n.refusal))}`;
    case 'role_given_up':
      return `⚠️ ${changeText(n.change)} was given up on after ${n.claims} tries that never finished. Run /gating recheck to try again.`;
    case 'mass_removal_held':
      return (
        `🛑 Held back: this re-check would take <@&${n.roleId}> from ${n.count} of its ${n.holders} holders at once, ` +
        `${n.incident ? 'likely a Web3.bio incident or a rule change' : 'likely a rule change'}. ` +
        'Nothing was removed: a later re-check that agrees applies it, or /gating recheck confirm-removals:true.'
      );
  }
}
