/**
 * What the gating commands share: the service for this guild (or the message that says why there is
 * none), the run-time Manage Roles check, and the names render shows instead of mentions.
 */

import {
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import type { GatingService } from '../gating/service.ts';
import { renderGatingUnavailable, renderGuildOnly, renderNeedsManageRoles } from '../render/gatingGuild.ts';
import type { GuildNames } from '../render/gatingLabels.ts';
import type { MessagePayload } from '../render/types.ts';
import { actingUser, memberHas } from './apiInteraction.ts';
import type { CommandContext } from './command.ts';

/** Guild only, as `contexts` on the command data. */
export const GUILD_ONLY_CONTEXTS = [InteractionContextType.Guild];
/** Gating edits roles in the server: only a server install gives the bot a member to do it with. */
export const GUILD_INSTALL_ONLY = [ApplicationIntegrationType.GuildInstall];
/** `default_member_permissions` for moderator commands: Manage Roles, as Discord's string bitfield. */
export const MANAGE_ROLES_PERMISSION = PermissionFlagsBits.ManageRoles.toString();

export type GatingAccess =
  | { ok: true; service: GatingService; guildId: string }
  | { ok: false; answer: MessagePayload };

/** The service and guild for a gating command; with `moderator`, also requires Manage Roles now. */
export function gatingAccess(ctx: CommandContext, opts: { moderator?: boolean } = {}): GatingAccess {
  const service = ctx.deps.gating;
  if (!service) return { ok: false, answer: renderGatingUnavailable(ctx.render) };
  if (!ctx.guildId) return { ok: false, answer: renderGuildOnly(ctx.render) };
  // default_member_permissions can be overridden per server: check the member's permissions again.
  if (opts.moderator && !hasManageRoles(ctx))
    return { ok: false, answer: renderNeedsManageRoles(ctx.render) };
  return { ok: true, service, guildId: ctx.guildId };
}

/** Whether the member who ran the interaction holds Manage Roles (false when unknown). */
export function hasManageRoles(ctx: CommandContext): boolean {
  return memberHas(ctx.interaction, PermissionFlagsBits.ManageRoles);
}

/** The name the member who ran the interaction goes by (for records that must name them). */
export function invokerUsername(ctx: CommandContext): string {
  return ctx.interaction ? (actingUser(ctx.interaction)?.username ?? '') : '';
}

/**
 * Role, channel and member names for render (never mentions): roles and channels from the gateway cache
 * of the process that runs gating, members from the interaction itself (its resolved options and the
 * member who ran it), else the cache.
 */
export function guildNames(ctx: CommandContext, userIds: readonly string[] = []): GuildNames {
  const interaction = ctx.interaction;
  const guild = ctx.guildId ? ctx.deps.gating?.cachedGuild(ctx.guildId) : undefined;
  const roles = new Map<string, string>();
  const channels = new Map<string, string>();
  const users = new Map<string, string>();
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
    const name =
      nick ??
      user?.global_name ??
      user?.username ??
      guild?.members.cache.get(userId)?.displayName ??
      ctx.deps.gating?.cachedUserName(userId);
    if (name) users.set(userId, name);
  }
  return { roles, channels, users };
}
