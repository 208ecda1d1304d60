/**
 * The rights' reads of discord.js objects (authority.ts decides on them): a server's owner and roles, a
 * member's roles, a channel's overwrites. Type imports only: the commands use these, and a web replica,
 * which loads the commands, never loads discord.js.
 */
import type { Guild, GuildBasedChannel, GuildMember } from 'discord.js';
import type { AuthorityRole, ChannelOverwrite, GuildAuthority, MemberRoles } from './authority.ts';

/** The server as the rights need it (authority.ts), from the gateway cache: its owner and every role. */
export function guildAuthorityOf(guild: Guild): GuildAuthority {
  const roles = new Map<string, AuthorityRole>();
  for (const role of guild.roles.cache.values()) {
    roles.set(role.id, {
      id: role.id,
      name: role.name,
      position: role.position,
      permissions: role.permissions.bitfield,
    });
  }
  return { guildId: guild.id, ownerId: guild.ownerId, roles };
}

/** A member's server-level roles, from discord.js (its role cache lists them), and whether a timeout holds now. */
export function memberRolesOf(member: GuildMember): MemberRoles {
  return {
    userId: member.id,
    roleIds: [...member.roles.cache.keys()],
    timedOut: member.isCommunicationDisabled(),
  };
}

/** A guild channel's permission overwrites (a thread has none of its own: its parent's apply). */
export function channelOverwritesOf(channel: GuildBasedChannel): ChannelOverwrite[] {
  const source = 'permissionOverwrites' in channel ? channel : channel.parent;
  if (!source || !('permissionOverwrites' in source)) return [];
  return [...source.permissionOverwrites.cache.values()].map((o) => ({
    id: o.id,
    type: o.type,
    allow: o.allow.bitfield,
    deny: o.deny.bitfield,
  }));
}
