/**
 * What the gating commands share: the service for this guild (or the message that says why there is
 * none), the run-time Manage Roles check, and the names render shows instead of mentions.
 */

import { GuildMember } from 'discord.js';
import {
  ApplicationIntegrationType,
  InteractionContextType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import type { GatingService } from '../gating/service.ts';
import { renderGatingUnavailable, renderGuildOnly, renderNeedsManageRoles } from '../render/gatingGuild.ts';
import type { GuildNames } from '../render/gatingLabels.ts';
import type { MessagePayload } from '../render/types.ts';
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
  return ctx.interaction?.memberPermissions?.has(PermissionFlagsBits.ManageRoles) === true;
}

/** Role, channel and member names from the guild caches, for render (never mentions). */
export function guildNames(ctx: CommandContext, userIds: readonly string[] = []): GuildNames {
  const interaction = ctx.interaction;
  const guild = interaction?.guild;
  const roles = new Map<string, string>();
  const channels = new Map<string, string>();
  const users = new Map<string, string>();
  if (guild) {
    for (const role of guild.roles.cache.values()) roles.set(role.id, role.name);
    for (const channel of guild.channels.cache.values()) channels.set(channel.id, channel.name);
  }
  // The member cache keeps only the bot (clientCaches.ts): names come with the interaction itself.
  const resolved = interaction && 'options' in interaction ? interaction.options.resolved : null;
  for (const userId of userIds) {
    const member =
      guild?.members.cache.get(userId) ??
      asGuildMember(resolved?.members?.get(userId)) ??
      (interaction?.user.id === userId ? asGuildMember(interaction.member) : undefined);
    const name =
      member?.displayName ??
      resolved?.users?.get(userId)?.username ??
      interaction?.client.users.cache.get(userId)?.username;
    if (name !== undefined) users.set(userId, name);
  }
  return { roles, channels, users };
}

function asGuildMember(member: unknown): GuildMember | undefined {
  return member instanceof GuildMember ? member : undefined;
}
