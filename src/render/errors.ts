import type { APIEmbed } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { discordTime, escapeLine, escapeText, inlineCode, truncate } from '../text/safety.ts';
import {
  InvalidIdentityError,
  isWeb3BioError,
  NotFoundError,
  RateLimitedError,
  type Web3BioErrorKind,
} from '../web3bio/errors.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

type ErrorKind = Web3BioErrorKind | 'unknown';

const COLORS_BY_KIND: Record<ErrorKind, number> = {
  invalid_identity: COLORS.warning,
  not_found: COLORS.neutral,
  rate_limited: COLORS.warning,
  upstream: COLORS.danger,
  timeout: COLORS.danger,
  network: COLORS.danger,
  api_key_required: COLORS.caution,
  unauthorized: COLORS.danger,
  schema: COLORS.danger,
  unknown: COLORS.danger,
};

function message(kind: ErrorKind, locale: string, description?: string): APIEmbed {
  return {
    title: t(locale, `errors.${kind}.title`),
    description: description ?? t(locale, `errors.${kind}.description`),
    color: COLORS_BY_KIND[kind],
  };
}

function invalidIdentityDescription(error: InvalidIdentityError, locale: string): string {
  const reason = escapeText(truncate(error.reason, 300)).trim();
  const sentence = reason
    ? t(locale, 'errors.invalid_identity.because', { reason })
    : t(locale, 'errors.invalid_identity.description');
  const forms = t(locale, 'errors.invalid_identity.forms')
    .split('\n')
    .map((form) => `• ${escapeLine(form)}`)
    .join('\n');
  return `${sentence}\n\n${t(locale, 'errors.invalid_identity.tryThese')}\n${forms}`;
}

function describe(error: unknown, ctx: RenderContext): APIEmbed {
  const { locale } = ctx;
  if (!isWeb3BioError(error)) return message('unknown', locale);
  const kind: ErrorKind = Object.hasOwn(COLORS_BY_KIND, error.kind) ? error.kind : 'unknown';
  if (error instanceof InvalidIdentityError)
    return message(kind, locale, invalidIdentityDescription(error, locale));
  if (error instanceof NotFoundError) {
    const identity = escapeLine(truncate(error.identity, 100));
    return message(kind, locale, identity ? t(locale, 'errors.not_found.named', { identity }) : undefined);
  }
  if (
    error instanceof RateLimitedError &&
    error.retryAfterMs !== null &&
    Number.isFinite(error.retryAfterMs)
  ) {
    const at = ctx.nowSec + Math.max(1, Math.ceil(error.retryAfterMs / 1000));
    return message(kind, locale, t(locale, 'errors.rate_limited.retryAt', { time: discordTime(at, 'R') }));
  }
  return message(kind, locale);
}

/** A short error message, one per error kind; unknown errors get a generic text without internals. */
export function renderError(error: unknown, ctx: RenderContext): MessagePayload {
  return finishPayload([describe(error, ctx)], [], { ...ctx, stale: undefined });
}

/** The per-user cooldown message: slow down, try again at a relative time. */
export function renderCooldown(retryAfterMs: number, ctx: RenderContext): MessagePayload {
  const waitSec = Number.isFinite(retryAfterMs) ? Math.max(1, Math.ceil(retryAfterMs / 1000)) : 1;
  const embed: APIEmbed = {
    title: t(ctx.locale, 'errors.cooldown.title'),
    description: t(ctx.locale, 'errors.cooldown.description', {
      time: discordTime(ctx.nowSec + waitSec, 'R'),
    }),
    color: COLORS.warning,
  };
  return finishPayload([embed], [], { ...ctx, stale: undefined });
}

/** A short private note: someone else's controls. */
export function renderNotYourControls(commandName: string, locale: string): MessagePayload {
  const command = inlineCode(`/${commandName}`);
  return {
    content: t(locale, 'errors.notYourControls', { command }),
    embeds: [],
    components: [],
    allowed_mentions: { parse: [] },
  };
}

/** A short private note: the message's controls were made too long ago (or before a restart) to work. */
export function renderExpiredControls(commandName: string, locale: string): MessagePayload {
  const command = inlineCode(`/${commandName}`);
  return {
    content: t(locale, 'errors.expiredControls', { command }),
    embeds: [],
    components: [],
    allowed_mentions: { parse: [] },
  };
}
