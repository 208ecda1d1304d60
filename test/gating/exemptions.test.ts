import { describe, expect, it } from 'vitest';
import type { RoleInfo } from '../../src/gating/roles/hierarchy.ts';
import { exemptionOf, exemptRefusal, holdRemovals } from '../../src/gating/rules/exemptions.ts';
import { diffRoles, type RoleDecision } from '../../src/gating/rules/rules.ts';
import { exemptByText, gatingNoticeText } from '../../src/render/gatingNotices.ts';

const GUILD = '100';
const HUMAN = 'role-human';
const SPAM = 'role-spam';
const STAFF = 'role-staff';

const role = (id: string, position: number): RoleInfo => ({
  id,
  name: id,
  position,
  managed: false,
  permissions: 0n,
});

/** The rules want the human role gone and the spam role given. */
const decisions: RoleDecision[] = [
  { roleId: HUMAN, want: false, because: 'no unexpired isHuman credential is true' },
  { roleId: SPAM, want: true, because: 'flagged as spam' },
];

describe('exemptions hold removals, never additions', () => {
  const exemptions = [
    { kind: 'member' as const, targetId: 'u-partner' },
    { kind: 'role' as const, targetId: STAFF },
  ];

  it('an exempt member keeps the role the rules would take; the addition still goes through', () => {
    const member = { userId: 'u-partner', roleIds: new Set([HUMAN]) };
    const by = exemptionOf(member, exemptions);
    expect(by).toEqual({ kind: 'member' });
    const { diff, kept } = holdRemovals(diffRoles(decisions, member.roleIds), by);
    expect(diff.remove).toEqual([]);
    expect(diff.add.map((a) => a.roleId)).toEqual([SPAM]);
    expect(kept.map((k) => [k.roleId, k.because])).toEqual([
      [HUMAN, 'no unexpired isHuman credential is true'],
    ]);
  });

  it('a member holding an exempt role is covered by that role', () => {
    const member = { userId: 'u-staff', roleIds: new Set([HUMAN, STAFF]) };
    const by = exemptionOf(member, exemptions);
    expect(by).toEqual({ kind: 'role', roleId: STAFF });
    const { diff, kept } = holdRemovals(diffRoles(decisions, member.roleIds), by);
    expect(diff).toEqual({ add: [{ roleId: SPAM, because: 'flagged as spam' }], remove: [] });
    expect(kept).toHaveLength(1);
  });

  it('everyone else loses the role as the rules say; a role exemption is not a member exemption of that id', () => {
    const member = { userId: STAFF, roleIds: new Set([HUMAN]) };
    const by = exemptionOf(member, exemptions);
    expect(by).toBeNull();
    const { diff, kept } = holdRemovals(diffRoles(decisions, member.roleIds), by);
    expect(diff.remove.map((r) => r.roleId)).toEqual([HUMAN]);
    expect(kept).toEqual([]);
  });

  it('holds removals by a flag and of an unproven member too: an exempt member keeps every gated role', () => {
    const diff = {
      add: [],
      remove: [
        { roleId: HUMAN, because: 'spam takes it', byFlag: true },
        { roleId: SPAM, because: 'no proven identity', unproven: true },
      ],
    };
    expect(holdRemovals(diff, { kind: 'member' })).toEqual({
      diff: { add: [], remove: [] },
      kept: diff.remove,
    });
  });

  it('says which exemption held a removal, in the log channel line', () => {
    expect(exemptByText({ kind: 'role', roleId: STAFF }, 'en-US')).toBe(`exempt (role <@&${STAFF}>)`);
    const line = gatingNoticeText({
      kind: 'removal_exempt',
      userId: 'u-1',
      roleId: HUMAN,
      by: { kind: 'member' },
      because: 'no unexpired isHuman credential is true',
    });
    expect(line).toBe(
      `🛡️ Kept <@&${HUMAN}> on <@u-1>: exempt (member). The rules would remove it: no unexpired isHuman credential is true`,
    );
  });
});

describe('who may exempt: the rights to hand every gated role out by hand', () => {
  const gatedRoles = [role(HUMAN, 2), role(SPAM, 3)];
  const check = (
    highestPosition: number,
    target: Parameters<typeof exemptRefusal>[0]['target'],
    bypass = false,
  ) => exemptRefusal({ guildId: GUILD, invoker: { bypass, highestPosition }, gatedRoles, target });

  it('refuses a moderator below a gated role, for a member and for a role, naming that role', () => {
    expect(check(1, { kind: 'member' })).toEqual({
      code: 'gated_role_above',
      roleId: HUMAN,
      roleName: HUMAN,
    });
    expect(check(3, { kind: 'member' })).toEqual({ code: 'gated_role_above', roleId: SPAM, roleName: SPAM });
    expect(check(3, { kind: 'role', roleId: 'low', role: role('low', 1) })?.code).toBe('gated_role_above');
  });

  it('refuses a role at or above the invoker’s highest role, and one the guild does not have', () => {
    expect(check(5, { kind: 'role', roleId: 'own', role: role('own', 5) })).toEqual({
      code: 'target_above',
      roleId: 'own',
      roleName: 'own',
    });
    expect(check(5, { kind: 'role', roleId: 'gone', role: undefined })?.code).toBe('target_above');
  });

  it('names the role to exempt when it is above the invoker, even when a gated role is above them too', () => {
    expect(check(1, { kind: 'role', roleId: 'senior', role: role('senior', 6) })).toEqual({
      code: 'target_above',
      roleId: 'senior',
      roleName: 'senior',
    });
    expect(check(1, { kind: 'role', roleId: 'gone', role: undefined })?.code).toBe('target_above');
  });

  it('allows a moderator above every gated role to exempt a member (themselves too) or a lower role', () => {
    expect(check(4, { kind: 'member' })).toBeNull();
    expect(check(5, { kind: 'role', roleId: 'staff', role: role('staff', 4) })).toBeNull();
  });

  it('lets the owner or an administrator exempt anything but @everyone', () => {
    expect(check(0, { kind: 'role', roleId: 'top', role: role('top', 99) }, true)).toBeNull();
    expect(check(0, { kind: 'member' }, true)).toBeNull();
    expect(check(99, { kind: 'role', roleId: GUILD, role: role(GUILD, 0) }, true)).toEqual({
      code: 'everyone',
    });
  });
});
