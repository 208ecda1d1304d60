/**
 * Pure checks of whether the bot can assign the gated roles: Discord lets a bot add or remove a role
 * only with Manage Roles, never @everyone or an integration-managed role, and only below its own
 * highest role. Beyond what Discord enforces, the bot never hands out a role with an elevated permission,
 * and never one its invoker could not hand out by hand (Discord's own rule for members with Manage Roles).
 * Each problem names the role and what an admin should do about it.
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
  /** For `elevated`: the permission's Discord name. */
  permission?: string;
  /** One sentence naming the role and the fix. */
  fix: string;
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
 * a moderator. Discord's names, as shown in Server Settings.
 */
export const ELEVATED_PERMISSIONS: readonly (readonly [bigint, string])[] = [
  [PermissionFlagsBits.Administrator, 'Administrator'],
  [PermissionFlagsBits.ManageGuild, 'Manage Server'],
  [PermissionFlagsBits.ManageRoles, 'Manage Roles'],
  [PermissionFlagsBits.ManageChannels, 'Manage Channels'],
  [PermissionFlagsBits.ManageWebhooks, 'Manage Webhooks'],
  [PermissionFlagsBits.BanMembers, 'Ban Members'],
  [PermissionFlagsBits.KickMembers, 'Kick Members'],
  [PermissionFlagsBits.ModerateMembers, 'Timeout Members'],
  [PermissionFlagsBits.MentionEveryone, 'Mention @everyone, @here and All Roles'],
  [PermissionFlagsBits.ManageMessages, 'Manage Messages'],
  [PermissionFlagsBits.ManageNicknames, 'Manage Nicknames'],
  [PermissionFlagsBits.ManageThreads, 'Manage Threads'],
  [PermissionFlagsBits.ManageGuildExpressions, 'Manage Expressions'],
  [PermissionFlagsBits.ManageEvents, 'Manage Events'],
  [PermissionFlagsBits.MoveMembers, 'Move Members'],
  [PermissionFlagsBits.MuteMembers, 'Mute Members'],
  [PermissionFlagsBits.DeafenMembers, 'Deafen Members'],
  [PermissionFlagsBits.ViewAuditLog, 'View Audit Log'],
];

/** The first elevated permission a bitfield carries (its Discord name), or null. */
export function elevatedPermission(permissions: bigint): string | null {
  for (const [flag, name] of ELEVATED_PERMISSIONS) if ((permissions & flag) !== 0n) return name;
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

const MAX_NAME = 100;

/** Role names are admin-chosen text: one line, bounded, no quote characters that would break the sentence. */
function quoted(name: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = name.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  const cut = flat.length > MAX_NAME ? `${flat.slice(0, MAX_NAME - 1)}…` : flat;
  return `“${cut || 'unnamed role'}”`;
}

/** Every reason the bot could not assign each of `roleIds`, in input order (duplicates checked once). */
export function roleProblems(input: RoleProblemsInput): RoleProblem[] {
  const problems: RoleProblem[] = [];
  for (const roleId of new Set(input.roleIds)) {
    const role = input.roles.get(roleId);
    if (roleId === input.guildId) {
      problems.push({
        roleId,
        roleName: role?.name ?? '@everyone',
        problem: 'everyone',
        fix: 'Every member already has @everyone, so it cannot be a gated role: pick or create a dedicated role.',
      });
      continue;
    }
    if (!role) {
      problems.push({
        roleId,
        roleName: roleId,
        problem: 'missing',
        fix: `The role ${roleId} no longer exists in this server: pick an existing role in /gating setup.`,
      });
      continue;
    }
    const name = quoted(role.name);
    if (role.managed) {
      problems.push({
        roleId,
        roleName: role.name,
        problem: 'managed',
        fix: `${name} is managed by an integration (a bot, a booster or a linked role), so no one can assign it: pick or create a regular role.`,
      });
      continue;
    }
    const elevated = elevatedPermission(role.permissions);
    if (elevated !== null) {
      problems.push({
        roleId,
        roleName: role.name,
        problem: 'elevated',
        permission: elevated,
        fix: `${name} carries the ${elevated} permission, and the bot never hands out a role with moderator powers: pick a role without it, or remove ${elevated} from ${name}.`,
      });
      continue;
    }
    if (input.invoker && !input.invoker.bypass && role.position >= input.invoker.highestPosition) {
      problems.push({
        roleId,
        roleName: role.name,
        problem: 'above_invoker',
        fix: `${name} is at or above your highest role, so you could not give it by hand and cannot make the bot give it: pick a role below your own, or ask the server owner or an administrator.`,
      });
      continue;
    }
    if (role.position >= input.botHighestPosition) {
      problems.push({
        roleId,
        roleName: role.name,
        problem: 'above_bot',
        fix: `Move the bot’s role above ${name} in Server Settings → Roles.`,
      });
    }
    if (!input.botCanManageRoles) {
      problems.push({
        roleId,
        roleName: role.name,
        problem: 'no_permission',
        fix: `Give the bot’s role the Manage Roles permission in Server Settings → Roles, so it can assign ${name}.`,
      });
    }
  }
  return problems;
}
