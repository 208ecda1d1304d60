/**
 * `/gating panel`: the verify panel posted in a channel, or edited in place when the channel has one.
 * The panel's controls carry no state beyond their custom ids, so they work after any restart; the
 * message id is kept in the store per guild and channel, and a panel deleted by hand is posted anew.
 */
import type { Guild, PermissionsBitField } from 'discord.js';
import { PermissionFlagsBits, RESTJSONErrorCodes } from 'discord-api-types/v10';
import { channelPermissions, type MemberRoles } from '../gating/roles/authority.ts';
import { channelOverwritesOf, guildAuthorityOf } from '../gating/roles/authorityReads.ts';
import {
  type PanelIds,
  type PanelPermission,
  type PanelPostResult,
  renderVerifyPanel,
} from '../render/gatingPanel.ts';
import type { RenderContext } from '../render/types.ts';
import type { VerifyPanelStore } from '../store/types.ts';
import { encodeCustomId } from './customId.ts';

/** The panel's buttons: handled by `/verify` (opens the modal) and `/whoami` (answers privately). */
export const VERIFY_PANEL_IDS: PanelIds = {
  verify: encodeCustomId('verify', 'panel'),
  status: encodeCustomId('whoami', 'panel'),
};

/** The modal the Verify button opens, and its one text input; its submit is handled by `/verify`. */
export const VERIFY_MODAL_IDS = { modal: encodeCustomId('verify', 'identity'), identity: 'identity' };

const NEEDED: readonly [PanelPermission, bigint][] = [
  ['viewChannel', PermissionFlagsBits.ViewChannel],
  ['sendMessages', PermissionFlagsBits.SendMessages],
  ['embedLinks', PermissionFlagsBits.EmbedLinks],
];

/** The permissions the panel needs that the bot lacks (all of them when its permissions are unknown). */
export function missingPanelPermissions(
  permissions: Readonly<PermissionsBitField> | null,
): PanelPermission[] {
  return NEEDED.filter(([, flag]) => !permissions?.has(flag, true)).map(([name]) => name);
}

/** What the member posting the panel must be able to do in its channel by hand. */
const INVOKER_NEEDS: readonly [PanelPermission, bigint][] = [
  ['viewChannel', PermissionFlagsBits.ViewChannel],
  ['sendMessages', PermissionFlagsBits.SendMessages],
];

/**
 * Post the panel in `channelId`, or edit the one already there; nothing is posted when it cannot be, or
 * when `invoker` could not post there by hand (their permissions in the channel, from the server's roles
 * and the channel's overwrites: authority.ts).
 */
export async function postVerifyPanel(
  guild: Guild,
  channelId: string,
  invoker: MemberRoles,
  panels: VerifyPanelStore,
  render: RenderContext,
): Promise<PanelPostResult> {
  const channel =
    guild.channels.cache.get(channelId) ?? (await guild.channels.fetch(channelId).catch(() => null));
  if (!channel?.isTextBased() || !channel.isSendable()) return { kind: 'notPostable', channelId };
  const theirs = channelPermissions(guildAuthorityOf(guild), invoker, channelOverwritesOf(channel));
  const lacking = INVOKER_NEEDS.filter(([, flag]) => (theirs & flag) !== flag).map(([name]) => name);
  if (lacking.length > 0) return { kind: 'invokerCannotPost', channelId, missing: lacking };
  const me = guild.members.me ?? (await guild.members.fetchMe());
  const missing = missingPanelPermissions(channel.permissionsFor(me));
  if (missing.length > 0) return { kind: 'missingPermissions', channelId, missing };

  const payload = renderVerifyPanel(VERIFY_PANEL_IDS, { ...render, locale: guild.preferredLocale });
  const body = {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowedMentions: { parse: [] },
  };
  const stored = await panels.getVerifyPanel(guild.id, channelId);
  if (stored) {
    try {
      await channel.messages.edit(stored, body);
      return { kind: 'updated', channelId };
    } catch (error) {
      // Deleted by hand since: post a new one below. Anything else is a real failure.
      if (Number((error as { code?: unknown } | null)?.code) !== RESTJSONErrorCodes.UnknownMessage)
        throw error;
    }
  }
  const message = await channel.send(body);
  await panels.saveVerifyPanel(guild.id, channelId, message.id);
  return { kind: 'posted', channelId };
}
