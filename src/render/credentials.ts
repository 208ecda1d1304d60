import type { APIEmbedField } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import {
  DISCORD_LIMITS,
  discordTime,
  escapeLine,
  escapeText,
  inlineCode,
  maskedLink,
  safeUrl,
  truncate,
} from '../text/safety.ts';
import {
  type CredentialVerdict,
  credentialIsTrue,
  credentialScore,
  credentialVerdict,
  isCredentialExpired,
  isCredentialSignal,
} from '../web3bio/credentials.ts';
import type { Credential, CredentialCategory, CredentialSet } from '../web3bio/types.ts';
import { fieldsWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Leaves room for the title and description inside Discord's 6000-character message total. */
const FIELDS_BUDGET = 5000;
const CREDENTIAL_DESCRIPTION_MAX = 160;

const VERDICT_COLORS: Record<CredentialVerdict, number> = {
  human: COLORS.success,
  risky: COLORS.caution,
  spam: COLORS.danger,
  none: COLORS.neutral,
};

const CATEGORIES: { key: CredentialCategory; icon: string }[] = [
  { key: 'isSpam', icon: '⛔' },
  { key: 'isRisky', icon: '⚠️' },
  { key: 'isHuman', icon: '✅' },
];

/** The one-line verdict, e.g. `✅ **Likely human**: …`, shared with the wallet message. */
export function verdictLine(verdict: CredentialVerdict, locale: string): string {
  return t(locale, `creds.verdict.${verdict}`);
}

/** The verdict's embed colour. */
export function verdictColor(verdict: CredentialVerdict): number {
  return VERDICT_COLORS[verdict];
}

/** Signal counts per category and expired entries, e.g. `1 human · 0 risky · 0 spam`. */
export function credentialCounts(set: CredentialSet, nowSec: number, locale: string): string {
  const signals = (key: CredentialCategory) =>
    (set[key] ?? []).filter((c) => isCredentialSignal(c, nowSec)).length;
  const counts = { human: signals('isHuman'), risky: signals('isRisky'), spam: signals('isSpam') };
  const expired = CATEGORIES.flatMap(({ key }) => set[key] ?? []).filter((c) =>
    isCredentialExpired(c, nowSec),
  ).length;
  return expired > 0
    ? t(locale, 'creds.countsWithExpired', { ...counts, expired })
    : t(locale, 'creds.counts', counts);
}

function valueLine(c: Credential, locale: string): string {
  const score = credentialScore(c);
  if (score !== null) return t(locale, 'creds.score', { score });
  if (c.type.trim().toLowerCase() === 'boolean')
    return t(locale, credentialIsTrue(c) ? 'creds.valueYes' : 'creds.valueNo');
  return t(locale, 'creds.value', { value: escapeLine(truncate(c.value, 100)) });
}

function timesLine(c: Credential, ctx: RenderContext): string {
  const { locale } = ctx;
  const updated =
    c.updatedAt !== null ? t(locale, 'creds.updated', { time: discordTime(c.updatedAt, 'R') }) : null;
  const expiry =
    c.expiredAt === null
      ? t(locale, 'creds.noExpiry')
      : t(locale, isCredentialExpired(c, ctx.nowSec) ? 'creds.expiredAt' : 'creds.expiresAt', {
          time: discordTime(c.expiredAt, 'R'),
        });
  return [updated, expiry].filter((part) => part !== null).join(' · ');
}

function credentialField(c: Credential, icon: string, ctx: RenderContext): APIEmbedField {
  const expired = isCredentialExpired(c, ctx.nowSec);
  const label = escapeLine(truncate(c.label, 200)) || escapeLine(c.source) || t(ctx.locale, 'creds.untitled');
  const description = escapeText(truncate(c.description.trim(), CREDENTIAL_DESCRIPTION_MAX)).trim();
  const source = escapeLine(truncate(c.source, 100));
  const id = c.id ? inlineCode(truncate(c.id, 120)) : '';
  const link = safeUrl(c.link, ctx.ipfsGateway);
  const lines = [
    description,
    [source ? t(ctx.locale, 'creds.source', { source }) : '', id].filter(Boolean).join(' · '),
    valueLine(c, ctx.locale),
    timesLine(c, ctx),
    link ? maskedLink(t(ctx.locale, 'creds.details'), link) : '',
  ];
  return {
    name: expired ? t(ctx.locale, 'creds.fieldExpired', { label }) : `${icon} ${label}`,
    value: lines.filter(Boolean).join('\n'),
    inline: false,
  };
}

/** Signals first (spam, risky, human), expired entries last. */
function orderedFields(set: CredentialSet, ctx: RenderContext): APIEmbedField[] {
  const entries = CATEGORIES.flatMap(({ key, icon }) => (set[key] ?? []).map((c) => ({ c, icon })));
  const live = entries.filter(({ c }) => !isCredentialExpired(c, ctx.nowSec));
  const expired = entries.filter(({ c }) => isCredentialExpired(c, ctx.nowSec));
  return [...live, ...expired].map(({ c, icon }) => credentialField(c, icon, ctx));
}

/** The credentials message: a verdict at a glance, then each credential with its source, value and times. */
export function renderCredentials(identity: string, set: CredentialSet, ctx: RenderContext): MessagePayload {
  const verdict = credentialVerdict(set, ctx.nowSec);
  const { locale } = ctx;
  const name = escapeLine(truncate(identity, 200)) || t(locale, 'creds.unknownIdentity');
  const embed = {
    title: t(locale, 'creds.title', { identity: name }),
    description: `${verdictLine(verdict, locale)}\n${credentialCounts(set, ctx.nowSec, locale)}`,
    color: verdictColor(verdict),
    fields: fieldsWithin(orderedFields(set, ctx), DISCORD_LIMITS.fields, FIELDS_BUDGET, locale),
    footer: { text: t(locale, 'creds.footer') },
  };
  return finishPayload([embed], [], ctx);
}
