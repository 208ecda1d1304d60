import type { APIEmbed, APIEmbedField } from 'discord-api-types/v10';
import { type MessageKey, t } from '../i18n/index.ts';
import {
  cleanLine,
  DISCORD_LIMITS,
  discordTime,
  escapeLine,
  inlineCode,
  maskedLink,
  safeUrl,
  truncate,
} from '../text/safety.ts';
import type { DomainInfo } from '../web3bio/types.ts';
import { joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS, platformColor, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

export type DomainExpiryState = 'active' | 'expiring' | 'grace' | 'expired' | 'unknown';

const DAY_SEC = 86_400;
const EXPIRING_WITHIN_SEC = 30 * DAY_SEC;
/** ENS-style registrars keep an expired name for its owner for 90 days before anyone may register it. */
const GRACE_PERIOD_SEC = 90 * DAY_SEC;
const GRACE_PLATFORMS = new Set(['basenames', 'linea']);

/** Whether the name follows the ENS registrar rules (.eth, .base.eth, .linea.eth) and so has a grace period. */
function hasGracePeriod(domain: Pick<DomainInfo, 'platform' | 'identity'>): boolean {
  const name = domain.identity.trim().toLowerCase();
  return name.endsWith('.eth') || GRACE_PLATFORMS.has(domain.platform);
}

/** Where the domain stands at `nowSec`: expiring means within 30 days; grace is the ENS-style 90 days after expiry. */
export function domainExpiryState(
  domain: Pick<DomainInfo, 'expiredAt' | 'platform' | 'identity'>,
  nowSec: number,
): DomainExpiryState {
  const { expiredAt } = domain;
  if (expiredAt === null || !Number.isFinite(expiredAt)) return 'unknown';
  if (nowSec < expiredAt) return expiredAt - nowSec <= EXPIRING_WITHIN_SEC ? 'expiring' : 'active';
  return hasGracePeriod(domain) && nowSec < expiredAt + GRACE_PERIOD_SEC ? 'grace' : 'expired';
}

const STATE_COLORS: Record<DomainExpiryState, number | null> = {
  active: COLORS.success,
  expiring: COLORS.warning,
  grace: COLORS.caution,
  expired: COLORS.danger,
  unknown: null,
};

function both(unixSec: number): string {
  return `${discordTime(unixSec, 'F')} (${discordTime(unixSec, 'R')})`;
}

function expiryLine(domain: DomainInfo, state: DomainExpiryState, locale: string): string {
  const { expiredAt } = domain;
  if (expiredAt === null || state === 'unknown') return t(locale, 'domain.expiry.unknown');
  const until = discordTime(expiredAt + GRACE_PERIOD_SEC, 'F');
  return t(locale, `domain.expiry.${state}`, { when: both(expiredAt), until });
}

function addressField(name: string, address: string | null): APIEmbedField[] {
  const code = inlineCode(truncate(address ?? '', 200));
  return code ? [{ name, value: code, inline: false }] : [];
}

function timeField(name: string, unixSec: number | null): APIEmbedField[] {
  return unixSec === null ? [] : [{ name, value: both(unixSec), inline: true }];
}

const TWITTER_HANDLE_RE = /^@?([A-Za-z0-9_]{1,15})$/;
const GITHUB_HANDLE_RE = /^@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))$/;

function handleLink(value: string, pattern: RegExp, base: string): string {
  const handle = pattern.exec(value.trim())?.[1];
  return handle ? maskedLink(`@${handle}`, `${base}${handle}`) : escapeLine(truncate(value, 200));
}

function firstText(texts: Record<string, string>, keys: string[]): string | undefined {
  for (const key of keys) {
    const value = Object.hasOwn(texts, key) ? texts[key]?.trim() : undefined;
    if (value) return value;
  }
  return undefined;
}

function recordLines(texts: Record<string, string>, ctx: RenderContext): string[] {
  const { ipfsGateway, locale } = ctx;
  const linkOrText = (value: string) => {
    const url = safeUrl(value, ipfsGateway);
    return url ? maskedLink(truncate(value, 80), url) : inlineCode(value);
  };
  const records: [string, string | undefined, (value: string) => string][] = [
    [t(locale, 'domain.record.website'), firstText(texts, ['url']), linkOrText],
    [t(locale, 'domain.record.email'), firstText(texts, ['email']), (v) => escapeLine(truncate(v, 200))],
    [
      'X',
      firstText(texts, ['com.twitter', 'vnd.twitter']),
      (v) => handleLink(v, TWITTER_HANDLE_RE, 'https://x.com/'),
    ],
    [
      'GitHub',
      firstText(texts, ['com.github', 'vnd.github']),
      (v) => handleLink(v, GITHUB_HANDLE_RE, 'https://github.com/'),
    ],
    ['Discord', firstText(texts, ['com.discord']), (v) => escapeLine(truncate(v, 100))],
    [
      t(locale, 'domain.record.description'),
      firstText(texts, ['description']),
      (v) => escapeLine(truncate(v, 300)),
    ],
    [t(locale, 'domain.record.avatar'), firstText(texts, ['avatar']), linkOrText],
  ];
  return records.flatMap(([name, value, show]) => {
    const shown = value === undefined ? '' : show(value);
    return shown ? [`**${name}**: ${shown}`] : [];
  });
}

function listField(name: string, lines: string[], locale: string): APIEmbedField[] {
  return lines.length > 0
    ? [{ name, value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue, locale), inline: false }]
    : [];
}

function domainEmbed(domain: DomainInfo, ctx: RenderContext): APIEmbed {
  const state = domainExpiryState(domain, ctx.nowSec);
  const addressLines = Object.entries(domain.addresses).flatMap(([chain, address]) => {
    const code = inlineCode(truncate(address, 200));
    return code ? [`**${escapeLine(truncate(chain, 40)) || '?'}**: ${code}`] : [];
  });
  const relatedLines = domain.domains.map((name) => escapeLine(truncate(name, 200))).filter(Boolean);
  const contenthash = cleanLine(domain.contenthash ?? '');
  const contentUrl = safeUrl(contenthash, ctx.ipfsGateway);
  const avatar = safeUrl(domain.texts.avatar, ctx.ipfsGateway);
  const { locale } = ctx;
  const label = (key: MessageKey) => t(locale, key);
  const fields: APIEmbedField[] = [
    ...addressField(label('domain.field.owner'), domain.ownerAddress),
    ...addressField(label('domain.field.manager'), domain.managerAddress),
    ...addressField(label('domain.field.resolver'), domain.resolverAddress),
    ...addressField(label('domain.field.resolvesTo'), domain.resolvedAddress),
    {
      name: label('domain.field.primaryName'),
      value: label(domain.isPrimary ? 'domain.yes' : 'domain.no'),
      inline: true,
    },
    ...timeField(label('domain.field.registered'), domain.createdAt),
    ...timeField(label('domain.field.firstSeen'), domain.firstTxAt),
    ...listField(label('domain.field.records'), recordLines(domain.texts, ctx), locale),
    ...listField(label('domain.field.addresses'), addressLines, locale),
    ...(contenthash
      ? [
          {
            name: label('domain.field.content'),
            value: contentUrl ? maskedLink(truncate(contenthash, 60), contentUrl) : inlineCode(contenthash),
            inline: false,
          },
        ]
      : []),
    ...listField(label('domain.field.related'), relatedLines, locale),
  ];
  return {
    author: { name: platformName(domain.platform) },
    title: escapeLine(domain.identity) || label('domain.unnamed'),
    description: expiryLine(domain, state, locale),
    color: STATE_COLORS[state] ?? platformColor(domain.platform),
    ...(avatar ? { thumbnail: { url: avatar } } : {}),
    fields,
    footer: { text: label('domain.footer') },
  };
}

/** The domain message: roles, expiry with its status, chosen text records, addresses and contenthash. */
export function renderDomain(domain: DomainInfo, ctx: RenderContext): MessagePayload {
  return finishPayload([domainEmbed(domain, ctx)], [], ctx);
}
