import type { APIEmbed } from 'discord-api-types/v10';
import { escapeLine, maskedLink, safeUrl } from '../text/safety.ts';
import type { AvatarResult } from '../web3bio/types.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** The avatar message: the image at full size with its link, or a clear line when there is none. */
export function renderAvatar(result: AvatarResult, ctx: RenderContext): MessagePayload {
  const identity = escapeLine(result.identity) || 'this identity';
  const url = safeUrl(result.url, ctx.ipfsGateway);
  const embed: APIEmbed = url
    ? {
        title: `Avatar of ${identity}`,
        url,
        description: maskedLink('Open the image at full size', url),
        image: { url },
        color: COLORS.info,
        footer: { text: 'Web3.bio' },
      }
    : {
        title: `Avatar of ${identity}`,
        description: `${identity} has no avatar set.`,
        color: COLORS.neutral,
        footer: { text: 'Web3.bio' },
      };
  return finishPayload([embed], [], ctx);
}
