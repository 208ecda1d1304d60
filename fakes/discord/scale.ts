/**
 * Many guilds at once for the stand-in Discord (the guild-scale benchmark): each with a realistic amount
 * of what discord.js would cache (roles, channels with a permission overwrite, emojis, stickers) and
 * members written straight into the state, without a dispatch each, so 2,500 guilds of 200 members
 * build in seconds.
 */
import type { APIEmoji, APISticker, APIUser } from 'discord-api-types/v10';
import { OverwriteType, PermissionFlagsBits, StickerFormatType, StickerType } from 'discord-api-types/v10';
import { nextSnowflake, snowflakeOnShard } from './snowflake.ts';
import {
  createGuild,
  type FakeDiscordState,
  type FakeGuild,
  makeMember,
  makeRole,
  makeUser,
} from './state.ts';

export interface GuildShape {
  /** Members besides the bot (the first one owns the guild). */
  members: number;
  /** Roles besides @everyone and the bot's; the first one is the gated "human" role. */
  roles: number;
  channels: number;
  emojis: number;
  stickers: number;
  /** The first `linked` members hold the human role (the ones a benchmark links in the store). */
  linked: number;
}

/** About what a mid-sized community server holds. */
export const REALISTIC_GUILD: GuildShape = {
  members: 200,
  roles: 20,
  channels: 30,
  emojis: 15,
  stickers: 3,
  linked: 3,
};

export interface ScaleGuild {
  id: string;
  humanRoleId: string;
  /** Member user ids, the linked ones first. */
  memberIds: string[];
}

/**
 * Adds `count` guilds of `shape` to the state (call before the bot connects: nothing is dispatched). With
 * `shardCount`, guild g is served by shard g % shardCount, so every shard holds as many (ids made in one
 * millisecond would otherwise all go to one shard, past Discord's 2,500 a shard).
 */
export function addScaleGuilds(
  state: FakeDiscordState,
  count: number,
  shape: GuildShape,
  shardCount?: number,
): ScaleGuild[] {
  const guilds: ScaleGuild[] = [];
  for (let g = 0; g < count; g += 1) {
    const id = shardCount === undefined ? undefined : snowflakeOnShard(g % shardCount, shardCount);
    guilds.push(addScaleGuild(state, `g${g}`, shape, id));
  }
  return guilds;
}

function addScaleGuild(state: FakeDiscordState, tag: string, shape: GuildShape, id?: string): ScaleGuild {
  const users: APIUser[] = [];
  for (let i = 0; i < Math.max(1, shape.members); i += 1) {
    const user = makeUser({ id: nextSnowflake(), username: `${tag}m${i}` });
    state.users.set(user.id, user);
    users.push(user);
  }
  const guild = createGuild(state, {
    ...(id === undefined ? {} : { id }),
    name: `Scale guild ${tag}`,
    ownerId: users[0]?.id ?? '',
    botRolePosition: shape.roles + 1,
    channelNames: Array.from({ length: Math.max(1, shape.channels) }, (_, i) => `channel-${i}`),
  });
  const roleIds: string[] = [];
  for (let r = 0; r < shape.roles; r += 1) {
    const role = makeRole({ name: r === 0 ? 'Verified Human' : `role-${r}`, position: r + 1 });
    guild.roles.set(role.id, role);
    roleIds.push(role.id);
  }
  const humanRoleId = roleIds[0] ?? guild.everyoneRoleId;
  for (const [i, user] of users.entries()) {
    // A couple of ordinary roles each, and the human role for the linked ones.
    const roles = roleIds.length > 1 ? [roleIds[1 + (i % (roleIds.length - 1))] ?? humanRoleId] : [];
    if (i < shape.linked) roles.push(humanRoleId);
    guild.members.set(user.id, makeMember(user, roles, guild.joinedAt));
  }
  decorate(guild, roleIds, shape);
  return { id: guild.id, humanRoleId, memberIds: users.map((u) => u.id) };
}

/** Channel overwrites, emojis and stickers: what discord.js caches per guild besides roles and members. */
function decorate(guild: FakeGuild, roleIds: readonly string[], shape: GuildShape): void {
  for (const [index, channel] of [...guild.channels.values()].entries()) {
    const roleId = roleIds[index % Math.max(1, roleIds.length)];
    if (roleId === undefined) continue;
    channel.permission_overwrites = [
      {
        id: roleId,
        type: OverwriteType.Role,
        allow: PermissionFlagsBits.SendMessages.toString(),
        deny: '0',
      },
    ];
    channel.topic = `What channel ${index} is for`;
  }
  for (let e = 0; e < shape.emojis; e += 1) guild.emojis.push(emoji(e));
  for (let s = 0; s < shape.stickers; s += 1) guild.stickers.push(sticker(guild.id, s));
}

function emoji(index: number): APIEmoji {
  return {
    id: nextSnowflake(),
    name: `emoji_${index}`,
    roles: [],
    require_colons: true,
    managed: false,
    animated: index % 5 === 0,
    available: true,
  };
}

function sticker(guildId: string, index: number): APISticker {
  return {
    id: nextSnowflake(),
    name: `sticker-${index}`,
    description: `Sticker ${index}`,
    tags: 'smile',
    type: StickerType.Guild,
    format_type: StickerFormatType.PNG,
    available: true,
    guild_id: guildId,
  };
}
