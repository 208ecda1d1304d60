import { OverwriteType, PermissionFlagsBits as P } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import {
  ALL_PERMISSIONS,
  type AuthorityRole,
  type ChannelOverwrite,
  channelPermissions,
  type GuildAuthority,
  handOutRights,
  holdsRight,
  type MemberRoles,
  permissionsHoldRight,
  rolesBeyondMember,
  serverPermissions,
  TIMED_OUT_PERMISSIONS,
  timeoutHolds,
  timeoutLimits,
} from '../../src/gating/roles/authority.ts';

const GUILD = '100';
const OWNER = '900';

const role = (id: string, name: string, position: number, permissions = 0n): AuthorityRole => ({
  id,
  name,
  position,
  permissions,
});

const everyone = role(GUILD, '@everyone', 0, P.ViewChannel | P.SendMessages);
const verified = role('1', 'Verified', 2);
const spam = role('2', 'Spam', 3);
const helpers = role('3', 'Helpers', 4, P.ManageMessages);
const mods = role('4', 'Mods', 6, P.ManageRoles);
const managers = role('5', 'Managers', 7, P.ManageGuild);
const admins = role('6', 'Admins', 8, P.Administrator);

const guild: GuildAuthority = {
  guildId: GUILD,
  ownerId: OWNER,
  roles: new Map([everyone, verified, spam, helpers, mods, managers, admins].map((r) => [r.id, r])),
};

const member = (userId: string, ...roleIds: string[]): MemberRoles => ({ userId, roleIds });
const overwrite = (id: string, type: OverwriteType, allow: bigint, deny: bigint = 0n): ChannelOverwrite => ({
  id,
  type,
  allow,
  deny,
});

describe('serverPermissions', () => {
  it("is @everyone's permissions together with each held role's", () => {
    expect(serverPermissions(guild, member('7'))).toBe(P.ViewChannel | P.SendMessages);
    expect(serverPermissions(guild, member('7', '3', '4'))).toBe(
      P.ViewChannel | P.SendMessages | P.ManageMessages | P.ManageRoles,
    );
  });

  it('gives the owner every permission, with no role at all', () => {
    expect(serverPermissions(guild, member(OWNER))).toBe(ALL_PERMISSIONS);
  });

  it('gives an Administrator every permission', () => {
    expect(serverPermissions(guild, member('7', '6'))).toBe(ALL_PERMISSIONS);
  });

  it('ignores role ids the server does not have', () => {
    expect(serverPermissions(guild, member('7', '999'))).toBe(P.ViewChannel | P.SendMessages);
  });
});

describe('holdsRight', () => {
  it('moderate takes Manage Roles and export Manage Server, from roles only', () => {
    expect(holdsRight(guild, member('7', '4'), 'moderate')).toBe(true);
    expect(holdsRight(guild, member('7', '4'), 'export')).toBe(false);
    expect(holdsRight(guild, member('7', '5'), 'export')).toBe(true);
    expect(holdsRight(guild, member('7', '5'), 'moderate')).toBe(false);
    expect(holdsRight(guild, member('7', '1', '2', '3'), 'moderate')).toBe(false);
  });

  it('the owner and administrators hold both', () => {
    for (const who of [member(OWNER), member('7', '6')]) {
      expect(holdsRight(guild, who, 'moderate')).toBe(true);
      expect(holdsRight(guild, who, 'export')).toBe(true);
    }
  });
});

describe('permissionsHoldRight (a server list as Discord computed it, for the dashboard)', () => {
  it('the dashboard takes Manage Server; Administrator and ownership hold every right', () => {
    const server = (permissions: bigint, owner = false) => ({ permissions, owner });
    expect(permissionsHoldRight(server(P.ManageGuild), 'dashboard')).toBe(true);
    expect(permissionsHoldRight(server(P.ManageGuild), 'moderate')).toBe(false);
    expect(permissionsHoldRight(server(P.ManageRoles | P.ManageChannels), 'dashboard')).toBe(false);
    expect(permissionsHoldRight(server(P.Administrator), 'dashboard')).toBe(true);
    expect(permissionsHoldRight(server(P.Administrator), 'moderate')).toBe(true);
    expect(permissionsHoldRight(server(0n, true), 'dashboard')).toBe(true);
    expect(permissionsHoldRight(server(P.ViewChannel | P.SendMessages), 'dashboard')).toBe(false);
  });
});

describe('handOutRights and rolesBeyondMember', () => {
  it("is the member's highest role; @everyone counts for nothing", () => {
    expect(handOutRights(guild, member('7', GUILD, '1', '4'))).toEqual({ bypass: false, highestPosition: 6 });
    expect(handOutRights(guild, member('7'))).toEqual({ bypass: false, highestPosition: 0 });
  });

  it('names each role at or above the highest role held, and none for the owner or an Administrator', () => {
    const helper = member('7', '3');
    expect(rolesBeyondMember(guild, helper, ['1', '2'])).toEqual([]);
    expect(rolesBeyondMember(guild, helper, ['1', '3', '4', '4'])).toEqual([
      { roleId: '3', roleName: 'Helpers', problem: 'above_invoker' },
      { roleId: '4', roleName: 'Mods', problem: 'above_invoker' },
    ]);
    expect(rolesBeyondMember(guild, member(OWNER), ['6'])).toEqual([]);
    expect(rolesBeyondMember(guild, member('7', '6'), ['6', '5'])).toEqual([]);
  });

  it('leaves out a role the server no longer has', () => {
    expect(rolesBeyondMember(guild, member('7', '1'), ['gone'])).toEqual([]);
  });
});

describe('channelPermissions', () => {
  const base = P.ViewChannel | P.SendMessages;

  it('with no overwrites is the server-level permissions', () => {
    expect(channelPermissions(guild, member('7', '4'), [])).toBe(base | P.ManageRoles);
  });

  it('an overwrite granting Manage Permissions (the Manage Roles bit) shows in the channel, not at server level', () => {
    const ticket = [overwrite('7', OverwriteType.Member, P.ManageRoles)];
    expect(channelPermissions(guild, member('7'), ticket) & P.ManageRoles).toBe(P.ManageRoles);
    expect(holdsRight(guild, member('7'), 'moderate')).toBe(false);
  });

  it('applies @everyone, then the roles (their denies, then their allows), then the member', () => {
    const overwrites = [
      overwrite(GUILD, OverwriteType.Role, 0n, P.SendMessages),
      // One role denies what another allows: the allow wins, whatever the order.
      overwrite('1', OverwriteType.Role, 0n, P.ViewChannel),
      overwrite('2', OverwriteType.Role, P.ViewChannel | P.SendMessages),
      overwrite('3', OverwriteType.Role, 0n, P.SendMessages),
    ];
    expect(channelPermissions(guild, member('7'), overwrites)).toBe(P.ViewChannel);
    expect(channelPermissions(guild, member('7', '1'), overwrites)).toBe(0n);
    expect(channelPermissions(guild, member('7', '1', '2'), overwrites)).toBe(base);
    expect(channelPermissions(guild, member('7', '1', '2', '3'), overwrites) & base).toBe(base);
    // The member's own overwrite comes last: its deny beats every role's allow.
    const own = [...overwrites, overwrite('7', OverwriteType.Member, 0n, P.SendMessages)];
    expect(channelPermissions(guild, member('7', '2'), own)).toBe(P.ViewChannel);
    // Another member's overwrite is not theirs.
    const other = [...overwrites, overwrite('8', OverwriteType.Member, 0n, P.ViewChannel)];
    expect(channelPermissions(guild, member('7', '2'), other)).toBe(base);
  });

  it('a role overwrite with the @everyone role id is read once, as the @everyone overwrite', () => {
    const overwrites = [overwrite(GUILD, OverwriteType.Role, 0n, P.ViewChannel)];
    expect(channelPermissions(guild, member('7', GUILD), overwrites)).toBe(P.SendMessages);
  });

  it('an Administrator and the owner keep every permission whatever the overwrites', () => {
    const denyAll = [
      overwrite(GUILD, OverwriteType.Role, 0n, ALL_PERMISSIONS),
      overwrite('7', OverwriteType.Member, 0n, ALL_PERMISSIONS),
      overwrite(OWNER, OverwriteType.Member, 0n, ALL_PERMISSIONS),
    ];
    expect(channelPermissions(guild, member('7', '6'), denyAll)).toBe(ALL_PERMISSIONS);
    expect(channelPermissions(guild, member(OWNER), denyAll)).toBe(ALL_PERMISSIONS);
  });
});

describe('a timeout (communication_disabled_until in the future)', () => {
  const timedOut = (userId: string, ...roleIds: string[]): MemberRoles => ({
    userId,
    roleIds,
    timedOut: true,
  });

  it('timeoutHolds reads the time against now: past, absent or unreadable is no timeout', () => {
    const now = Date.parse('2026-01-01T00:00:00.000Z');
    expect(timeoutHolds('2026-01-01T00:00:01.000Z', now)).toBe(true);
    expect(timeoutHolds('2026-01-01T00:00:00.000Z', now)).toBe(false);
    expect(timeoutHolds('2025-12-31T23:59:59.000Z', now)).toBe(false);
    expect(timeoutHolds(null, now)).toBe(false);
    expect(timeoutHolds(undefined, now)).toBe(false);
    expect(timeoutHolds('not a time', now)).toBe(false);
  });

  it('leaves a moderator only View Channel and Read Message History: no right, nothing to hand out', () => {
    const mod = timedOut('7', '4', '5');
    expect(serverPermissions(guild, mod)).toBe(P.ViewChannel);
    expect(serverPermissions(guild, { ...mod, roleIds: ['4'] }) & TIMED_OUT_PERMISSIONS).toBe(P.ViewChannel);
    for (const right of ['moderate', 'export', 'dashboard'] as const) {
      expect(holdsRight(guild, member('7', '4', '5'), right)).toBe(true);
      expect(holdsRight(guild, mod, right)).toBe(false);
    }
    expect(timeoutLimits(guild, mod)).toBe(true);
    expect(handOutRights(guild, mod)).toEqual({ bypass: false, highestPosition: 0 });
    expect(rolesBeyondMember(guild, mod, ['1']).map((p) => p.roleName)).toEqual(['Verified']);
    const allowAll = [overwrite('7', OverwriteType.Member, P.ManageRoles | P.SendMessages)];
    expect(channelPermissions(guild, mod, allowAll)).toBe(P.ViewChannel);
  });

  it('takes nothing from the owner or an Administrator, as in Discord', () => {
    for (const exempt of [timedOut(OWNER), timedOut('7', '6')]) {
      expect(serverPermissions(guild, exempt)).toBe(ALL_PERMISSIONS);
      expect(holdsRight(guild, exempt, 'moderate')).toBe(true);
      expect(timeoutLimits(guild, exempt)).toBe(false);
      expect(handOutRights(guild, exempt).bypass).toBe(true);
    }
  });
});
