/**
 * What every gating message shares: the guild's names (looked up by the caller), roles, channels and
 * members shown by name and never as mentions (so nothing can ping, and a deleted role still reads
 * sensibly; a member also by username, so two with one display name are told apart), and the plain embed
 * the messages use. Every user-controlled string goes through text/safety.ts.
 */
import type { APIEmbed, APIEmbedField } from 'discord-api-types/v10';
import type { DecisionWhy, RoleDecision, RoleDiff } from '../gating/rules/rules.ts';
import { t } from '../i18n/index.ts';
import { DISCORD_LIMITS, discordTime, escapeLine, inlineCode, truncate } from '../text/safety.ts';
import { fieldsWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Names the caller resolved from the guild (id -> name); ids missing here are shown as ids. */
export interface GuildNames {
  roles: ReadonlyMap<string, string>;
  channels: ReadonlyMap<string, string>;
  /** Members' display names (a server nickname, else their global name): not unique. */
  users: ReadonlyMap<string, string>;
  /** Members' usernames: unique on Discord. */
  usernames: ReadonlyMap<string, string>;
}

export const NO_NAMES: GuildNames = {
  roles: new Map(),
  channels: new Map(),
  users: new Map(),
  usernames: new Map(),
};

export const REASON_MAX = 300;

export const NAME_MAX = 80;

const FIELDS_BUDGET = 5000;

export const LIST_MAX = 1000;

const IDENTITY_MAX = 100;

export function reasonText(reason: string): string {
  return escapeLine(truncate(reason, REASON_MAX));
}

/** Why a rule decided, in `locale` (the English `because` when the decision carries no code). */
export function decisionReason(d: Pick<RoleDecision, 'because' | 'why'>, locale: string): string {
  if (!d.why) return reasonText(d.because);
  // A date and the catalog's words only: escaping would break the Discord timestamp (`<t:…:D>`).
  if (d.why.code === 'tooNew') return truncate(whyText(d.why, locale), REASON_MAX);
  return reasonText(whyText(d.why, locale));
}

/** A reason in `locale`; a role rule's parts are each worded and joined (`all of: …; …`). */
function whyText(why: DecisionWhy, locale: string): string {
  const parts = why.parts?.map((p) => whyText(p, locale)).join('; ');
  const values =
    why.code === 'tooNew' ? { date: discordTime(Number(why.values?.at) / 1000, 'D') } : why.values;
  return t(
    locale,
    `gating.reason.${why.code}`,
    parts === undefined ? values : { ...values, conditions: parts },
  );
}

/** An identity as members typed it: one escaped line, bounded. */
export function identityText(identity: string, locale: string): string {
  return escapeLine(truncate(identity, IDENTITY_MAX)) || t(locale, 'gating.label.anIdentity');
}

/** A role by name in bold, or its id when the guild no longer has it. */
export function roleLabel(roleId: string, names: GuildNames, locale: string): string {
  const name = names.roles.get(roleId);
  const shown = name === undefined ? '' : escapeLine(truncate(name.replace(/^@+/, ''), NAME_MAX));
  return shown ? `**${shown}**` : t(locale, 'gating.label.missingRole', { id: inlineCode(roleId) });
}

/** When a member too new for a role gets it: "You can get **Role** <t:…:R>" (in their own locale). */
export function notBeforeText(
  notBefore: { roleId: string; at: number },
  names: GuildNames,
  locale: string,
): string {
  return t(locale, 'gating.accountAge.qualifies', {
    role: roleLabel(notBefore.roleId, names, locale),
    when: discordTime(Math.ceil(notBefore.at / 1000), 'R'),
  });
}

/** Roles by name, in one list. */
export function roleList(roleIds: readonly string[], names: GuildNames, locale: string): string {
  return roleIds.map((id) => roleLabel(id, names, locale)).join(t(locale, 'gating.list.separator'));
}

export function channelLabel(channelId: string, names: GuildNames, locale: string): string {
  const name = names.channels.get(channelId);
  const shown = name === undefined ? '' : escapeLine(truncate(name, NAME_MAX));
  return shown ? `**#${shown}**` : t(locale, 'gating.label.missingChannel', { id: inlineCode(channelId) });
}

/** A member's display name and username, escaped for one line; empty where not known. */
function memberNames(
  userId: string,
  names: GuildNames,
  username = names.usernames.get(userId),
): { name: string; username: string } {
  const shown = (text: string | undefined | null) => (text ? escapeLine(truncate(text, NAME_MAX)) : '');
  return { name: shown(names.users.get(userId)), username: shown(username) };
}

/**
 * A member by display name, with what tells them apart from others of that name: `**Alex** (alex_99)`, by
 * username; `**Alex** (\`id\`)` when the username is not known; `**alex_99**` when the two are one. By id
 * when no name is known.
 */
export function userLabel(userId: string, names: GuildNames, locale: string): string {
  const { name, username } = memberNames(userId, names);
  if (name === '' && username === '') return t(locale, 'gating.label.member', { id: inlineCode(userId) });
  if (name === '' || name === username) return `**${username}**`;
  return `**${name}** (${username || inlineCode(userId)})`;
}

/**
 * A member as plain text where no markup renders (a field name): `Alex (alex_99)`, or the one name known;
 * `username` when the caller saw it elsewhere. Undefined when no name is known.
 */
export function memberText(userId: string, names: GuildNames, username?: string | null): string | undefined {
  const known = memberNames(userId, names, names.usernames.get(userId) ?? username ?? undefined);
  if (known.name === '' || known.name === known.username) return known.username || undefined;
  return known.username === '' ? known.name : `${known.name} (${known.username})`;
}

/** One line per role change, with the rule's reason. */
export function diffLines(diff: RoleDiff, names: GuildNames, locale: string): string[] {
  return [
    ...diff.add.map((d) => `➕ ${roleLabel(d.roleId, names, locale)}: ${reasonText(d.because)}`),
    ...diff.remove.map((d) => `➖ ${roleLabel(d.roleId, names, locale)}: ${reasonText(d.because)}`),
  ];
}

/** The note for role changes that wait on a permission problem; empty when none do. */
export function blockedNote(roleIds: readonly string[], names: GuildNames, locale: string): string {
  if (roleIds.length === 0) return '';
  return `\n${t(locale, 'gating.blockedNote', { roles: roleList(roleIds, names, locale) })}`;
}

export function embed(
  title: string,
  description: string,
  color: number,
  fields: APIEmbedField[] = [],
): APIEmbed {
  return {
    title,
    description,
    color,
    ...(fields.length > 0 ? { fields: fieldsWithin(fields, DISCORD_LIMITS.fields, FIELDS_BUDGET) } : {}),
  };
}

export function plain(e: APIEmbed, ctx: RenderContext): MessagePayload {
  return finishPayload([e], [], { ...ctx, stale: undefined });
}
