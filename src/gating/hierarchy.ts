/**
 * Pure checks of whether the bot can assign the gated roles: Discord lets a bot add or remove a role
 * only with Manage Roles, never @everyone or an integration-managed role, and only below its own
 * highest role. Each problem names the role and what an admin should do about it.
 * @see https://discord.com/developers/docs/topics/permissions#permission-hierarchy
 */

export type RoleProblemKind = 'missing' | 'everyone' | 'managed' | 'above_bot' | 'no_permission';

export interface RoleProblem {
  roleId: string;
  roleName: string;
  problem: RoleProblemKind;
  /** One sentence naming the role and the fix. */
  fix: string;
}

export interface RoleInfo {
  id: string;
  name: string;
  /** Sorted position, higher is above (discord.js `Role.position`). */
  position: number;
  managed: boolean;
}

export interface RoleProblemsInput {
  guildId: string;
  roleIds: string[];
  roles: ReadonlyMap<string, RoleInfo>;
  botHighestPosition: number;
  botCanManageRoles: boolean;
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
