import { GatewayIntentBits, OverwriteType, PermissionFlagsBits } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { intentAllows } from '../../../fakes/discord/gateway.ts';
import { computeMentions, type MessageTarget } from '../../../fakes/discord/messages.ts';
import { RoleEditLimiter, tooManyRequests } from '../../../fakes/discord/rateLimit.ts';
import { compareSnowflakes, nextSnowflake } from '../../../fakes/discord/snowflake.ts';
import {
  ALL_PERMISSIONS,
  channelPermissions,
  createGuild,
  createState,
  highestRole,
  makeMember,
  makeRole,
  makeUser,
  memberPermissions,
  setOverwrite,
} from '../../../fakes/discord/state.ts';
import { validateMessagePayload } from '../../../fakes/discord/validate.ts';

function world() {
  const state = createState(makeUser({ id: '100', username: 'bot', bot: true }));
  const guild = createGuild(state, { id: '1', ownerId: '900' });
  return { state, guild };
}

describe('validateMessagePayload', () => {
  it('accepts a normal embed reply', () => {
    expect(
      validateMessagePayload(
        { embeds: [{ title: 't', description: 'd', url: 'https://web3.bio' }] },
        { isCreate: true, hasFiles: false },
      ),
    ).toBeNull();
  });

  it('answers 50006 for an empty new message, but allows empty edits', () => {
    expect(validateMessagePayload({ content: '  ' }, { isCreate: true, hasFiles: false })?.body.code).toBe(
      50_006,
    );
    expect(validateMessagePayload({ content: '' }, { isCreate: true, hasFiles: true })).toBeNull();
    expect(validateMessagePayload({ content: '' }, { isCreate: false, hasFiles: false })).toBeNull();
  });

  it('nests each limit problem under its path, as Discord does', () => {
    const error = validateMessagePayload(
      {
        content: 'x'.repeat(2001),
        embeds: [
          {
            title: 't'.repeat(257),
            fields: [{ name: '', value: 'v'.repeat(1025) }],
            image: { url: 'ftp://x' },
          },
        ],
      },
      { isCreate: true, hasFiles: false },
    );
    expect(error?.status).toBe(400);
    expect(error?.body.code).toBe(50_035);
    expect(error?.body.errors).toMatchObject({
      content: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
      embeds: {
        0: {
          title: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
          image: { url: { _errors: [{ code: 'URL_TYPE_INVALID_SCHEME' }] } },
          fields: {
            0: {
              name: { _errors: [{ code: 'BASE_TYPE_REQUIRED' }] },
              value: { _errors: [{ code: 'BASE_TYPE_MAX_LENGTH' }] },
            },
          },
        },
      },
    });
  });

  it('counts the 6000-character total across embeds', () => {
    const embeds = [1, 2].map(() => ({ description: 'd'.repeat(3500) }));
    expect(
      validateMessagePayload({ embeds }, { isCreate: true, hasFiles: false })?.body.errors,
    ).toMatchObject({
      embeds: { _errors: [{ code: 'MAX_EMBED_SIZE_EXCEEDED' }] },
    });
  });

  it('checks classic components: row width, duplicate custom ids, select options', () => {
    const button = (id: string) => ({ type: 2, style: 1, label: 'b', custom_id: id });
    const error = validateMessagePayload(
      {
        components: [
          { type: 1, components: [1, 2, 3, 4, 5, 6].map((n) => button(`b${n}`)) },
          { type: 1, components: [button('b1')] },
          { type: 1, components: [{ type: 3, custom_id: 's', options: [] }] },
        ],
      },
      { isCreate: true, hasFiles: false },
    );
    expect(error?.body.errors).toMatchObject({
      components: {
        0: { components: { _errors: [{ code: 'COMPONENT_LAYOUT_WIDTH_EXCEEDED' }] } },
        1: { components: { 0: { custom_id: { _errors: [{ code: 'COMPONENT_CUSTOM_ID_DUPLICATED' }] } } } },
        2: { components: { 0: { options: { _errors: [{ code: 'BASE_TYPE_MIN_LENGTH' }] } } } },
      },
    });
  });
});

describe('rate limits', () => {
  it('builds a Discord 429: float retry_after, whole-second Retry-After, bucket headers', () => {
    const answer = tooManyRequests({ retryAfterSeconds: 0.25, bucket: 'abc', limit: 5 });
    expect(answer.status).toBe(429);
    expect(answer.body).toEqual({ message: 'You are being rate limited.', retry_after: 0.25, global: false });
    expect(answer.headers).toMatchObject({
      'Retry-After': '1',
      'X-RateLimit-Limit': '5',
      'X-RateLimit-Remaining': '0',
      'X-RateLimit-Reset-After': '0.250',
      'X-RateLimit-Bucket': 'abc',
      'X-RateLimit-Scope': 'user',
    });
    expect(tooManyRequests({ retryAfterSeconds: 1, global: true }).headers?.['X-RateLimit-Global']).toBe(
      'true',
    );
  });

  it('counts role edits per guild in one-second windows', () => {
    const limiter = new RoleEditLimiter();
    expect(limiter.take('g', 0)).toBeNull();
    limiter.set('g', 2);
    expect(limiter.take('g', 1000)).toMatchObject({ headers: { 'X-RateLimit-Remaining': '1' } });
    expect(limiter.take('g', 1100)).toMatchObject({
      headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset-After': '0.900' },
    });
    const limited = limiter.take('g', 1500);
    expect(limited && 'limited' in limited ? limited.limited.body : null).toMatchObject({ retry_after: 0.5 });
    expect(limiter.take('other', 1500)).toBeNull();
    expect(limiter.take('g', 2000)).toMatchObject({ headers: { 'X-RateLimit-Remaining': '1' } });
    limiter.set('g', null);
    expect(limiter.take('g', 2001)).toBeNull();
  });
});

describe('guild model', () => {
  it('computes permissions from @everyone and roles; Administrator and owner get everything', () => {
    const { state, guild } = world();
    const user = makeUser({ id: '5', username: 'u' });
    state.users.set(user.id, user);
    const role = makeRole({ permissions: PermissionFlagsBits.KickMembers.toString() });
    guild.roles.set(role.id, role);
    const perms = memberPermissions(guild, makeMember(user, [role.id]));
    expect(perms & PermissionFlagsBits.KickMembers).toBe(PermissionFlagsBits.KickMembers);
    expect(perms & PermissionFlagsBits.SendMessages).toBe(PermissionFlagsBits.SendMessages);
    expect(perms & PermissionFlagsBits.BanMembers).toBe(0n);
    const admin = makeRole({ permissions: PermissionFlagsBits.Administrator.toString() });
    guild.roles.set(admin.id, admin);
    expect(memberPermissions(guild, makeMember(user, [admin.id]))).toBe(ALL_PERMISSIONS);
    const owner = guild.members.get('900');
    expect(owner && memberPermissions(guild, owner)).toBe(ALL_PERMISSIONS);
  });

  it('channel permissions: @everyone, then the roles together (denies, then allows), then the member', () => {
    const { state, guild } = world();
    const user = makeUser({ id: '5', username: 'u' });
    state.users.set(user.id, user);
    const quiet = makeRole({ id: '11' });
    const loud = makeRole({ id: '12' });
    guild.roles.set(quiet.id, quiet);
    guild.roles.set(loud.id, loud);
    const channel = guild.channels.get(guild.textChannelId);
    if (!channel) throw new Error('no channel');
    const { SendMessages: Send, ViewChannel: View, ManageRoles } = PermissionFlagsBits;
    const member = makeMember(user, [quiet.id, loud.id]);
    expect(channelPermissions(guild, member, channel)).toBe(memberPermissions(guild, member));

    setOverwrite(channel, { id: guild.everyoneRoleId, type: 'role', deny: Send });
    expect(channelPermissions(guild, member, channel) & Send).toBe(0n);
    // One role denies, another allows: the allow wins, whichever comes first.
    setOverwrite(channel, { id: quiet.id, type: 'role', deny: View });
    setOverwrite(channel, { id: loud.id, type: 'role', allow: View | Send });
    expect(channelPermissions(guild, member, channel) & (View | Send)).toBe(View | Send);
    expect(channelPermissions(guild, makeMember(user, [quiet.id]), channel) & (View | Send)).toBe(0n);
    // The member's own overwrite comes last; in it, the Manage Roles bit is Manage Permissions.
    setOverwrite(channel, { id: user.id, type: 'member', allow: ManageRoles, deny: Send });
    const here = channelPermissions(guild, member, channel);
    expect(here & (View | Send | ManageRoles)).toBe(View | ManageRoles);
    expect(memberPermissions(guild, member) & ManageRoles).toBe(0n);
    expect(channel.permission_overwrites?.find((o) => o.id === user.id)?.type).toBe(OverwriteType.Member);

    // Setting an overwrite again replaces it; neither allow nor deny removes it.
    setOverwrite(channel, { id: user.id, type: 'member' });
    expect(channel.permission_overwrites?.map((o) => o.id).sort()).toEqual([
      guild.everyoneRoleId,
      '11',
      '12',
    ]);
  });

  it('channel permissions: no overwrite restricts the owner or an Administrator', () => {
    const { state, guild } = world();
    const user = makeUser({ id: '5', username: 'u' });
    state.users.set(user.id, user);
    const admin = makeRole({ permissions: PermissionFlagsBits.Administrator.toString() });
    guild.roles.set(admin.id, admin);
    const channel = guild.channels.get(guild.textChannelId);
    if (!channel) throw new Error('no channel');
    setOverwrite(channel, { id: guild.everyoneRoleId, type: 'role', deny: ALL_PERMISSIONS });
    setOverwrite(channel, { id: user.id, type: 'member', deny: ALL_PERMISSIONS });
    expect(channelPermissions(guild, makeMember(user, [admin.id]), channel)).toBe(ALL_PERMISSIONS);
    const owner = guild.members.get('900');
    expect(owner && channelPermissions(guild, owner, channel)).toBe(ALL_PERMISSIONS);
    expect(channelPermissions(guild, makeMember(user, []), channel)).toBe(0n);
  });

  it('finds the highest role by position, the older role winning a tie', () => {
    const { guild } = world();
    const older = makeRole({ id: '10', position: 3 });
    const newer = makeRole({ id: '20', position: 3 });
    const lower = makeRole({ id: '5', position: 2 });
    for (const role of [older, newer, lower]) guild.roles.set(role.id, role);
    const member = makeMember(makeUser({ id: '5', username: 'u' }), [lower.id, newer.id, older.id]);
    expect(highestRole(guild, member).id).toBe('10');
    expect(highestRole(guild, makeMember(makeUser({ id: '6', username: 'v' }), [])).id).toBe(
      guild.everyoneRoleId,
    );
  });

  it('builds a guild with @everyone, a managed bot role, the bot and the owner as members', () => {
    const { guild } = world();
    expect(guild.roles.get('1')?.name).toBe('@everyone');
    expect(guild.roles.get(guild.botRoleId)).toMatchObject({ managed: true, tags: { bot_id: '100' } });
    expect(guild.members.get('100')?.roles).toEqual([guild.botRoleId]);
    expect(guild.members.has('900')).toBe(true);
    expect(guild.channels.get(guild.textChannelId)?.name).toBe('general');
  });
});

describe('gateway intents', () => {
  it('filters events as Discord does', () => {
    const { Guilds, GuildMembers, GuildMessages, DirectMessages } = GatewayIntentBits;
    expect(intentAllows(Guilds, 'GUILD_MEMBER_ADD', {})).toBe(false);
    expect(intentAllows(Guilds | GuildMembers, 'GUILD_MEMBER_UPDATE', {})).toBe(true);
    expect(intentAllows(0, 'GUILD_CREATE', {})).toBe(false);
    expect(intentAllows(0, 'INTERACTION_CREATE', {})).toBe(true);
    expect(intentAllows(GuildMessages, 'MESSAGE_CREATE', { guild_id: '1' })).toBe(true);
    expect(intentAllows(GuildMessages, 'MESSAGE_CREATE', {})).toBe(false);
    expect(intentAllows(DirectMessages, 'MESSAGE_CREATE', {})).toBe(true);
  });
});

describe('mentions', () => {
  it('lists only the pings allowed_mentions lets through', () => {
    const { state, guild } = world();
    const alice = makeUser({ id: '7', username: 'alice' });
    state.users.set(alice.id, alice);
    const target: MessageTarget = {
      state,
      origin: 'http://127.0.0.1',
      channelId: guild.textChannelId,
      guildId: guild.id,
    };
    const content = `<@7> <@!7> <@&${guild.botRoleId}> @here`;
    expect(computeMentions(target, content, null)).toEqual({
      mentions: [alice],
      mention_roles: [guild.botRoleId],
      mention_everyone: true,
    });
    expect(computeMentions(target, content, { parse: [] })).toEqual({
      mentions: [],
      mention_roles: [],
      mention_everyone: false,
    });
    expect(computeMentions(target, content, { parse: [], users: ['7'] }).mentions).toEqual([alice]);
  });
});

describe('snowflakes', () => {
  it('are unique and ordered numerically', () => {
    const ids = Array.from({ length: 1000 }, () => nextSnowflake());
    expect(new Set(ids).size).toBe(1000);
    expect([...ids].sort(compareSnowflakes)).toEqual(ids);
    expect(compareSnowflakes('9', '10')).toBe(-1);
  });
});
