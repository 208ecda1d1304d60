/**
 * Credentials that do not count toward a role because the member has not proven whose they are
 * (`UncountedCredential`, see gating/credentialSubjects.ts): one line per wallet or name, saying what
 * would make them count, and on `/whoami` a button per wallet that starts its signature. Pure.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  ButtonStyle,
  ComponentType,
} from 'discord-api-types/v10';
import { shortAddress, type UncountedCredential } from '../gating/rules/credentialSubjects.ts';
import { DEFAULT_LOCALE, type MessageKey, t } from '../i18n/index.ts';
import { DISCORD_LIMITS, escapeLine, inlineCode, truncate } from '../text/safety.ts';

/** Whose view: the member's own (`/whoami`) or a moderator's (`/gating check`, the context menu). */
export type Audience = 'member' | 'moderator';

/** Builds the custom id of a button that starts `/verify` of `address` for whoever clicks it. */
export type SignButtonId = (address: string) => string;

const LABEL_MAX = 60;
const LABELS_LISTED = 3;
const IDENTITY_MAX = 100;

function labelList(entries: UncountedCredential[], locale: string): { text: string; count: number } {
  const fallback = t(locale, 'gating.uncounted.aCredential');
  const labels = [
    ...new Set(entries.map((e) => escapeLine(truncate(e.label || e.source, LABEL_MAX)) || fallback)),
  ];
  const shown = labels.slice(0, LABELS_LISTED);
  const more = labels.length - shown.length;
  const separator = t(locale, 'gating.list.separator');
  const text =
    more > 0
      ? t(locale, 'gating.uncounted.andMore', { list: shown.join(separator), count: more })
      : shown.length > 1
        ? t(locale, 'gating.uncounted.and', {
            list: shown.slice(0, -1).join(separator),
            last: shown.at(-1) ?? '',
          })
        : (shown[0] ?? fallback);
  return { text, count: labels.length };
}

function nameText(identity: string, locale: string): string {
  return `**${escapeLine(truncate(identity, IDENTITY_MAX)) || t(locale, 'gating.label.anIdentity')}**`;
}

function walletText(address: string, locale: string): string {
  return t(locale, 'gating.uncounted.wallet', { address: inlineCode(shortAddress(address)) });
}

function verifyHint(identity: string): string {
  return `/verify ${inlineCode(identity, IDENTITY_MAX)}`;
}

/** One sentence for the entries of one subject. `hasButton`: the member sees a button for this wallet. */
function sentence(
  entries: UncountedCredential[],
  audience: Audience,
  hasButton: boolean,
  locale: string,
): string {
  const first = entries[0];
  if (!first) return '';
  const { text, count } = labelList(entries, locale);
  const signKey = (key: 'address' | 'unknown'): MessageKey =>
    audience === 'moderator'
      ? `gating.uncounted.${key}.moderator`
      : hasButton
        ? `gating.uncounted.${key}.memberButton`
        : `gating.uncounted.${key}.member`;
  switch (first.reason) {
    case 'address_not_proven':
      return t(locale, signKey('address'), {
        labels: text,
        count,
        wallet: walletText(first.subject, locale),
        command: verifyHint(first.subject),
      });
    case 'identity_not_proven':
      return t(locale, `gating.uncounted.identity.${audience}`, {
        labels: text,
        count,
        name: nameText(first.subject, locale),
        command: verifyHint(first.subject),
      });
    case 'unknown_subject':
      return first.signWith === null
        ? t(locale, 'gating.uncounted.unknown.none', { labels: text, count })
        : t(locale, signKey('unknown'), {
            labels: text,
            count,
            name: nameText(first.lookedUp, locale),
            wallet: walletText(first.signWith, locale),
            command: verifyHint(first.signWith),
          });
  }
}

/** The wallets to offer a signature for, in order, each once. */
export function walletsToSign(entries: readonly UncountedCredential[]): string[] {
  return [...new Set(entries.flatMap((e) => (e.signWith === null ? [] : [e.signWith])))];
}

/**
 * One line per subject, e.g. "Galxe KYC Verified belongs to wallet `0xcd13…c3b1`, which you have not
 * proven: sign with that wallet to count it." `buttons`: wallets the member has a button for.
 */
export function uncountedLines(
  entries: readonly UncountedCredential[],
  audience: Audience,
  buttons: ReadonlySet<string> = new Set(),
  locale: string = DEFAULT_LOCALE,
): string[] {
  const groups = new Map<string, UncountedCredential[]>();
  for (const e of entries) {
    const key = `${e.reason}\n${e.subject}\n${e.signWith ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return [...groups.values()].map((group) => {
    const wallet = group[0]?.signWith ?? null;
    return `⚠️ ${sentence(group, audience, wallet !== null && buttons.has(wallet), locale)}`;
  });
}

/** A row of "Sign with 0xcd13…c3b1" buttons (the first five wallets); empty when there is nothing to sign. */
export function signButtonRows(
  wallets: readonly string[],
  signButtonId: SignButtonId,
  locale: string = DEFAULT_LOCALE,
): APIActionRowComponent<APIButtonComponent>[] {
  const buttons = wallets.slice(0, DISCORD_LIMITS.buttonsPerRow).map(
    (address): APIButtonComponent => ({
      type: ComponentType.Button,
      style: ButtonStyle.Primary,
      label: truncate(
        t(locale, 'gating.uncounted.signButton', { address: shortAddress(address) }),
        DISCORD_LIMITS.buttonLabel,
      ),
      custom_id: signButtonId(address),
    }),
  );
  return buttons.length > 0 ? [{ type: ComponentType.ActionRow, components: buttons }] : [];
}
