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
import { DISCORD_LIMITS, escapeLine, inlineCode, truncate } from '../text/safety.ts';

/** Whose view: the member's own (`/whoami`) or a moderator's (`/gating check`, the context menu). */
export type Audience = 'member' | 'moderator';

/** Builds the custom id of a button that starts `/verify` of `address` for whoever clicks it. */
export type SignButtonId = (address: string) => string;

const LABEL_MAX = 60;
const LABELS_LISTED = 3;
const IDENTITY_MAX = 100;

function labelList(entries: UncountedCredential[]): { text: string; plural: boolean } {
  const labels = [
    ...new Set(entries.map((e) => escapeLine(truncate(e.label || e.source, LABEL_MAX)) || 'A credential')),
  ];
  const shown = labels.slice(0, LABELS_LISTED);
  const more = labels.length - shown.length;
  const text =
    more > 0
      ? `${shown.join(', ')} and ${more} more`
      : shown.length > 1
        ? `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`
        : (shown[0] ?? 'A credential');
  return { text, plural: labels.length > 1 };
}

function nameText(identity: string): string {
  return `**${escapeLine(truncate(identity, IDENTITY_MAX)) || 'an identity'}**`;
}

function walletText(address: string): string {
  return `wallet ${inlineCode(shortAddress(address))}`;
}

function verifyHint(identity: string): string {
  return `/verify ${inlineCode(identity, IDENTITY_MAX)}`;
}

/** One sentence for the entries of one subject. `hasButton`: the member sees a button for this wallet. */
function sentence(entries: UncountedCredential[], audience: Audience, hasButton: boolean): string {
  const first = entries[0];
  if (!first) return '';
  const { text, plural } = labelList(entries);
  const belongs = plural ? 'belong' : 'belongs';
  const it = plural ? 'them' : 'it';
  const wallet = first.signWith;
  const signAdvice = (address: string) =>
    audience === 'member'
      ? `sign with that wallet to count ${it}${hasButton ? '' : ` (${verifyHint(address)})`}.`
      : `${plural ? 'they count' : 'it counts'} once the member signs with that wallet (${verifyHint(address)}).`;
  const notProven = audience === 'member' ? 'which you have not proven' : 'which the member has not proven';
  switch (first.reason) {
    case 'address_not_proven':
      return `${text} ${belongs} to ${walletText(first.subject)}, ${notProven}: ${signAdvice(first.subject)}`;
    case 'identity_not_proven': {
      const advice =
        audience === 'member'
          ? `run ${verifyHint(first.subject)} to count ${it}.`
          : `${plural ? 'they count' : 'it counts'} once the member proves it (${verifyHint(first.subject)}).`;
      return `${text} ${belongs} to ${nameText(first.subject)}, ${notProven} here: ${advice}`;
    }
    case 'unknown_subject':
      return wallet === null
        ? `Web3.bio does not say whose ${text} ${plural ? 'are' : 'is'}, so ${plural ? 'they do' : 'it does'} not count.`
        : `Web3.bio does not say whose ${text} ${plural ? 'are' : 'is'}, and ${nameText(first.lookedUp)} points at ${walletText(wallet)}, ${notProven}: ${signAdvice(wallet)}`;
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
): string[] {
  const groups = new Map<string, UncountedCredential[]>();
  for (const e of entries) {
    const key = `${e.reason}\n${e.subject}\n${e.signWith ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  return [...groups.values()].map((group) => {
    const wallet = group[0]?.signWith ?? null;
    return `⚠️ ${sentence(group, audience, wallet !== null && buttons.has(wallet))}`;
  });
}

/** A row of "Sign with 0xcd13…c3b1" buttons (the first five wallets); empty when there is nothing to sign. */
export function signButtonRows(
  wallets: readonly string[],
  signButtonId: SignButtonId,
): APIActionRowComponent<APIButtonComponent>[] {
  const buttons = wallets.slice(0, DISCORD_LIMITS.buttonsPerRow).map(
    (address): APIButtonComponent => ({
      type: ComponentType.Button,
      style: ButtonStyle.Primary,
      label: truncate(`Sign with ${shortAddress(address)}`, DISCORD_LIMITS.buttonLabel),
      custom_id: signButtonId(address),
    }),
  );
  return buttons.length > 0 ? [{ type: ComponentType.ActionRow, components: buttons }] : [];
}
