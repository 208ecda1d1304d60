import type { APIEmbed, APIEmbedField } from 'discord-api-types/v10';
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

const STATE_STYLE: Record<DomainExpiryState, { label: string; color: number | null }> = {
  active: { label: '🟢 **Active**', color: COLORS.success },
  expiring: { label: '🟡 **Expiring soon**', color: COLORS.warning },
  grace: { label: '🟠 **In grace period**', color: COLORS.caution },
  expired: { label: '🔴 **Expired**', color: COLORS.danger },
  unknown: { label: '⚪ **No expiry known**', color: null },
};

function both(unixSec: number): string {
  return `${discordTime(unixSec, 'F')} (${discordTime(unixSec, 'R')})`;
}

function expiryLine(domain: DomainInfo, state: DomainExpiryState): string {
  const { label } = STATE_STYLE[state];
  const { expiredAt } = domain;
  if (expiredAt === null || state === 'unknown') return label;
  if (state === 'grace') {
    return `${label}: expired ${both(expiredAt)}; the owner can renew until ${discordTime(expiredAt + GRACE_PERIOD_SEC, 'F')}`;
  }
  return `${label}: ${state === 'expired' ? 'expired' : 'expires'} ${both(expiredAt)}`;
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

function recordLines(texts: Record<string, string>, ipfsGateway: string): string[] {
  const linkOrText = (value: string) => {
    const url = safeUrl(value, ipfsGateway);
    return url ? maskedLink(truncate(value, 80), url) : inlineCode(value);
  };
  const records: [string, string | undefined, (value: string) => string][] = [
    ['Website', firstText(texts, ['url']), linkOrText],
    ['Email', firstText(texts, ['email']), (v) => escapeLine(truncate(v, 200))],
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
    ['Description', firstText(texts, ['description']), (v) => escapeLine(truncate(v, 300))],
    ['Avatar', firstText(texts, ['avatar']), linkOrText],
  ];
  return records.flatMap(([name, value, show]) => {
    const shown = value === undefined ? '' : show(value);
    return shown ? [`**${name}**: ${shown}`] : [];
  });
}

function listField(name: string, lines: string[]): APIEmbedField[] {
  return lines.length > 0
    ? [{ name, value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue), inline: false }]
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
  const fields: APIEmbedField[] = [
    ...addressField('Owner', domain.ownerAddress),
    ...addressField('Manager', domain.managerAddress),
    ...addressField('Resolver', domain.resolverAddress),
    ...addressField('Resolves to', domain.resolvedAddress),
    { name: 'Primary name', value: domain.isPrimary ? 'Yes' : 'No', inline: true },
    ...timeField('Registered', domain.createdAt),
    ...timeField('First seen', domain.firstTxAt),
    ...listField('Records', recordLines(domain.texts, ctx.ipfsGateway)),
    ...listField('Addresses', addressLines),
    ...(contenthash
      ? [
          {
            name: 'Content',
            value: contentUrl ? maskedLink(truncate(contenthash, 60), contentUrl) : inlineCode(contenthash),
            inline: false,
          },
        ]
      : []),
    ...listField('Related domains', relatedLines),
  ];
  return {
    author: { name: platformName(domain.platform) },
    title: escapeLine(domain.identity) || 'Unnamed domain',
    description: expiryLine(domain, state),
    color: STATE_STYLE[state].color ?? platformColor(domain.platform),
    ...(avatar ? { thumbnail: { url: avatar } } : {}),
    fields,
    footer: { text: 'Web3.bio domain data' },
  };
}

/** The domain message: roles, expiry with its status, chosen text records, addresses and contenthash. */
export function renderDomain(domain: DomainInfo, ctx: RenderContext): MessagePayload {
  return finishPayload([domainEmbed(domain, ctx)], [], ctx);
}
