/**
 * Who may do what, played by the threat model's actors through the stand-ins (issue #26): a member whose
 * only right is Manage Permissions on a ticket channel (the Manage Roles bit of `member.permissions` in
 * that channel), a moderator below a gated role, a moderator who cannot post in a channel, and crafted
 * clicks on the public verify panel. Every move is a slash command, a click or a suggestion; every
 * outcome is read where it lands: the answer, the store, the roles members hold, the messages.
 */
import {
  type APIApplicationCommandInteractionDataOption,
  ApplicationCommandOptionType,
  InteractionResponseType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage, InteractionResult } from '../../fakes/discord/server.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { VERIFY_PANEL_IDS } from '../../src/discord/verifyPanel.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  gatingGroupRun,
  hasRole,
  option,
  seen,
  setOverwrite,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, EPHEMERAL, isEphemeral, visibleMessage } from './harness.ts';
import { addOptions, addRule, buttonIds } from './ruleShortcuts.ts';

afterEach(closeGating);

const { ManageRoles, ManageGuild, ViewChannel, SendMessages } = PermissionFlagsBits;
const { Boolean: Bool, Channel, Role, String: Text, User } = ApplicationCommandOptionType;
const NEEDS_MANAGE_ROLES = '🔒 Manage Roles needed';
const CHECK_CREDENTIALS = 'Check web3 credentials';

interface World {
  g: GatingHarness;
  /** The guild's second text channel, where the ticket member holds Manage Permissions. */
  ticket: string;
  /** A role a rule gives, below the moderators'. */
  tier: string;
  /** Manage Roles and Manage Server from a role above every gated role. */
  moderator: string;
  /** No moderator role; the ticket channel's overwrite gives them Manage Permissions (1 << 28) there. */
  ticketer: string;
}

/** Gating set up by the owner with a role rule; Alice proved alice.eth; a moderator and a ticket member. */
async function world(): Promise<World> {
  const g = await startGating({ guild: { channelNames: ['general', 'ticket-7'] } });
  const ticket = [...g.h.guild.channels.keys()][1] ?? '';
  await setup(g);
  const tier = await addGuildRole(g, 'Tier', 4);
  await addRule(g, tier, 'score', '20');
  const mods = await addGuildRole(g, 'Mods', 5, ManageRoles | ManageGuild);
  const moderator = await addMember(g, 'moderator', { roles: [mods] });
  const ticketer = await addMember(g, 'ticketer');
  await setOverwrite(g, ticket, {
    id: ticketer,
    type: 'member',
    allow: ManageRoles | ViewChannel | SendMessages,
  });
  addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
  await verifyByRecord(g, 'alice.eth');
  expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
  return { g, ticket, tier, moderator, ticketer };
}

/** The permissions an interaction of `userId` in `channelId` carries, as Discord computes them. */
function carried(w: World, userId: string, channelId: string): bigint {
  const payload = w.g.h.discord.buildCommandInteraction({ name: 'gating', userId, channelId });
  return BigInt(payload.member?.permissions ?? '0');
}

/** Every privileged surface, run by `userId` in the ticket channel. */
function surfaces(w: World): [string, (userId: string) => Promise<InteractionResult>][] {
  const { g, ticket } = w;
  const sub =
    (name: string, options: APIApplicationCommandInteractionDataOption[] = []) =>
    (userId: string) =>
      gatingCommandRun(g, name, options, userId, ticket);
  const group =
    (name: string, s: string, options: APIApplicationCommandInteractionDataOption[] = []) =>
    (userId: string) =>
      gatingGroupRun(g, name, s, options, userId, ticket);
  return [
    [
      'setup',
      sub('setup', [option(Role, 'human-role', g.humanRoleId), option(Role, 'spam-role', g.spamRoleId)]),
    ],
    ['rules', sub('rules')],
    ['recheck', sub('recheck')],
    ['recheck confirm-removals', sub('recheck', [option(Bool, 'confirm-removals', true)])],
    ['check member', sub('check', [option(User, 'member', ALICE)])],
    ['preview', sub('preview')],
    ['status', sub('status')],
    ['panel', sub('panel', [option(Channel, 'channel', ticket)])],
    ['export', sub('export')],
    ['exempt add', group('exempt', 'add', [option(User, 'member', w.ticketer)])],
    ['exempt list', group('exempt', 'list')],
    ['exempt remove', group('exempt', 'remove', [option(User, 'member', w.ticketer)])],
    ['rule add', group('rule', 'add', addOptions(w.tier, 'score', '10'))],
    ['rule list', group('rule', 'list')],
    ['rule remove', group('rule', 'remove', [option(Text, 'rule', `${w.tier}:score:20`)])],
    [
      'the Check web3 credentials menu',
      (userId) =>
        g.h.discord.runCommand({
          name: CHECK_CREDENTIALS,
          type: 'user',
          targetId: ALICE,
          userId,
          channelId: ticket,
          timeoutMs: 15_000,
        }),
    ],
    ['disable', sub('disable')],
  ];
}

/** What a refusal must leave as it was: the store's gating state, roles held, panels, role edits. */
async function snapshot(w: World) {
  const { g, ticket } = w;
  const members = g.h.discord.state.guilds.get(g.guildId)?.members;
  return {
    settings: await g.gating.store.getGuildSettings(g.guildId),
    rules: await g.gating.store.listRuleConditions(g.guildId),
    exemptions: await g.gating.store.listExemptions(g.guildId),
    audit: (await g.gating.store.listAuditEvents({ guildId: g.guildId, limit: 500 })).map((e) => e.id),
    panel: await g.gating.store.getVerifyPanel(g.guildId, ticket),
    roles: [...(members?.values() ?? [])].map((m) => [m.user.id, [...m.roles].sort()]),
    roleEdits: g.h.discord.requests.filter((r) => r.path.includes('/roles/')).length,
    botMessagesInTicket: [...g.h.discord.state.messages.values()].filter(
      (m) => m.channel_id === ticket && m.author.id === g.h.discord.botUserId && !isEphemeral(m),
    ).length,
  };
}

/** Rule-removal suggestions for `userId`, typed in the ticket channel. */
async function ruleSuggestions(w: World, userId: string): Promise<{ name: string; value: string }[]> {
  const result = await w.g.h.discord.typeInOption({
    name: 'gating',
    focused: 'rule',
    value: '',
    userId,
    channelId: w.ticket,
    options: [
      {
        type: ApplicationCommandOptionType.SubcommandGroup,
        name: 'rule',
        options: [{ type: ApplicationCommandOptionType.Subcommand, name: 'remove', options: [] }],
      } as never,
    ],
  });
  expect(result.callbacks.map((c) => c.type)).toEqual([
    InteractionResponseType.ApplicationCommandAutocompleteResult,
  ]);
  return result.callbacks[0]?.data?.choices ?? [];
}

function refusedTitle(message: FakeMessage): string | undefined {
  return message.embeds[0]?.title;
}

describe('a member with Manage Permissions on one channel (a ticket)', () => {
  it('is refused by every privileged surface from that channel, sees no one’s identities, and nothing changes', async () => {
    const w = await world();
    const { g, ticketer, moderator, ticket } = w;
    // The attack is real: in the ticket channel their interactions carry the Manage Roles bit.
    expect(carried(w, ticketer, ticket) & ManageRoles).toBe(ManageRoles);
    expect(carried(w, ticketer, g.logChannelId) & ManageRoles).toBe(0n);

    const before = await snapshot(w);
    for (const [name, run] of surfaces(w)) {
      const answer = visibleMessage(await run(ticketer));
      expect(isEphemeral(answer), name).toBe(true);
      expect(refusedTitle(answer), name).toBe(NEEDS_MANAGE_ROLES);
      expect(seen(answer), name).toContain('server roles');
      expect(seen(answer), name).not.toContain('alice.eth');
      await g.gating.service.idle(g.guildId);
    }
    expect(await ruleSuggestions(w, ticketer)).toEqual([]);

    // Apply on a moderator's preview, clicked by the ticket member: checked again at click time, from
    // the one who clicked. The answer is private; the moderator's preview stays as it was.
    const preview = visibleMessage(
      await gatingGroupRun(g, 'rule', 'add', addOptions(w.tier, 'score', '10'), moderator, ticket),
    );
    const apply = buttonIds(preview).find((id) => id.startsWith('gating|ruleApply|')) ?? '';
    expect(apply).not.toBe('');
    const clicked = await g.h.click(preview, apply, undefined, { userId: ticketer, timeoutMs: 15_000 });
    expect(clicked.callbacks.map((c) => c.type)).toEqual([InteractionResponseType.ChannelMessageWithSource]);
    expect((clicked.callbacks[0]?.data.flags ?? 0) & EPHEMERAL).toBe(EPHEMERAL);
    expect(refusedTitle(visibleMessage(clicked))).toBe(NEEDS_MANAGE_ROLES);
    expect(g.h.discord.state.messages.get(preview.id)).toEqual(preview);
    await g.gating.service.idle(g.guildId);

    expect(await snapshot(w)).toEqual(before);
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(true);

    // The same surfaces answer the honest moderator in the same channel: the refusals are the check's.
    expect((await ruleSuggestions(w, moderator)).map((c) => c.value)).toEqual([`${w.tier}:score:20`]);
    const applied = await g.h.click(preview, apply, undefined, { userId: moderator, timeoutMs: 15_000 });
    expect(seen(visibleMessage(applied))).not.toContain('Manage Roles');
    expect((await g.gating.store.listRuleConditions(g.guildId)).map((c) => c.condition).sort()).toEqual([
      'score:10',
      'score:20',
    ]);
    for (const [name, run] of surfaces(w)) {
      const answer = visibleMessage(await run(moderator));
      expect(refusedTitle(answer), name).not.toBe(NEEDS_MANAGE_ROLES);
      expect(seen(answer), name).not.toContain('Manage Server');
      if (name === 'check member' || name === 'the Check web3 credentials menu')
        expect(seen(answer), name).toContain('alice.eth');
      await g.gating.service.idle(g.guildId);
    }
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(false);
  });

  it('Manage Roles in a channel is not Manage Roles: the ticket member is refused from every channel', async () => {
    const w = await world();
    const { g, ticketer } = w;
    for (const channelId of [g.logChannelId, w.ticket]) {
      const answer = visibleMessage(await gatingCommandRun(g, 'status', [], ticketer, channelId));
      expect(refusedTitle(answer)).toBe(NEEDS_MANAGE_ROLES);
    }
  });
});

describe('a moderator below a gated role', () => {
  it('cannot switch gating off nor release held removals; the owner can', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    // A rule's role above the moderator's own: a gated role they could not give or take by hand.
    const og = await addGuildRole(g, 'OG', 6);
    await addRule(g, og, 'score', '1000000');
    const mods = await addGuildRole(g, 'Junior mods', 5, ManageRoles | ManageGuild);
    const junior = await addMember(g, 'junior', { roles: [mods] });

    // Six members lose the human role at once: the breaker holds the removals (gatingAttacks.test.ts).
    const members: { id: string; name: string }[] = [];
    for (let i = 0; i < 6; i += 1) {
      const id = await addMember(g, `lost${i}`);
      addIdentity(g, `lost${i}.eth`, { discordHandle: `lost${i}` });
      await verifyByRecord(g, `lost${i}.eth`, id);
      members.push({ id, name: `lost${i}.eth` });
    }
    await waitFor(() => members.every((m) => hasRole(g, m.id, g.humanRoleId)), 'every member to be human');
    for (const m of members)
      g.h.upstream.world.setCredentials(m.name, gatingCredentials(m.name, { human: false }));
    expect(seen(visibleMessage(await gatingCommandRun(g, 'recheck')))).toContain(
      'Held back as a mass removal: 6',
    );
    await g.gating.service.idle(g.guildId);
    const held = async () => (await g.gating.service.guilds.status(g.guildId)).heldRemovals;
    expect(await held()).toBe(6);

    const off = visibleMessage(await gatingCommandRun(g, 'disable', [], junior));
    expect(isEphemeral(off)).toBe(true);
    expect(embedOf(off).title).toBe('🔒 Role gating stays on');
    expect(seen(off)).toContain('“OG” is at or above your highest role');
    expect(seen(off)).not.toContain('Verified Human');
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(true);

    const confirm = [option(Bool, 'confirm-removals', true)];
    const release = visibleMessage(await gatingCommandRun(g, 'recheck', confirm, junior));
    expect(embedOf(release).title).toBe('🔒 Removals still held');
    expect(seen(release)).toContain('“OG” is at or above your highest role');
    await g.gating.service.idle(g.guildId);
    expect(await held()).toBe(6);
    for (const m of members) expect(hasRole(g, m.id, g.humanRoleId)).toBe(true);
    // What does not change who holds a gated role stays theirs.
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status', [], junior)))).toContain('Verified Human');

    // The owner may: the removals go through, then gating goes off.
    expect(seen(visibleMessage(await gatingCommandRun(g, 'recheck', confirm)))).toContain(
      'Role changes queued: 6',
    );
    await g.gating.service.idle(g.guildId);
    for (const m of members) expect(hasRole(g, m.id, g.humanRoleId)).toBe(false);
    expect(embedOf(visibleMessage(await gatingCommandRun(g, 'disable'))).title).toBe(
      'Role gating turned off',
    );
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(false);
  });
});

describe('a moderator below a gated role runs /gating setup with roles below his own', () => {
  it('cannot swap out or drop the gated roles he could not take by hand; the owner can, and so can he below him', async () => {
    const g = await startGating();
    const elders = await addGuildRole(g, 'Elders', 6);
    const flagged = await addGuildRole(g, 'Flagged', 7);
    const mods = await addGuildRole(g, 'Junior mods', 5, ManageRoles | ManageGuild);
    const junior = await addMember(g, 'junior', { roles: [mods] });
    const human = (id: string) => option(Role, 'human-role', id);
    const spam = (id: string) => option(Role, 'spam-role', id);
    expect(
      embedOf(visibleMessage(await gatingCommandRun(g, 'setup', [human(elders), spam(flagged)]))).title,
    ).toBe('✅ Role gating set up');
    await g.gating.service.idle(g.guildId);
    const settings = () => g.gating.store.getGuildSettings(g.guildId);
    const events = async () =>
      (await g.gating.store.listAuditEvents({ guildId: g.guildId, limit: 500 })).length;
    const before = { settings: await settings(), events: await events() };

    // Both new roles are below him, so the old check let this through: Elders and Flagged would no longer
    // be taken from members who lose their credentials.
    const swap = visibleMessage(
      await gatingCommandRun(g, 'setup', [human(g.humanRoleId), spam(g.spamRoleId)], junior),
    );
    expect(isEphemeral(swap)).toBe(true);
    expect(embedOf(swap).title).toBe('❌ Role gating not set up');
    expect(seen(swap)).toContain('replaces or drops the gated roles below');
    expect(seen(swap)).toContain('“Elders” is at or above your highest role');
    expect(seen(swap)).toContain('“Flagged” is at or above your highest role');
    // Dropping the spam role alone (keeping the human role he could not give either way) is refused too.
    const drop = visibleMessage(await gatingCommandRun(g, 'setup', [human(g.humanRoleId)], junior));
    expect(seen(drop)).toContain('“Flagged” is at or above your highest role');
    expect(await settings()).toEqual(before.settings);
    expect(await events()).toBe(before.events);

    // The owner may swap them.
    expect(
      embedOf(visibleMessage(await gatingCommandRun(g, 'setup', [human(g.humanRoleId), spam(g.spamRoleId)])))
        .title,
    ).toBe('✅ Role gating set up');
    await g.gating.service.idle(g.guildId);
    expect(await settings()).toMatchObject({ humanRoleId: g.humanRoleId, spamRoleId: g.spamRoleId });
    // Now every gated role is below the junior: he may drop the spam role himself.
    const own = visibleMessage(await gatingCommandRun(g, 'setup', [human(g.humanRoleId)], junior));
    expect(embedOf(own).title).toBe('✅ Role gating set up');
    await g.gating.service.idle(g.guildId);
    expect(await settings()).toMatchObject({ humanRoleId: g.humanRoleId, spamRoleId: null });
  });
});

describe('posting the verify panel', () => {
  it('a moderator who cannot send messages in a channel cannot post the panel there; where they can, they do', async () => {
    const g = await startGating({ guild: { channelNames: ['general', 'announcements'] } });
    const announcements = [...g.h.guild.channels.keys()][1] ?? '';
    await setup(g);
    const mods = await addGuildRole(g, 'Mods', 5, ManageRoles);
    const moderator = await addMember(g, 'moderator', { roles: [mods] });
    // Only the bot's role may post in announcements; members read it.
    await setOverwrite(g, announcements, { id: g.guildId, type: 'role', deny: SendMessages });
    await setOverwrite(g, announcements, { id: g.h.guild.botRoleId, type: 'role', allow: SendMessages });
    const panels = (channelId: string) =>
      [...g.h.discord.state.messages.values()].filter(
        (m) =>
          m.channel_id === channelId && JSON.stringify(m.components ?? []).includes(VERIFY_PANEL_IDS.verify),
      );
    const post = (channelId: string, userId: string) =>
      gatingCommandRun(g, 'panel', [option(Channel, 'channel', channelId)], userId);

    const refused = visibleMessage(await post(announcements, moderator));
    expect(isEphemeral(refused)).toBe(true);
    expect(embedOf(refused).title).toBe('❌ Panel not posted');
    expect(seen(refused)).toContain('You cannot post in **#announcements** yourself');
    expect(seen(refused)).toContain('**Send Messages**');
    expect(panels(announcements)).toEqual([]);
    expect(await g.gating.store.getVerifyPanel(g.guildId, announcements)).toBeUndefined();

    expect(seen(visibleMessage(await post(g.logChannelId, moderator)))).toContain(
      'The verify panel is now in',
    );
    expect(panels(g.logChannelId)).toHaveLength(1);
    // The owner may post anywhere, and the bot can post in announcements: the refusal was the moderator's.
    expect(seen(visibleMessage(await post(announcements, g.ownerId)))).toContain(
      'The verify panel is now in',
    );
    expect(panels(announcements)).toHaveLength(1);
  });
});

describe('clicks on a message that is not yours answer privately', () => {
  it('crafted ruleApply and whoami|sign clicks on the public panel leave it as it was and run nothing', async () => {
    const g = await startGating();
    await setup(g);
    const tier = await addGuildRole(g, 'Tier', 4);
    await gatingCommandRun(g, 'panel', [option(Channel, 'channel', g.logChannelId)]);
    const panel = [...g.h.discord.state.messages.values()].find((m) =>
      JSON.stringify(m.components ?? []).includes(VERIFY_PANEL_IDS.verify),
    );
    if (!panel) throw new Error('no panel');
    expect(panel.interaction_metadata).toBeUndefined();
    const before = structuredClone(panel);
    const address = '0x000000000000000000000000000000000000dEaD';
    const rulesBefore = await g.gating.store.listRuleConditions(g.guildId);

    for (const [customId, userId] of [
      [`gating|ruleApply|${tier}|score:1|-`, ALICE],
      [`gating|ruleApply|${tier}|score:1|-`, g.ownerId],
      [`whoami|sign|${address}`, ALICE],
    ] as const) {
      const result = await g.h.discord.clickComponent({
        message: panel,
        customId,
        userId,
        crafted: true,
        timeoutMs: 15_000,
      });
      expect(
        result.callbacks.map((c) => c.type),
        customId,
      ).toEqual([InteractionResponseType.ChannelMessageWithSource]);
      expect((result.callbacks[0]?.data.flags ?? 0) & EPHEMERAL, customId).toBe(EPHEMERAL);
      expect(JSON.stringify(result.callbacks[0]?.data), customId).not.toContain('/verify/');
    }
    await g.gating.service.idle(g.guildId);
    expect(g.h.discord.state.messages.get(panel.id)).toEqual(before);
    expect(
      g.h.discord.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${panel.id}`)),
    ).toEqual([]);
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual(rulesBefore);
    expect(g.h.logs.filter((l) => l.msg === 'click on a component the message does not carry')).toHaveLength(
      3,
    );

    // The panel's own buttons still work, privately, and leave it as it was.
    const status = await g.h.click(panel, VERIFY_PANEL_IDS.status, undefined, {
      userId: ALICE,
      timeoutMs: 15_000,
    });
    expect(isEphemeral(visibleMessage(status))).toBe(true);
    expect(g.h.discord.state.messages.get(panel.id)).toEqual(before);
  });

  it('a crafted whoami|sign click on the member’s own messages that carry no such button runs nothing either', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
    await verifyByRecord(g, 'alice.eth');
    const whois = visibleMessage(await g.h.run('whois', { identity: 'alice.eth' }, { userId: ALICE }));
    const whoami = visibleMessage(await g.h.run('whoami', {}, { userId: ALICE }));
    expect(isEphemeral(whois)).toBe(false);
    const crafted = `whoami|sign|0x000000000000000000000000000000000000dEaD`;
    for (const message of [whois, whoami]) {
      const before = structuredClone(g.h.discord.state.messages.get(message.id));
      const result = await g.h.discord.clickComponent({
        message,
        customId: crafted,
        userId: ALICE,
        crafted: true,
      });
      expect(result.callbacks.map((c) => c.type)).toEqual([InteractionResponseType.ChannelMessageWithSource]);
      expect((result.callbacks[0]?.data.flags ?? 0) & EPHEMERAL).toBe(EPHEMERAL);
      expect(JSON.stringify(result.callbacks[0]?.data)).not.toContain('/verify/');
      expect(g.h.discord.state.messages.get(message.id)).toEqual(before);
    }
  });
});
