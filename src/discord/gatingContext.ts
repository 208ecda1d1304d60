/**
 * What the gating commands share: the service for this guild (or the message that says why there is
 * none), who may use them (asked of authority.ts, from the server's roles, never from the interaction's
 * channel bitfield), and the names render shows instead of mentions.
 */

import {
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import {
  authorityOfSnapshot,
  type GuildAuthority,
  holdsRight,
  type MemberRoles,
  type Right,
  timeoutHolds,
  timeoutLimits,
} from '../gating/roles/authority.ts';
import { guildAuthorityOf } from '../gating/roles/authorityReads.ts';
import type { GatingService } from '../gating/service.ts';
import {
  renderGatingUnavailable,
  renderGuildOnly,
  renderNeedsManageRoles,
  renderTimedOut,
} from '../render/gatingGuild.ts';
import type { GuildNames } from '../render/gatingLabels.ts';
import type { MessagePayload } from '../render/types.ts';
import { actingUser } from './apiInteraction.ts';
import type { CommandContext } from './command.ts';

/** Guild only, as `contexts` on the command data. */
export const GUILD_ONLY_CONTEXTS = [InteractionContextType.Guild];
/** Gating edits roles in the server: only a server install gives the bot a member to do it with. */
export const GUILD_INSTALL_ONLY = [ApplicationIntegrationType.GuildInstall];
/**
 * `default_member_permissions` for moderator commands: Manage Roles, as Discord's string bitfield. Only
 * what Discord's client shows by default (a server can change it); the bot checks rights itself.
 */
export const MANAGE_ROLES_PERMISSION = PermissionFlagsBits.ManageRoles.toString();

export type GatingAccess =
  | { ok: true; service: GatingService; guildId: string }
  | { ok: false; answer: MessagePayload };

/**
 * The service and guild for a gating command; with `moderator`, also requires the member who acted (the
 * one who clicked, for a button) to hold Manage Roles at server level now.
 */
export function gatingAccess(ctx: CommandContext, opts: { moderator?: boolean } = {}): GatingAccess {
  const service = ctx.deps.gating;
  if (!service) return { ok: false, answer: renderGatingUnavailable(ctx.render) };
  if (!ctx.guildId) return { ok: false, answer: renderGuildOnly(ctx.render) };
  if (opts.moderator && !invokerHolds(ctx, 'moderate'))
    return {
      ok: false,
      answer: invokerTimedOut(ctx) ? renderTimedOut(ctx.render) : renderNeedsManageRoles(ctx.render),
    };
  return { ok: true, service, guildId: ctx.guildId };
}

/**
 * The member who acted, with the role ids Discord sends in every server interaction (handed-over ones
 * too): their roles in the server, whatever channel they acted in, and whether a timeout holds now (the
 * member's `communication_disabled_until`). Null outside a server.
 */
export function invokerOf(ctx: CommandContext): MemberRoles | null {
  const member = ctx.interaction?.member;
  const userId = member?.user?.id;
  if (!member || !userId || !Array.isArray(member.roles)) return null;
  return {
    userId,
    roleIds: member.roles,
    timedOut: timeoutHolds(member.communication_disabled_until, Date.now()),
  };
}

/** The server's owner and roles from the gateway cache of the process that runs gating; null elsewhere. */
export function cachedAuthority(ctx: CommandContext): GuildAuthority | null {
  const guild = ctx.guildId ? ctx.deps.gating?.cachedGuild(ctx.guildId) : undefined;
  return guild ? guildAuthorityOf(guild) : null;
}

/** Whether the member who acted holds `right` in the server, read from the gateway cache (false when unknown). */
export function invokerHolds(ctx: CommandContext, right: Right): boolean {
  const authority = cachedAuthority(ctx);
  const invoker = invokerOf(ctx);
  return authority !== null && invoker !== null && holdsRight(authority, invoker, right);
}

/** Whether a timeout takes the rights of the member who acted now (not the owner nor an Administrator). */
export function invokerTimedOut(ctx: CommandContext): boolean {
  const authority = cachedAuthority(ctx);
  const invoker = invokerOf(ctx);
  return authority !== null && invoker !== null && timeoutLimits(authority, invoker);
}

/**
 * The server's authority where this interaction is answered, for what cannot be handed to the gateway
 * worker (suggestions): the gateway cache where gating runs, else (a web replica) the snapshot the
 * gateway side keeps in the shared store. Null when neither has the server: decide nothing on it.
 */
export async function answeringAuthority(ctx: CommandContext): Promise<GuildAuthority | null> {
  if (!ctx.guildId) return null;
  if (ctx.deps.gating) return cachedAuthority(ctx);
  const stored = await ctx.deps.sharedGating?.getGuildAuthority(ctx.guildId);
  return stored ? authorityOfSnapshot(stored) : null;
}

/** The name the member who ran the interaction goes by (for records that must name them). */
export function invokerUsername(ctx: CommandContext): string {
  return ctx.interaction ? (actingUser(ctx.interaction)?.username ?? '') : '';
}

/**
 * Role, channel and member names for render (never mentions): roles and channels from the gateway cache
 * of the process that runs gating, members' display names and usernames from the interaction itself (its
 * resolved options and the member who ran it), else the cache.
 */
export function guildNames(ctx: CommandContext, userIds: readonly string[] = []): GuildNames {
  const interaction = ctx.interaction;
  const guild = ctx.guildId ? ctx.deps.gating?.cachedGuild(ctx.guildId) : undefined;
  const roles = new Map<string, string>();
  const channels = new Map<string, string>();
  const users = new Map<string, string>();
  const usernames = new Map<string, string>();
  if (guild) {
    for (const role of guild.roles.cache.values()) roles.set(role.id, role.name);
    for (const channel of guild.channels.cache.values()) channels.set(channel.id, channel.name);
  }
  const resolved =
    interaction?.data && 'resolved' in interaction.data ? interaction.data.resolved : undefined;
  const resolvedUsers = resolved && 'users' in resolved ? resolved.users : undefined;
  const resolvedMembers = resolved && 'members' in resolved ? resolved.members : undefined;
  const invoker = interaction ? actingUser(interaction) : undefined;
  for (const userId of userIds) {
    const user = resolvedUsers?.[userId] ?? (invoker?.id === userId ? invoker : undefined);
    const nick =
      resolvedMembers?.[userId]?.nick ?? (invoker?.id === userId ? interaction?.member?.nick : null);
    const cached = guild?.members.cache.get(userId);
    const name = nick ?? user?.global_name ?? user?.username ?? cached?.displayName;
    const username = user?.username ?? cached?.user.username ?? ctx.deps.gating?.cachedUserName(userId);
    if (name) users.set(userId, name);
    if (username) usernames.set(userId, username);
  }
  return { roles, channels, users, usernames };
}
