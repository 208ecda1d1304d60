import {
  type APIActionRowComponent,
  type APISelectMenuOption,
  type APIStringSelectComponent,
  ComponentType,
} from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { cleanLine, DISCORD_LIMITS, escapeLine, inlineCode, truncate } from '../text/safety.ts';
import type { IdentityKind } from '../web3bio/identityKind.ts';
import type { Profile } from '../web3bio/types.ts';
import { joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

const NAME_MAX = 64;
const IDENTITY_CODE_MAX = 60;
const BIO_MAX = 60;

/** One identity written in the message and what Web3.bio said about it. */
export interface IdentityAnswer {
  identity: string;
  kind: IdentityKind;
  /** null: Web3.bio does not know it; undefined: not looked up (the batch route does not take this kind). */
  profile: Profile | null | undefined;
}

/** What a kind is called where no profile names its platform. */
function kindName(kind: IdentityKind, locale: string): string {
  return t(
    locale,
    kind === 'solana-address' ? 'messageIdentities.solanaAddress' : 'messageIdentities.notLookedUp',
  );
}

function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** A short detail: the resolved address, else the start of the bio. */
function detail(profile: Profile): string {
  if (profile.address) return inlineCode(shortAddress(cleanLine(profile.address)));
  return bio(profile);
}

function bio(profile: Profile): string {
  const text = cleanLine(profile.description ?? '');
  return text === '' ? '' : escapeLine(truncate(text, BIO_MAX));
}

function isAddressKind(kind: IdentityKind): boolean {
  return kind === 'evm-address' || kind === 'solana-address';
}

/**
 * The name a bare address resolves to (its primary name: the identity of the batch answer), with the
 * display name to show for it; null when the answer is the address itself (no primary name).
 */
function resolvedName(answer: IdentityAnswer, profile: Profile): { name: string; shown: string } | null {
  const name = cleanLine(profile.identity);
  if (name === '' || name.toLowerCase() === answer.identity.toLowerCase()) return null;
  return { name, shown: cleanLine(profile.displayName ?? '') || name };
}

/** A bare address: what was written once, and the primary name it resolves to under that name's platform. */
function addressLine(answer: IdentityAnswer, profile: Profile, index: number): string {
  const written = inlineCode(answer.identity, IDENTITY_CODE_MAX);
  const platform = escapeLine(platformName(profile.platform));
  const resolved = resolvedName(answer, profile);
  if (resolved === null) return `${index}. ${[written, platform, bio(profile)].filter(Boolean).join(' · ')}`;
  const parts = [`**${escapeLine(truncate(resolved.shown, NAME_MAX))}**`, platform];
  if (resolved.shown !== resolved.name) parts.push(inlineCode(resolved.name, IDENTITY_CODE_MAX));
  parts.push(written);
  return `${index}. ${parts.join(' · ')}`;
}

function line(answer: IdentityAnswer, index: number, locale: string): string {
  const written = inlineCode(answer.identity, IDENTITY_CODE_MAX);
  const { profile } = answer;
  if (profile === null) return `${index}. ${written} · ${t(locale, 'messageIdentities.notFound')}`;
  if (profile === undefined)
    return `${index}. ${written} · ${kindName(answer.kind, locale)} · ${t(locale, 'messageIdentities.pickBelow')}`;
  if (isAddressKind(answer.kind)) return addressLine(answer, profile, index);
  const name = cleanLine(profile.displayName ?? '') || cleanLine(profile.identity) || answer.identity;
  const parts = [`**${escapeLine(truncate(name, NAME_MAX))}**`, escapeLine(platformName(profile.platform))];
  if (name !== answer.identity) parts.push(written);
  const more = detail(profile);
  if (more !== '') parts.push(more);
  return `${index}. ${parts.join(' · ')}`;
}

function option(answer: IdentityAnswer, locale: string): APISelectMenuOption | null {
  // A value carries the identity itself (at most 100 characters): longer ones stay in the list only.
  if (answer.profile === null || answer.identity.length > DISCORD_LIMITS.selectOptionValue) return null;
  const { profile } = answer;
  const resolved = profile && isAddressKind(answer.kind) ? resolvedName(answer, profile) : null;
  const name = isAddressKind(answer.kind)
    ? (resolved?.shown ?? answer.identity)
    : cleanLine(profile?.displayName ?? '') || answer.identity;
  const platform = profile ? platformName(profile.platform) : kindName(answer.kind, locale);
  const about = [platform, ...(resolved ? [resolved.name] : []), answer.identity].join(' · ');
  return {
    label: truncate(name, DISCORD_LIMITS.selectOptionLabel),
    value: answer.identity,
    description: truncate(about, DISCORD_LIMITS.selectOptionDescription),
  };
}

/**
 * The private answer to the message menu: one line per identity (found, not found, or not looked up)
 * and a menu that opens an identity's full /whois card (`openId` is the whois component's custom id).
 */
export function renderMessageIdentities(
  answers: readonly IdentityAnswer[],
  ctx: RenderContext,
  openId: string,
): MessagePayload {
  const title = t(ctx.locale, 'messageIdentities.title');
  if (answers.length === 0) {
    return finishPayload(
      [{ title, description: t(ctx.locale, 'messageIdentities.none'), color: COLORS.neutral }],
      [],
      ctx,
    );
  }
  const lines = answers.map((answer, i) => line(answer, i + 1, ctx.locale));
  const options = answers
    .map((answer) => option(answer, ctx.locale))
    .filter((o): o is APISelectMenuOption => o !== null)
    .slice(0, DISCORD_LIMITS.selectOptions);
  const menu: APIActionRowComponent<APIStringSelectComponent> = {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.StringSelect,
        custom_id: openId,
        placeholder: t(ctx.locale, 'messageIdentities.placeholder'),
        options,
      },
    ],
  };
  return finishPayload(
    [
      {
        title,
        description: joinLinesWithin(lines, DISCORD_LIMITS.description),
        color: COLORS.info,
      },
    ],
    options.length > 0 ? [menu] : [],
    ctx,
  );
}
