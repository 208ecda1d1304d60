import type { APIEmbed } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { escapeLine, maskedLink, safeUrl } from '../text/safety.ts';
import type { AvatarResult } from '../web3bio/types.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** The avatar message: the image at full size with its link, or a clear line when there is none. */
export function renderAvatar(result: AvatarResult, ctx: RenderContext): MessagePayload {
  const identity = escapeLine(result.identity);
  const url = safeUrl(result.url, ctx.ipfsGateway);
  const title = identity ? t(ctx.locale, 'avatar.title', { identity }) : t(ctx.locale, 'avatar.titleUnknown');
  const embed: APIEmbed = url
    ? {
        title,
        url,
        description: maskedLink(t(ctx.locale, 'avatar.openFullSize'), url),
        image: { url },
        color: COLORS.info,
        footer: { text: 'Web3.bio' },
      }
    : {
        title,
        description: identity
          ? t(ctx.locale, 'avatar.none', { identity })
          : t(ctx.locale, 'avatar.noneUnknown'),
        color: COLORS.neutral,
        footer: { text: 'Web3.bio' },
      };
  return finishPayload([embed], [], ctx);
}
