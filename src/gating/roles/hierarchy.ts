/**
 * Pure checks of whether the bot can assign the gated roles: Discord lets a bot add or remove a role
 * only with Manage Roles, never @everyone or an integration-managed role, and only below its own
 * highest role. Beyond what Discord enforces, the bot never hands out a role with an elevated permission,
 * and never one its invoker could not hand out by hand (Discord's own rule for members with Manage Roles).
 * Each problem is a code with the role's name; render says what an admin should do about it.
 * @see https://discord.com/developers/docs/topics/permissions#permission-hierarchy
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';

export type RoleProblemKind =
  | 'missing'
  | 'everyone'
  | 'managed'
  | 'above_bot'
  | 'no_permission'
  | 'elevated'
  | 'above_invoker';

export interface RoleProblem {
  roleId: string;
  roleName: string;
  problem: RoleProblemKind;
  /** For `elevated`: the permission. */
  permission?: ElevatedPermission;
}

export interface RoleInfo {
  id: string;
  name: string;
  /** Sorted position, higher is above (discord.js `Role.position`). */
  position: number;
  managed: boolean;
  /** The role's permission bitfield. */
  permissions: bigint;
}

/** What the member configuring gating may hand out by hand. */
export interface InvokerRights {
  /** Owner or Administrator: any role the bot can manage. */
  bypass: boolean;
  /** Position of the member's highest role. */
  highestPosition: number;
}

/**
 * Permissions a gated role must not carry: a role earned by a web3 credential must never make its holder
 * a moderator. Flag names; render names them as Discord's client does in Server Settings.
 */
export const ELEVATED_PERMISSIONS = [
  'Administrator',
  'ManageGuild',
  'ManageRoles',
  'ManageChannels',
  'ManageWebhooks',
  'BanMembers',
  'KickMembers',
  'ModerateMembers',
  'MentionEveryone',
  'ManageMessages',
  'ManageNicknames',
  'ManageThreads',
  'ManageGuildExpressions',
  'ManageEvents',
  'MoveMembers',
  'MuteMembers',
  'DeafenMembers',
  'ViewAuditLog',
] as const satisfies readonly (keyof typeof PermissionFlagsBits)[];
export type ElevatedPermission = (typeof ELEVATED_PERMISSIONS)[number];

/** The first elevated permission a bitfield carries, or null. */
export function elevatedPermission(permissions: bigint): ElevatedPermission | null {
  for (const name of ELEVATED_PERMISSIONS) if ((permissions & PermissionFlagsBits[name]) !== 0n) return name;
  return null;
}

export interface RoleProblemsInput {
  guildId: string;
  roleIds: string[];
  roles: ReadonlyMap<string, RoleInfo>;
  botHighestPosition: number;
  botCanManageRoles: boolean;
  /** The member configuring the roles: checked only at setup. */
  invoker?: InvokerRights;
}

/** Every reason the bot could not assign each of `roleIds`, in input order (duplicates checked once). */
export function roleProblems(input: RoleProblemsInput): RoleProblem[] {
  const problems: RoleProblem[] = [];
  for (const roleId of new Set(input.roleIds)) {
    const role = input.roles.get(roleId);
    if (roleId === input.guildId) {
      problems.push({ roleId, roleName: role?.name ?? '@everyone', problem: 'everyone' });
      continue;
    }
    if (!role) {
      problems.push({ roleId, roleName: roleId, problem: 'missing' });
      continue;
    }
    const found = (problem: RoleProblemKind, permission?: ElevatedPermission): RoleProblem => ({
      roleId,
      roleName: role.name,
      problem,
      ...(permission === undefined ? {} : { permission }),
    });
    const elevated = elevatedPermission(role.permissions);
    if (role.managed) problems.push(found('managed'));
    else if (elevated !== null) problems.push(found('elevated', elevated));
    else if (input.invoker && !input.invoker.bypass && role.position >= input.invoker.highestPosition) {
      problems.push(found('above_invoker'));
    } else {
      if (role.position >= input.botHighestPosition) problems.push(found('above_bot'));
      if (!input.botCanManageRoles) problems.push(found('no_permission'));
    }
  }
  return problems;
}
