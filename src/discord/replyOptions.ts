import { type InteractionEditReplyOptions, type InteractionReplyOptions, MessageFlags } from 'discord.js';
import type { MessagePayload } from '../render/types.ts';

const filesOf = (payload: MessagePayload) =>
  payload.files ? { files: payload.files.map((f) => ({ attachment: f.data, name: f.name })) } : {};

/** discord.js reply options from a render payload; mentions are never parsed. */
export function toReplyOptions(payload: MessagePayload, ephemeral: boolean): InteractionReplyOptions {
  return {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowedMentions: { parse: [] },
    ...filesOf(payload),
    ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
  };
}

export function toEditOptions(payload: MessagePayload): InteractionEditReplyOptions {
  return {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowedMentions: { parse: [] },
    ...filesOf(payload),
  };
}
