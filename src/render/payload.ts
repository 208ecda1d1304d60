import type { APIEmbed } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { discordTime } from '../text/safety.ts';
import { clampMessage } from './clamp.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** The visible note for stale data; message content, because footers do not render `<t:…>` tags. */
export function staleNote(ctx: RenderContext): string | undefined {
  if (!ctx.stale) return undefined;
  const fetchedSec = Math.floor(ctx.stale.fetchedAt / 1000);
  return Number.isFinite(fetchedSec)
    ? t(ctx.locale, 'common.stale', { when: discordTime(fetchedSec, 'R') })
    : t(ctx.locale, 'common.staleUnknownTime');
}

/** Assemble a payload: stale note, no mentions, every Discord limit enforced. */
export function finishPayload(
  embeds: APIEmbed[],
  components: MessagePayload['components'],
  ctx: RenderContext,
): MessagePayload {
  const note = staleNote(ctx);
  return clampMessage({
    ...(note ? { content: note } : {}),
    embeds,
    components,
    allowed_mentions: { parse: [] },
  });
}

/** Freeze `value` and everything in it, so a payload shared between answers cannot be changed by one. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}
