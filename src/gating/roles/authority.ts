/**
 * Who may do what in a server, decided from the server itself: the member's server-level permissions
 * (the owner has every one; else @everyone's and each held role's together; Administrator means every
 * one), their highest role (what they could hand out by hand), and their permissions in one channel
 * from its overwrites. Never from an interaction's `member.permissions`: that is the member's bitfield in
 * the channel the interaction came from, overwrites included, and in an overwrite the Manage Roles bit
 * means Manage Permissions (ticket and temporary voice channels give it to ordinary members). A timed-out
 * member keeps only View Channel and Read Message History, as in Discord (owners and Administrators are
 * exempt). Pure.
 * @see https://discord.com/developers/docs/topics/permissions#permission-overwrites
 * @see https://discord.com/developers/docs/topics/permissions#permission-hierarchy
 * @see https://discord.com/developers/docs/topics/permissions#permissions-for-timed-out-members
 */
import { OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import type { StoredGuildAuthority } from '../../store/types.ts';
import type { InvokerRights, RoleProblem } from './hierarchy.ts';

/** Every permission Discord defines: what the owner and an Administrator hold. */
export const ALL_PERMISSIONS: bigint = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);

/** A role as the rights need it. */
export interface AuthorityRole {
  id: string;
  name: string;
  /** Sorted position, higher is above (discord.js `Role.position`). */
  position: number;
  /** The role's permission bitfield. */
  permissions: bigint;
}

/** A server as the rights need it: its owner and its roles (@everyone's id is the server's). */
export interface GuildAuthority {
  guildId: string;
  ownerId: string;
  roles: ReadonlyMap<string, AuthorityRole>;
}

/** A server's authority from the snapshot the gateway side stored (what a web replica decides on). */
export function authorityOfSnapshot(
  stored: Pick<StoredGuildAuthority, 'guildId' | 'ownerId' | 'roles'>,
): GuildAuthority {
  return {
    guildId: stored.guildId,
    ownerId: stored.ownerId,
    roles: new Map(stored.roles.map((r) => [r.id, r])),
  };
}

/** A member as an interaction names them: their id and the role ids they hold in the server. */
export interface MemberRoles {
  userId: string;
  roleIds: readonly string[];
  /** A timeout holds (`communication_disabled_until` in the future when the member was read). */
  timedOut?: boolean;
}

/** What a timed-out member keeps, as Discord leaves them (owners and Administrators are not limited). */
export const TIMED_OUT_PERMISSIONS: bigint =
  PermissionFlagsBits.ViewChannel | PermissionFlagsBits.ReadMessageHistory;

/** Whether `communication_disabled_until` (an ISO time, or null) is still ahead of `now` (ms). */
export function timeoutHolds(until: string | null | undefined, now: number): boolean {
  if (!until) return false;
  const ends = Date.parse(until);
  return Number.isFinite(ends) && ends > now;
}

/** Whether a timeout takes the member's rights now: timed out, and neither the owner nor an Administrator. */
export function timeoutLimits(guild: GuildAuthority, member: MemberRoles): boolean {
  return (
    member.timedOut === true && (serverPermissions(guild, member) & PermissionFlagsBits.Administrator) === 0n
  );
}

/** A channel's permission overwrite: for a role (@everyone's id is the server's) or for one member. */
export interface ChannelOverwrite {
  id: string;
  type: OverwriteType;
  allow: bigint;
  deny: bigint;
}

/** A named right, and the server-level permission it takes. */
export type Right = 'moderate' | 'export' | 'dashboard';

/**
 * `moderate`: every `/gating` subcommand, the Check web3 credentials menu, the buttons of a moderator's
 * flow, suggestions that show the server's rules, and every change made on the dashboard; `export`: the
 * export's member data; `dashboard`: seeing a server on the owners' dashboard.
 */
export const RIGHT_PERMISSIONS: Readonly<Record<Right, bigint>> = {
  moderate: PermissionFlagsBits.ManageRoles,
  export: PermissionFlagsBits.ManageGuild,
  dashboard: PermissionFlagsBits.ManageGuild,
};

/**
 * Whether server-level permissions Discord worked out itself (the `permissions` of an OAuth2 server list,
 * which counts the member's roles, ownership and Administrator, and no channel) hold the right; the owner
 * holds every one.
 */
export function permissionsHoldRight(server: { permissions: bigint; owner: boolean }, right: Right): boolean {
  if (server.owner || (server.permissions & PermissionFlagsBits.Administrator) !== 0n) return true;
  const flag = RIGHT_PERMISSIONS[right];
  return (server.permissions & flag) === flag;
}

/** The member's permissions in the server, from their roles (no channel's overwrites) and a timeout. */
export function serverPermissions(guild: GuildAuthority, member: MemberRoles): bigint {
  if (member.userId === guild.ownerId) return ALL_PERMISSIONS;
  let permissions = guild.roles.get(guild.guildId)?.permissions ?? 0n;
  for (const roleId of member.roleIds) permissions |= guild.roles.get(roleId)?.permissions ?? 0n;
  if ((permissions & PermissionFlagsBits.Administrator) !== 0n) return ALL_PERMISSIONS;
  return member.timedOut === true ? permissions & TIMED_OUT_PERMISSIONS : permissions;
}

/** Whether the member holds the right at server level. */
export function holdsRight(guild: GuildAuthority, member: MemberRoles, right: Right): boolean {
  const flag = RIGHT_PERMISSIONS[right];
  return (serverPermissions(guild, member) & flag) === flag;
}

/**
 * What the member may hand out by hand: owners and administrators anything, others below their highest
 * role, and a timed-out member nothing.
 */
export function handOutRights(guild: GuildAuthority, member: MemberRoles): InvokerRights {
  const bypass =
    member.userId === guild.ownerId ||
    (serverPermissions(guild, member) & PermissionFlagsBits.Administrator) !== 0n;
  let highestPosition = 0;
  if (!bypass && member.timedOut === true) return { bypass, highestPosition };
  for (const roleId of member.roleIds) {
    const role = roleId === guild.guildId ? undefined : guild.roles.get(roleId);
    if (role && role.position > highestPosition) highestPosition = role.position;
  }
  return { bypass, highestPosition };
}

/**
 * The roles of `roleIds` the member could not grant or take by hand (at or above their highest role),
 * each as an `above_invoker` problem naming it. A role the server no longer has is left out: nobody holds
 * it. Whatever decides who holds a gated role (setting gating up, switching it off, releasing held
 * removals, exemptions) takes these rights over every gated role.
 */
export function rolesBeyondMember(
  guild: GuildAuthority,
  member: MemberRoles,
  roleIds: readonly string[],
): RoleProblem[] {
  const rights = handOutRights(guild, member);
  if (rights.bypass) return [];
  const problems: RoleProblem[] = [];
  for (const roleId of new Set(roleIds)) {
    const role = guild.roles.get(roleId);
    if (role && role.position >= rights.highestPosition)
      problems.push({ roleId, roleName: role.name, problem: 'above_invoker' });
  }
  return problems;
}

/**
 * The member's permissions in a channel, as Discord computes them: the server-level ones (Administrator
 * means all, and no overwrite takes any away), then the @everyone overwrite, then the member's roles'
 * overwrites together (all their denies, then all their allows), then the member's own overwrite.
 */
export function channelPermissions(
  guild: GuildAuthority,
  member: MemberRoles,
  overwrites: readonly ChannelOverwrite[],
): bigint {
  let permissions = serverPermissions(guild, member);
  if ((permissions & PermissionFlagsBits.Administrator) !== 0n) return ALL_PERMISSIONS;
  const everyone = overwrites.find((o) => o.type === OverwriteType.Role && o.id === guild.guildId);
  if (everyone) permissions = (permissions & ~everyone.deny) | everyone.allow;
  const held = new Set(member.roleIds);
  let deny = 0n;
  let allow = 0n;
  for (const o of overwrites) {
    if (o.type === OverwriteType.Role && o.id !== guild.guildId && held.has(o.id)) {
      deny |= o.deny;
      allow |= o.allow;
    }
  }
  permissions = (permissions & ~deny) | allow;
  const own = overwrites.find((o) => o.type === OverwriteType.Member && o.id === member.userId);
  if (own) permissions = (permissions & ~own.deny) | own.allow;
  return member.timedOut === true ? permissions & TIMED_OUT_PERMISSIONS : permissions;
}
