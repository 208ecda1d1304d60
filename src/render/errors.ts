import type { APIEmbed } from 'discord-api-types/v10';
import { discordTime, escapeLine, escapeText, inlineCode, truncate } from '../text/safety.ts';
import {
  InvalidIdentityError,
  isWeb3BioError,
  NotFoundError,
  RateLimitedError,
  type Web3BioErrorKind,
} from '../web3bio/errors.ts';
import { ACCEPTED_FORMS } from '../web3bio/identity.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

const TRY_LATER = 'Please try again later.';

const MESSAGES: Record<Web3BioErrorKind | 'unknown', { title: string; description: string; color: number }> =
  {
    invalid_identity: {
      title: '❓ Not a web3 identity',
      description: 'That doesn’t look like a web3 identity.',
      color: COLORS.warning,
    },
    not_found: {
      title: '🔍 Nothing found',
      description: 'Web3.bio knows nothing about that identity.',
      color: COLORS.neutral,
    },
    rate_limited: {
      title: '⏳ Web3.bio is busy',
      description: 'Web3.bio is rate limiting the bot right now. Please try again in a few seconds.',
      color: COLORS.warning,
    },
    upstream: {
      title: '🛠️ Web3.bio is having trouble',
      description: `Web3.bio answered with an error. ${TRY_LATER}`,
      color: COLORS.danger,
    },
    timeout: {
      title: '⌛ Web3.bio took too long',
      description: `Web3.bio did not answer in time. ${TRY_LATER}`,
      color: COLORS.danger,
    },
    network: {
      title: '📡 Can’t reach Web3.bio',
      description: `The bot could not connect to Web3.bio. ${TRY_LATER}`,
      color: COLORS.danger,
    },
    api_key_required: {
      title: '🔑 API key needed',
      description:
        'This lookup needs a Web3.bio API key, and this bot has none configured. Ask the bot’s operator.',
      color: COLORS.caution,
    },
    unauthorized: {
      title: '🔒 API key refused',
      description: 'Web3.bio refused the bot’s API key. The bot’s operator needs to check it.',
      color: COLORS.danger,
    },
    schema: {
      title: '🧩 Unexpected answer',
      description:
        'Web3.bio answered with data the bot does not understand. The bot’s operator has been told.',
      color: COLORS.danger,
    },
    unknown: {
      title: '💥 Something went wrong',
      description: `The bot ran into an unexpected problem. ${TRY_LATER}`,
      color: COLORS.danger,
    },
  };

function invalidIdentityDescription(error: InvalidIdentityError): string {
  const reason = escapeText(truncate(error.reason, 300)).trim();
  const forms = ACCEPTED_FORMS.map((form) => `• ${escapeLine(form)}`).join('\n');
  return `That doesn’t look like a web3 identity${reason ? `: ${reason}` : ''}.\n\n**Try one of these:**\n${forms}`;
}

function describe(error: unknown, ctx: RenderContext): APIEmbed {
  if (!isWeb3BioError(error)) return { ...MESSAGES.unknown };
  const message = MESSAGES[error.kind] ?? MESSAGES.unknown;
  if (error instanceof InvalidIdentityError)
    return { ...message, description: invalidIdentityDescription(error) };
  if (error instanceof NotFoundError) {
    const identity = escapeLine(truncate(error.identity, 100));
    return identity ? { ...message, description: `Web3.bio knows nothing about **${identity}**.` } : message;
  }
  if (
    error instanceof RateLimitedError &&
    error.retryAfterMs !== null &&
    Number.isFinite(error.retryAfterMs)
  ) {
    const at = ctx.nowSec + Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return {
      ...message,
      description: `Web3.bio is rate limiting the bot right now. Try again ${discordTime(at, 'R')}.`,
    };
  }
  return { ...message };
}

/** A short error message, one per error kind; unknown errors get a generic text without internals. */
export function renderError(error: unknown, ctx: RenderContext): MessagePayload {
  return finishPayload([describe(error, ctx)], [], { ...ctx, stale: undefined });
}

/** The per-user cooldown message: slow down, try again at a relative time. */
export function renderCooldown(retryAfterMs: number, ctx: RenderContext): MessagePayload {
  const waitSec = Number.isFinite(retryAfterMs) ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : 1;
  const embed: APIEmbed = {
    title: '🐢 Slow down',
    description: `You’re sending commands too fast. Try again ${discordTime(ctx.nowSec + waitSec, 'R')}.`,
    color: COLORS.warning,
  };
  return finishPayload([embed], [], { ...ctx, stale: undefined });
}

/** A short private note: someone else's controls. */
export function renderNotYourControls(commandName: string): MessagePayload {
  const command = inlineCode(`/${commandName}`);
  return {
    content: `Only the person who ran this command can use these controls. Run ${command} yourself.`,
    embeds: [],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/** A short private note: the message's controls were made too long ago (or before a restart) to work. */
export function renderExpiredControls(commandName: string): MessagePayload {
  const command = inlineCode(`/${commandName}`);
  return {
    content: `These controls have expired. Run ${command} again.`,
    embeds: [],
    components: [],
    allowed_mentions: { parse: [] },
  };
}
