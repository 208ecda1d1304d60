/**
 * `/gating exempt` (issue #19): members and roles gating never takes a gated role from, played through
 * the real bot against the stand-in Discord and Web3.bio: a lapsed credential kept by an exemption while
 * others lose it, additions still given, the log channel and `/gating check` saying why, the escalation
 * a moderator with partial rights would try, and a list that stays inert with hostile names.
 */
import {
  type APIApplicationCommandInteractionDataOption,
  ApplicationCommandOptionType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/interactions.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import {
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  gatingGroupRun,
  hasRole,
  logChannelMessages,
  memberOf,
  option,
  roleEdits,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { messageBodies, visibleMessage } from './harness.ts';

afterEach(closeGating);

const { Role, User } = ApplicationCommandOptionType;
const MODERATOR = PermissionFlagsBits.ManageRoles | PermissionFlagsBits.ManageGuild;

/** Plays `/gating exempt <sub>` by `userId` (default: the guild owner). */
function exempt(
  g: GatingHarness,
  sub: 'add' | 'remove' | 'list',
  options: APIApplicationCommandInteractionDataOption[] = [],
  userId = g.ownerId,
): Promise<InteractionResult> {
  return gatingGroupRun(g, 'exempt', sub, options, userId);
}

const said = async (result: Promise<InteractionResult>) => seen(visibleMessage(await result));
const exemptionsOf = (g: GatingHarness) => g.gating.store.listExemptions(g.guildId);
const logLines = (g: GatingHarness) => logChannelMessages(g).flatMap((m) => m.content.split('\n'));

/** A member proven by record, holding the human role. */
async function human(g: GatingHarness, username: string, roles: string[] = []): Promise<string> {
  const id = await addMember(g, username, { roles });
  addIdentity(g, `${username}.eth`, { discordHandle: username });
  await verifyByRecord(g, `${username}.eth`, id);
  await waitFor(() => hasRole(g, id, g.humanRoleId), `${username} to be human`);
  return id;
}

function lapse(g: GatingHarness, username: string): void {
  g.h.upstream.world.setCredentials(
    `${username}.eth`,
    gatingCredentials(`${username}.eth`, { human: false }),
  );
}

async function addRole(g: GatingHarness, name: string, position: number, permissions = 0n): Promise<string> {
  const role = g.h.discord.addRole(g.guildId, { name, position, permissions: permissions.toString() });
  await waitFor(
    () => g.h.bot.client.guilds.cache.get(g.guildId)?.roles.cache.has(role.id) === true,
    `the ${name} role to reach the client`,
  );
  return role.id;
}

describe('an exemption keeps gated roles; additions still apply', () => {
  it('exempt staff keep the human role through re-checks while others lose it; the log and /gating check say why', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const staffRole = await addRole(g, 'Staff', 1);
    const staff = await human(g, 'staffer', [staffRole]);
    const other = await human(g, 'plainer');

    expect(await said(exempt(g, 'add', [option(Role, 'role', staffRole)]))).toContain(
      'Members holding **Staff** are exempt',
    );
    lapse(g, 'staffer');
    lapse(g, 'plainer');
    // Two whole-guild passes: an automated removal needs the loss seen twice.
    for (let pass = 0; pass < 2; pass += 1) {
      await gatingCommandRun(g, 'recheck');
      await g.gating.service.idle(g.guildId);
    }

    expect(hasRole(g, other, g.humanRoleId)).toBe(false);
    expect(hasRole(g, staff, g.humanRoleId)).toBe(true);
    expect(roleEdits(g, staff, g.humanRoleId, 'DELETE')).toHaveLength(0);
    expect(await g.gating.store.listPendingLosses(g.guildId, staff)).toEqual([]);

    await waitFor(() => logLines(g).some((l) => l.startsWith('🛡️')), 'the log line of the kept role');
    const kept = logLines(g).filter((l) => l.startsWith('🛡️'));
    // Told once, not once per pass.
    expect(kept).toHaveLength(1);
    expect(kept[0]).toContain(
      `🛡️ Kept <@&${g.humanRoleId}> on <@${staff}>: exempt (role <@&${staffRole}>). The rules would remove it: no unexpired isHuman credential is true`,
    );
    expect(logChannelMessages(g).every((m) => m.mention_roles.length === 0 && m.mentions.length === 0)).toBe(
      true,
    );

    const check = await said(gatingCommandRun(g, 'check', [option(User, 'member', staff)]));
    expect(check).toContain('Removals an exemption holds back:');
    expect(check).toContain('🛡️ **Verified Human**: kept: exempt (role **Staff**).');
  });

  it('exempt role holders losing a credential together are no mass removal: nothing held, no alert', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const staffRole = await addRole(g, 'Staff', 1);
    const staff: string[] = [];
    for (let i = 0; i < 6; i += 1) staff.push(await human(g, `crew${i}`, [staffRole]));
    await said(exempt(g, 'add', [option(Role, 'role', staffRole)]));
    for (let i = 0; i < 6; i += 1) lapse(g, `crew${i}`);

    for (let pass = 0; pass < 2; pass += 1) {
      const text = await said(gatingCommandRun(g, 'recheck'));
      expect(text).not.toContain('Held back');
      await g.gating.service.idle(g.guildId);
    }
    for (const id of staff) expect(hasRole(g, id, g.humanRoleId)).toBe(true);
    expect(await g.gating.store.listPendingLosses(g.guildId)).toEqual([]);
    expect(logLines(g).some((l) => l.includes('Held back'))).toBe(false);
    expect(logLines(g).filter((l) => l.startsWith('🛡️'))).toHaveLength(6);
  });

  it('an exempt member still gets roles: the human role when proven, the spam role when flagged', async () => {
    const g = await startGating();
    await setup(g);
    const partner = await addMember(g, 'partner');
    expect(await said(exempt(g, 'add', [option(User, 'member', partner)]))).toContain(
      'gating no longer removes a gated role from them',
    );
    addIdentity(g, 'partner.eth', { discordHandle: 'partner' });
    await verifyByRecord(g, 'partner.eth', partner);
    await waitFor(() => hasRole(g, partner, g.humanRoleId), 'the human role');

    g.h.upstream.world.setCredentials('partner.eth', gatingCredentials('partner.eth', { spam: true }));
    await gatingCommandRun(g, 'recheck', [option(User, 'member', partner)]);
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, partner, g.spamRoleId), 'the spam role');
    // A spam flag takes the human role from others; the exemption keeps it.
    expect(hasRole(g, partner, g.humanRoleId)).toBe(true);
  });

  it('a removal queued before the exemption was added is held when the worker reaches it', async () => {
    const g = await startGating();
    await setup(g);
    const member = await human(g, 'early');
    await said(exempt(g, 'add', [option(User, 'member', member)]));
    await g.gating.store.enqueueRoleChange({
      guildId: g.guildId,
      userId: member,
      roleId: g.humanRoleId,
      op: 'remove',
      reason: 'web3 gating: queued before the exemption',
    });
    // Another member's addition sends the guild's queue.
    await human(g, 'later');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, member, g.humanRoleId)).toBe(true);
    expect(roleEdits(g, member, g.humanRoleId, 'DELETE')).toHaveLength(0);
    expect(await g.gating.store.openRoleChanges(g.guildId, member)).toEqual([]);
  });

  it('remove restores normal removals', async () => {
    const g = await startGating();
    await setup(g);
    const member = await human(g, 'helper');
    await said(exempt(g, 'add', [option(User, 'member', member)]));
    lapse(g, 'helper');

    const held = await said(gatingCommandRun(g, 'recheck', [option(User, 'member', member)]));
    await g.gating.service.idle(g.guildId);
    expect(held).toContain('their roles already match');
    expect(hasRole(g, member, g.humanRoleId)).toBe(true);

    expect(await said(exempt(g, 'remove', [option(User, 'member', member)]))).toContain(
      'is no longer exempt',
    );
    expect(await exemptionsOf(g)).toEqual([]);
    expect(await said(exempt(g, 'remove', [option(User, 'member', member)]))).toContain('was not exempt');
    await gatingCommandRun(g, 'recheck', [option(User, 'member', member)]);
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, member, g.humanRoleId)).toBe(false);
  });
});

describe('escalation: a moderator cannot exempt their way past the role hierarchy', () => {
  it('below a gated role: exempting themselves or their role is refused with the reason, nothing stored', async () => {
    const g = await startGating();
    await setup(g);
    // Manage Roles and Manage Server through a role at position 1: below Verified Human (2) and Spam (3).
    const moderator = await addMember(g, 'mod', { permissions: MODERATOR });
    const modRole = memberOf(g, moderator).roles[0] ?? '';

    const themselves = await said(exempt(g, 'add', [option(User, 'member', moderator)], moderator));
    expect(themselves).toContain('Exemption refused');
    expect(themselves).toContain('You cannot manage the gated role **Verified Human**');
    expect(themselves).toContain('Nothing changed');
    // Their own role is their highest: the refusal names it (perms-10000020, escaped), the role they asked about.
    const ownRole = await said(exempt(g, 'add', [option(Role, 'role', modRole)], moderator));
    expect(ownRole).toContain('Exemption refused');
    expect(ownRole).toMatch(/The role \*\*perms\\?-10000020\*\* is not below your highest role/);
    expect(ownRole).not.toContain('Verified Human');
    expect(ownRole).toContain('Nothing changed');
    expect(await exemptionsOf(g)).toEqual([]);
    const audit = await g.gating.store.listAuditEvents({ guildId: g.guildId, userId: moderator });
    expect(audit.filter((e) => e.kind.startsWith('exemption'))).toEqual([]);

    // Nor can they lift the owner's exemption of someone else, which would make the bot take the role.
    const staff = await human(g, 'staffer');
    await said(exempt(g, 'add', [option(User, 'member', staff)]));
    const lift = await said(exempt(g, 'remove', [option(User, 'member', staff)], moderator));
    expect(lift).toContain('You cannot manage the gated role **Verified Human**');
    expect((await exemptionsOf(g)).map((e) => e.targetId)).toEqual([staff]);
  });

  it('above the gated roles: a role at or above their own stays refused; a member is allowed', async () => {
    const g = await startGating();
    await setup(g);
    const mods = await addRole(g, 'Mods', 5, MODERATOR);
    const senior = await addRole(g, 'Senior', 6);
    const moderator = await addMember(g, 'mod2', { roles: [mods] });

    for (const [roleId, name] of [
      [senior, 'Senior'],
      [mods, 'Mods'],
    ] as const) {
      const text = await said(exempt(g, 'add', [option(Role, 'role', roleId)], moderator));
      expect(text).toContain(`The role **${name}** is not below your highest role`);
    }
    expect(await exemptionsOf(g)).toEqual([]);
    expect(await said(exempt(g, 'add', [option(Role, 'role', g.guildId)]))).toContain(
      'The role every member holds cannot be exempt',
    );

    expect(await said(exempt(g, 'add', [option(User, 'member', moderator)], moderator))).toContain(
      'is exempt',
    );
    expect(await exemptionsOf(g)).toEqual([expect.objectContaining({ kind: 'member', addedBy: moderator })]);
  });
});

describe('a refusal names the role that is the problem', () => {
  it('exempting a role above a moderator who is also below the gated roles names that role, not a gated one', async () => {
    const g = await startGating();
    await setup(g);
    // Manage Roles through a role at position 1: below Verified Human (2) and Spam (3), and below Senior.
    const moderator = await addMember(g, 'mod3', { permissions: MODERATOR });
    const senior = await addRole(g, 'Senior', 6);

    const text = await said(exempt(g, 'add', [option(Role, 'role', senior)], moderator));
    expect(text).toContain('The role **Senior** is not below your highest role');
    expect(text).not.toContain('Verified Human');
    const lift = await said(exempt(g, 'remove', [option(Role, 'role', senior)], moderator));
    expect(lift).toContain('The role **Senior** is not below your highest role');
    expect(await exemptionsOf(g)).toEqual([]);
  });
});

describe('members are told apart, not named by display name alone', () => {
  /** Two members who both go by "Alex" in the server (their nickname), with their own usernames. */
  async function twoAlexes(g: GatingHarness): Promise<[string, string]> {
    const ids: string[] = [];
    for (const username of ['alex_one', 'alex_two']) {
      const id = await addMember(g, username);
      // The bot caches no members: it reads them from the interaction or from Discord when it needs them.
      g.h.discord.updateMember(g.guildId, id, { nick: 'Alex' });
      ids.push(id);
    }
    return [ids[0] ?? '', ids[1] ?? ''];
  }

  /** What a mention-free answer says: allowed_mentions parse [] on every body, nobody pinged. */
  async function inert(g: GatingHarness, result: Promise<InteractionResult>): Promise<string> {
    const done = await result;
    for (const body of messageBodies(g.h.discord, done.interactionId)) {
      expect(body.allowed_mentions).toEqual({ parse: [] });
    }
    const message = visibleMessage(done);
    expect(message.mentions).toEqual([]);
    expect(message.mention_everyone).toBe(false);
    return seen(message);
  }

  /** `**Alex** (alex_one)`, the underscore escaped or not. */
  const named = (username: string) => new RegExp(`\\*\\*Alex\\*\\* \\(${username.replace('_', '\\\\?_')}\\)`);

  it('exempting, listing and re-checking two members both called Alex names each by display name and username', async () => {
    const g = await startGating();
    await setup(g);
    const [one, two] = await twoAlexes(g);

    expect(await inert(g, exempt(g, 'add', [option(User, 'member', one)]))).toMatch(named('alex_one'));
    expect(await inert(g, exempt(g, 'add', [option(User, 'member', two)]))).toMatch(named('alex_two'));

    const list = await inert(g, exempt(g, 'list'));
    const lines = list.split('\n').filter((l) => l.includes('added by'));
    expect(lines).toHaveLength(2);
    expect(lines[0]).not.toBe(lines[1]);
    expect(list).toMatch(named('alex_one'));
    expect(list).toMatch(named('alex_two'));

    const recheck = await inert(g, gatingCommandRun(g, 'recheck', [option(User, 'member', two)]));
    expect(recheck).toMatch(named('alex_two'));
    expect(recheck).not.toMatch(named('alex_one'));
    const check = await inert(g, gatingCommandRun(g, 'check', [option(User, 'member', one)]));
    expect(check).toMatch(named('alex_one'));
  });
});

describe('/gating exempt list', () => {
  it('shows members and roles with who added them, inert with hostile names', async () => {
    const g = await startGating();
    await setup(g);
    const hostileName = '@everyone **bold** <@&1> [x](https://evil.example)';
    const member = await addMember(g, hostileName);
    const role = await addRole(g, '@here ||spoiler|| <@123456789012345678>', 1);
    await said(exempt(g, 'add', [option(User, 'member', member)]));
    await said(exempt(g, 'add', [option(Role, 'role', role)]));

    const result = await exempt(g, 'list');
    for (const body of messageBodies(g.h.discord, result.interactionId)) {
      expect(body.allowed_mentions).toEqual({ parse: [] });
    }
    const message = visibleMessage(result);
    expect(message.mentions).toEqual([]);
    expect(message.mention_roles).toEqual([]);
    expect(message.mention_everyone).toBe(false);
    const text = seen(message);
    expect(text).toContain('Members');
    expect(text).toContain('Roles');
    expect(text).toContain('added by');
    expect(text).not.toMatch(/<@|@everyone|@here|\[x\]\(/);
  });
});
