import type { APIEmbedField } from 'discord-api-types/v10';
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
import { fieldsWithin, formatNumber } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Leaves room for the title and description inside Discord's 6000-character message total. */
const FIELDS_BUDGET = 5000;
const CREDENTIAL_DESCRIPTION_MAX = 160;

const VERDICTS: Record<CredentialVerdict, { text: string; color: number }> = {
  human: { text: '✅ **Likely human**: personhood signals, no risk flags', color: COLORS.success },
  risky: { text: '⚠️ **Risky**: flagged by at least one risk signal', color: COLORS.caution },
  spam: { text: '⛔ **Spam**: flagged as spam', color: COLORS.danger },
  none: { text: '➖ **No signals**: Web3.bio knows no credentials for this identity', color: COLORS.neutral },
};

const CATEGORIES: { key: CredentialCategory; icon: string; noun: string }[] = [
  { key: 'isSpam', icon: '⛔', noun: 'spam' },
  { key: 'isRisky', icon: '⚠️', noun: 'risky' },
  { key: 'isHuman', icon: '✅', noun: 'human' },
];

/** The one-line verdict, e.g. `✅ **Likely human**: …`, shared with the wallet message. */
export function verdictLine(verdict: CredentialVerdict): string {
  return VERDICTS[verdict].text;
}

/** The verdict's embed colour. */
export function verdictColor(verdict: CredentialVerdict): number {
  return VERDICTS[verdict].color;
}

/** Signal counts per category and expired entries, e.g. `1 human · 0 risky · 0 spam`. */
export function credentialCounts(set: CredentialSet, nowSec: number): string {
  const counts = [...CATEGORIES]
    .reverse()
    .map(
      ({ key, noun }) => `${(set[key] ?? []).filter((c) => isCredentialSignal(c, nowSec)).length} ${noun}`,
    );
  const expired = CATEGORIES.flatMap(({ key }) => set[key] ?? []).filter((c) =>
    isCredentialExpired(c, nowSec),
  ).length;
  const expiredNote = expired > 0 ? ` · ${expired} expired, not counted` : '';
  return `${counts.join(' · ')}${expiredNote}`;
}

function valueLine(c: Credential, locale: string): string {
  const score = credentialScore(c);
  if (score !== null) return `Score: **${formatNumber(score, locale, { maximumFractionDigits: 2 })}**`;
  if (c.type.trim().toLowerCase() === 'boolean') return credentialIsTrue(c) ? 'Value: **yes**' : 'Value: no';
  return `Value: ${escapeLine(truncate(c.value, 100))}`;
}

function timesLine(c: Credential, nowSec: number): string {
  const updated = c.updatedAt !== null ? `Updated ${discordTime(c.updatedAt, 'R')}` : null;
  const expiry =
    c.expiredAt === null
      ? 'No expiry'
      : isCredentialExpired(c, nowSec)
        ? `**Expired** ${discordTime(c.expiredAt, 'R')}`
        : `Expires ${discordTime(c.expiredAt, 'R')}`;
  return [updated, expiry].filter((part) => part !== null).join(' · ');
}

function credentialField(c: Credential, icon: string, ctx: RenderContext): APIEmbedField {
  const expired = isCredentialExpired(c, ctx.nowSec);
  const label = escapeLine(truncate(c.label, 200)) || escapeLine(c.source) || 'Credential';
  const description = escapeText(truncate(c.description.trim(), CREDENTIAL_DESCRIPTION_MAX)).trim();
  const source = escapeLine(truncate(c.source, 100));
  const id = c.id ? inlineCode(truncate(c.id, 120)) : '';
  const link = safeUrl(c.link, ctx.ipfsGateway);
  const lines = [
    description,
    [source ? `Source: ${source}` : '', id].filter(Boolean).join(' · '),
    valueLine(c, ctx.locale),
    timesLine(c, ctx.nowSec),
    link ? maskedLink('Details', link) : '',
  ];
  return {
    name: `${expired ? '⌛' : icon} ${label}${expired ? ' (expired)' : ''}`,
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
  const embed = {
    title: `Credentials · ${escapeLine(truncate(identity, 200)) || 'unknown identity'}`,
    description: `${verdictLine(verdict)}\n${credentialCounts(set, ctx.nowSec)}`,
    color: verdictColor(verdict),
    fields: fieldsWithin(orderedFields(set, ctx), DISCORD_LIMITS.fields, FIELDS_BUDGET),
    footer: { text: 'Web3.bio credentials · expired credentials are not counted' },
  };
  return finishPayload([embed], [], ctx);
}
