import type {
  APIApplicationCommand,
  APIDMChannel,
  APIEmoji,
  APIGuild,
  APIGuildMember,
  APIMessage,
  APIRole,
  APISticker,
  APITextChannel,
  APIUser,
  ChannelFlags,
  GatewayGuildCreateDispatchData,
  GuildMemberFlags,
  GuildSystemChannelFlags,
  RESTAPIPartialCurrentUserGuild,
  RoleFlags,
} from 'discord-api-types/v10';
import {
  ChannelType,
  GuildDefaultMessageNotifications,
  GuildExplicitContentFilter,
  GuildMFALevel,
  GuildNSFWLevel,
  GuildPremiumTier,
  GuildVerificationLevel,
  Locale,
  OverwriteType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import { nextSnowflake } from './snowflake.ts';

/** A message as Discord stores it; `mentions`/`mention_roles`/`mention_everyone` hold who would be pinged. */
export type FakeMessage = APIMessage;

export interface FakeGuild {
  readonly id: string;
  name: string;
  readonly ownerId: string;
  preferredLocale: Locale;
  /** Discord gives @everyone the guild's id. */
  readonly everyoneRoleId: string;
  /** The bot's managed integration role. */
  readonly botRoleId: string;
  /** The first text channel, where commands are run unless told otherwise. */
  readonly textChannelId: string;
  readonly roles: Map<string, APIRole>;
  readonly members: Map<string, APIGuildMember>;
  readonly channels: Map<string, APITextChannel>;
  /** Custom emojis and stickers, sent in GUILD_CREATE (none unless a test adds them). */
  readonly emojis: APIEmoji[];
  readonly stickers: APISticker[];
  readonly joinedAt: string;
}

export interface StoredFile {
  readonly id: string;
  readonly filename: string;
  readonly contentType: string;
  readonly data: Uint8Array;
}

export interface AuditEntry {
  readonly guildId: string;
  readonly userId: string;
  readonly action: 'member_role_add' | 'member_role_remove' | 'member_update';
  readonly roleIds: string[];
  /** `X-Audit-Log-Reason`, URL-decoded as Discord does. */
  readonly reason: string | null;
  readonly at: number;
}

export interface FakeDiscordState {
  readonly botUser: APIUser;
  readonly users: Map<string, APIUser>;
  readonly guilds: Map<string, FakeGuild>;
  /** DM channels by channel id. */
  readonly dmChannels: Map<string, APIDMChannel>;
  readonly messages: Map<string, FakeMessage>;
  readonly commands: { global: APIApplicationCommand[]; guilds: Map<string, APIApplicationCommand[]> };
  /** Uploaded attachments by attachment id. */
  readonly files: Map<string, StoredFile>;
  readonly auditLog: AuditEntry[];
}

export interface AddGuildInput {
  id: string;
  name: string;
  ownerId: string;
  preferredLocale: Locale;
  /** Permissions of the bot's managed role (default: Manage Roles plus the usual message ones). */
  botPermissions: bigint;
  botRolePosition: number;
  everyonePermissions: bigint;
  channelNames: string[];
  /** false: a server that never installed the app (no bot member, never sent to the gateway). */
  botInstalled: boolean;
}

export const ALL_PERMISSIONS = Object.values(PermissionFlagsBits).reduce((all, bit) => all | bit, 0n);

export const DEFAULT_EVERYONE_PERMISSIONS =
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.ReadMessageHistory |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.AddReactions |
  PermissionFlagsBits.UseExternalEmojis |
  PermissionFlagsBits.UseApplicationCommands |
  PermissionFlagsBits.CreateInstantInvite |
  PermissionFlagsBits.ChangeNickname;

export const DEFAULT_BOT_PERMISSIONS =
  PermissionFlagsBits.ManageRoles |
  PermissionFlagsBits.ViewChannel |
  PermissionFlagsBits.SendMessages |
  PermissionFlagsBits.EmbedLinks |
  PermissionFlagsBits.AttachFiles |
  PermissionFlagsBits.ReadMessageHistory;

/** An empty world holding only the bot user. */
export function createState(botUser: APIUser): FakeDiscordState {
  return {
    botUser,
    users: new Map([[botUser.id, botUser]]),
    guilds: new Map(),
    dmChannels: new Map(),
    messages: new Map(),
    commands: { global: [], guilds: new Map() },
    files: new Map(),
    auditLog: [],
  };
}

/** A full user object from the fields a test cares about. */
export function makeUser(input: Partial<APIUser> & Pick<APIUser, 'id' | 'username'>): APIUser {
  return { discriminator: '0', global_name: null, avatar: null, ...input };
}

/** A full role object; position 1 (just above @everyone) unless told otherwise. */
export function makeRole(input: Partial<APIRole> = {}): APIRole {
  const color = input.color ?? 0;
  return {
    id: nextSnowflake(),
    name: 'new role',
    color,
    colors: { primary_color: color, secondary_color: null, tertiary_color: null },
    hoist: false,
    icon: null,
    unicode_emoji: null,
    position: 1,
    permissions: '0',
    managed: false,
    mentionable: false,
    flags: 0 as RoleFlags,
    ...input,
  };
}

/** A full guild member object. */
export function makeMember(
  user: APIUser,
  roles: string[],
  joinedAt = new Date().toISOString(),
): APIGuildMember {
  return {
    user,
    nick: null,
    avatar: null,
    banner: null,
    roles,
    joined_at: joinedAt,
    premium_since: null,
    deaf: false,
    mute: false,
    flags: 0 as GuildMemberFlags,
    pending: false,
    communication_disabled_until: null,
  };
}

function makeTextChannel(guildId: string, name: string, position: number): APITextChannel {
  return {
    id: nextSnowflake(),
    type: ChannelType.GuildText,
    guild_id: guildId,
    name,
    position,
    permission_overwrites: [],
    nsfw: false,
    topic: null,
    last_message_id: null,
    rate_limit_per_user: 0,
    parent_id: null,
    flags: 0 as ChannelFlags,
  };
}

/** Builds a guild with @everyone, the bot's managed role and member, an owner, and text channel(s). */
export function createGuild(state: FakeDiscordState, input: Partial<AddGuildInput>): FakeGuild {
  const id = input.id ?? nextSnowflake();
  const botUser = state.botUser;
  const everyone = makeRole({
    id,
    name: '@everyone',
    position: 0,
    permissions: (input.everyonePermissions ?? DEFAULT_EVERYONE_PERMISSIONS).toString(),
  });
  const botRole = makeRole({
    name: botUser.username,
    position: input.botRolePosition ?? 10,
    permissions: (input.botPermissions ?? DEFAULT_BOT_PERMISSIONS).toString(),
    managed: true,
    tags: { bot_id: botUser.id },
  });
  const owner =
    state.users.get(input.ownerId ?? '') ??
    makeUser({ id: input.ownerId ?? nextSnowflake(), username: 'guild-owner' });
  state.users.set(owner.id, owner);
  const channels = (input.channelNames ?? ['general']).map((name, index) => makeTextChannel(id, name, index));
  const firstChannel = channels[0];
  if (!firstChannel) throw new Error('addGuild: a guild needs at least one text channel');
  const joinedAt = new Date().toISOString();
  const guild: FakeGuild = {
    id,
    name: input.name ?? 'Fake Guild',
    ownerId: owner.id,
    preferredLocale: input.preferredLocale ?? Locale.EnglishUS,
    everyoneRoleId: id,
    botRoleId: botRole.id,
    textChannelId: firstChannel.id,
    roles: new Map([
      [everyone.id, everyone],
      [botRole.id, botRole],
    ]),
    members: new Map([
      [owner.id, makeMember(owner, [], joinedAt)],
      ...(input.botInstalled === false
        ? []
        : [[botUser.id, makeMember(botUser, [botRole.id], joinedAt)] as const]),
    ]),
    channels: new Map(channels.map((channel) => [channel.id, channel])),
    emojis: [],
    stickers: [],
    joinedAt,
  };
  state.guilds.set(id, guild);
  return guild;
}

/** Orders roles as Discord does: by position, then the older (smaller id) role above. */
export function compareRoles(a: APIRole, b: APIRole): number {
  if (a.position !== b.position) return a.position - b.position;
  return a.id === b.id ? 0 : BigInt(a.id) < BigInt(b.id) ? 1 : -1;
}

/** The member's highest role (@everyone when they have none). */
export function highestRole(guild: FakeGuild, member: APIGuildMember): APIRole {
  const everyone = guild.roles.get(guild.everyoneRoleId);
  if (!everyone) throw new Error(`guild ${guild.id} lost its @everyone role`);
  let highest = everyone;
  for (const roleId of member.roles) {
    const role = guild.roles.get(roleId);
    if (role && compareRoles(role, highest) > 0) highest = role;
  }
  return highest;
}

/** Guild-level permissions of a member: the owner all; else @everyone's and each role's; Administrator all. */
export function memberPermissions(guild: FakeGuild, member: APIGuildMember): bigint {
  if (member.user.id === guild.ownerId) return ALL_PERMISSIONS;
  let permissions = BigInt(guild.roles.get(guild.everyoneRoleId)?.permissions ?? '0');
  for (const roleId of member.roles) permissions |= BigInt(guild.roles.get(roleId)?.permissions ?? '0');
  return permissions & PermissionFlagsBits.Administrator ? ALL_PERMISSIONS : permissions;
}

/**
 * A member's permissions in a channel, as Discord computes them: the guild-level ones (all of them for
 * the owner and an Administrator, whom no overwrite restricts), then the channel's @everyone overwrite,
 * then the overwrites of the member's roles together (every deny, then every allow), then the member's
 * own overwrite. This is what an interaction's `member.permissions` carries: in an overwrite the Manage
 * Roles bit means Manage Permissions of that channel.
 * @see https://discord.com/developers/docs/topics/permissions#permission-overwrites
 */
export function channelPermissions(
  guild: FakeGuild,
  member: APIGuildMember,
  channel: Pick<APITextChannel, 'permission_overwrites'>,
): bigint {
  const base = memberPermissions(guild, member);
  if (base & PermissionFlagsBits.Administrator) return ALL_PERMISSIONS;
  const overwrites = channel.permission_overwrites ?? [];
  const apply = (permissions: bigint, o: { allow: string; deny: string } | undefined) =>
    o ? (permissions & ~BigInt(o.deny)) | BigInt(o.allow) : permissions;
  let permissions = apply(
    base,
    overwrites.find((o) => o.type === OverwriteType.Role && o.id === guild.everyoneRoleId),
  );
  let roleAllow = 0n;
  let roleDeny = 0n;
  for (const o of overwrites) {
    if (o.type !== OverwriteType.Role || o.id === guild.everyoneRoleId || !member.roles.includes(o.id))
      continue;
    roleAllow |= BigInt(o.allow);
    roleDeny |= BigInt(o.deny);
  }
  permissions = (permissions & ~roleDeny) | roleAllow;
  return apply(
    permissions,
    overwrites.find((o) => o.type === OverwriteType.Member && o.id === member.user.id),
  );
}

/** A channel permission overwrite as a test gives it (bitfields as bigint). */
export interface OverwriteInput {
  /** A role id (the guild's id for @everyone) or a user id. */
  id: string;
  type: 'role' | 'member';
  allow?: bigint;
  deny?: bigint;
}

/** Sets (or with neither allow nor deny, removes) one overwrite on a channel, as Edit Channel Permissions does. */
export function setOverwrite(channel: APITextChannel, input: OverwriteInput): void {
  const type = input.type === 'role' ? OverwriteType.Role : OverwriteType.Member;
  const others = (channel.permission_overwrites ?? []).filter((o) => o.id !== input.id);
  const allow = input.allow ?? 0n;
  const deny = input.deny ?? 0n;
  channel.permission_overwrites =
    allow === 0n && deny === 0n
      ? others
      : [...others, { id: input.id, type, allow: allow.toString(), deny: deny.toString() }];
}

/** The guild as `GET /guilds/{id}` shows it. */
export function toApiGuild(guild: FakeGuild): APIGuild {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    splash: null,
    discovery_splash: null,
    owner_id: guild.ownerId,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: GuildVerificationLevel.None,
    default_message_notifications: GuildDefaultMessageNotifications.OnlyMentions,
    explicit_content_filter: GuildExplicitContentFilter.Disabled,
    roles: [...guild.roles.values()],
    emojis: guild.emojis,
    features: [],
    mfa_level: GuildMFALevel.None,
    application_id: null,
    system_channel_id: guild.textChannelId,
    system_channel_flags: 0 as GuildSystemChannelFlags,
    rules_channel_id: null,
    vanity_url_code: null,
    description: null,
    banner: null,
    premium_tier: GuildPremiumTier.None,
    preferred_locale: guild.preferredLocale,
    public_updates_channel_id: null,
    nsfw_level: GuildNSFWLevel.Default,
    premium_progress_bar_enabled: false,
    hub_type: null,
    safety_alerts_channel_id: null,
    incidents_data: null,
    stickers: guild.stickers,
  };
}

/**
 * The GUILD_CREATE payload. Like Discord, `members` lists everyone only for sessions with the
 * GuildPresences intent; otherwise just the bot itself, so the bot must fetch the others.
 */
export function toGuildCreate(
  guild: FakeGuild,
  botUserId: string,
  allMembers: boolean,
): GatewayGuildCreateDispatchData {
  const members = allMembers
    ? [...guild.members.values()]
    : [...guild.members.values()].filter((member) => member.user.id === botUserId);
  return {
    ...toApiGuild(guild),
    joined_at: guild.joinedAt,
    large: false,
    unavailable: false,
    member_count: guild.members.size,
    voice_states: [],
    members,
    channels: [...guild.channels.values()],
    threads: [],
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
  };
}

/** A member with `guild_id`, as the GUILD_MEMBER_ADD and _UPDATE dispatches carry it. */
export function memberEvent(guildId: string, member: APIGuildMember): APIGuildMember & { guild_id: string } {
  return { ...member, guild_id: guildId };
}

/**
 * The guilds a user is in as `GET /users/@me/guilds` lists them: `owner`, and `permissions` as Discord
 * computes them at guild level from the member's roles (the owner and an Administrator: every one), as a
 * string; whether or not the bot is in the guild. A timeout is left out (the worst case for the bot: it
 * must not rely on this list for one).
 */
export function currentUserGuilds(state: FakeDiscordState, userId: string): RESTAPIPartialCurrentUserGuild[] {
  const guilds: RESTAPIPartialCurrentUserGuild[] = [];
  for (const guild of state.guilds.values()) {
    const member = guild.members.get(userId);
    if (!member) continue;
    guilds.push({
      id: guild.id,
      name: guild.name,
      icon: null,
      banner: null,
      owner: guild.ownerId === userId,
      permissions: memberPermissions(guild, member).toString(),
      features: [],
    });
  }
  return guilds;
}
