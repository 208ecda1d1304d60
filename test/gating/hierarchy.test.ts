import { describe, expect, it } from 'vitest';
import {
  type RoleInfo,
  type RoleProblem,
  type RoleProblemsInput,
  roleProblems,
} from '../../src/gating/roles/hierarchy.ts';
import { registerCatalog } from '../../src/i18n/index.ts';
import { roleProblemText } from '../../src/render/gatingNotices.ts';

/** The sentence render writes for a problem (the fix an admin reads). */
const text = (p: RoleProblem | undefined) => (p ? roleProblemText(p) : '');

const GUILD = '100';

function roles(...list: RoleInfo[]): Map<string, RoleInfo> {
  return new Map(list.map((r) => [r.id, r]));
}

const everyone: RoleInfo = { id: GUILD, name: '@everyone', position: 0, managed: false, permissions: 0n };
const verified: RoleInfo = { id: '1', name: 'Verified', position: 2, managed: false, permissions: 0n };
const spam: RoleInfo = { id: '2', name: 'Spam', position: 3, managed: false, permissions: 0n };
const botRole: RoleInfo = { id: '3', name: 'web3bio-bot', position: 5, managed: true, permissions: 0n };
const admins: RoleInfo = { id: '4', name: 'Admins', position: 8, managed: false, permissions: 0n };

function input(over: Partial<RoleProblemsInput>): RoleProblemsInput {
  return {
    guildId: GUILD,
    roleIds: [],
    roles: roles(everyone, verified, spam, botRole, admins),
    botHighestPosition: 5,
    botCanManageRoles: true,
    ...over,
  };
}

describe('roleProblems', () => {
  it('finds nothing wrong with regular roles below the bot', () => {
    expect(roleProblems(input({ roleIds: ['1', '2'] }))).toEqual([]);
  });

  it('refuses a role at or above the bot’s highest role, naming the role and the fix', () => {
    const problems = roleProblems(input({ roleIds: ['4', '1'], botHighestPosition: 5 }));
    expect(problems).toEqual([{ roleId: '4', roleName: 'Admins', problem: 'above_bot' }]);
    expect(text(problems[0])).toBe('Move the bot’s role above “Admins” in Server Settings → Roles.');
    const tie = roleProblems(input({ roleIds: ['2'], botHighestPosition: 3 }));
    expect(tie.map((p) => p.problem)).toEqual(['above_bot']);
  });

  it('refuses @everyone, managed roles and roles that no longer exist', () => {
    const problems = roleProblems(input({ roleIds: [GUILD, '3', '999'] }));
    expect(problems.map((p) => [p.roleId, p.problem])).toEqual([
      [GUILD, 'everyone'],
      ['3', 'managed'],
      ['999', 'missing'],
    ]);
    expect(text(problems[1])).toContain('“web3bio-bot”');
    expect(text(problems[2])).toContain('999');
    expect(text(problems[2])).toContain('/gating setup');
  });

  it('reports a missing Manage Roles permission for each role it would block', () => {
    const problems = roleProblems(input({ roleIds: ['1', '2'], botCanManageRoles: false }));
    expect(problems.map((p) => [p.roleId, p.problem])).toEqual([
      ['1', 'no_permission'],
      ['2', 'no_permission'],
    ]);
    expect(text(problems[0])).toBe(
      'Give the bot’s role the Manage Roles permission in Server Settings → Roles, so it can assign “Verified”.',
    );
  });

  it('lists both problems when a role is above the bot and the bot lacks the permission', () => {
    const problems = roleProblems(input({ roleIds: ['4'], botCanManageRoles: false }));
    expect(problems.map((p) => p.problem)).toEqual(['above_bot', 'no_permission']);
  });

  it('checks a role listed twice once', () => {
    expect(roleProblems(input({ roleIds: ['4', '4'] }))).toHaveLength(1);
  });

  it('keeps hostile role names on one bounded line', () => {
    const long: RoleInfo = {
      id: '7',
      name: `evil\nname\u0000${'x'.repeat(300)}`,
      position: 9,
      managed: false,
      permissions: 0n,
    };
    const [problem] = roleProblems(input({ roleIds: ['7'], roles: roles(long) }));
    expect(text(problem)).not.toContain('\n');
    expect(text(problem)).not.toContain('\u0000');
    expect(text(problem).length).toBeLessThan(200);
    expect(problem?.roleName).toBe(long.name);
  });

  it('refuses a role with an elevated permission, naming it, before anything else', () => {
    const admin: RoleInfo = { id: '8', name: 'Helpers', position: 1, managed: false, permissions: 8n };
    const [problem] = roleProblems(input({ roleIds: ['8'], roles: roles(admin) }));
    expect(problem).toEqual({
      roleId: '8',
      roleName: 'Helpers',
      problem: 'elevated',
      permission: 'Administrator',
    });
    expect(text(problem)).toContain('carries the Administrator permission');
  });

  it('names the permission as the member’s Discord client does, from the catalog', () => {
    const mods: RoleInfo = { id: '9', name: 'Mods', position: 1, managed: false, permissions: 1n << 5n };
    const [problem] = roleProblems(input({ roleIds: ['9'], roles: roles(mods) }));
    expect(problem?.permission).toBe('ManageGuild');
    expect(text(problem)).toContain('carries the Manage Server permission');
    registerCatalog('x-perm', { 'gating.permission.ManageGuild': 'Serveur gérer' });
    expect(
      roleProblemText({ ...problem, roleId: '9', roleName: 'Mods', problem: 'elevated' }, 'x-perm'),
    ).toContain('Serveur gérer');
  });

  it('refuses a role at or above the invoker’s highest, unless the invoker may hand out anything', () => {
    const low = { bypass: false, highestPosition: 3 };
    expect(
      roleProblems(input({ roleIds: ['1', '2'], invoker: low })).map((p) => [p.roleId, p.problem]),
    ).toEqual([['2', 'above_invoker']]);
    expect(roleProblems(input({ roleIds: ['2'], invoker: { bypass: true, highestPosition: 0 } }))).toEqual(
      [],
    );
  });
});
