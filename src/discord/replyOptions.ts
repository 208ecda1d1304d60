import { type InteractionEditReplyOptions, type InteractionReplyOptions, MessageFlags } from 'discord.js';
import type { MessagePayload } from '../render/types.ts';

/** discord.js reply options from a render payload; mentions are never parsed. */
export function toReplyOptions(payload: MessagePayload, ephemeral: boolean): InteractionReplyOptions {
  return {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowedMentions: { parse: [] },
    ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
  };
}

export function toEditOptions(payload: MessagePayload): InteractionEditReplyOptions {
  return {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowedMentions: { parse: [] },
  };
}
