import {
  type APIActionRowComponent,
  type APISelectMenuOption,
  type APIStringSelectComponent,
  ComponentType,
} from 'discord-api-types/v10';
import { cleanLine, DISCORD_LIMITS, escapeLine, inlineCode, truncate } from '../text/safety.ts';
import type { IdentityKind } from '../web3bio/identity.ts';
import type { Profile } from '../web3bio/types.ts';
import { joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

export const MESSAGE_IDENTITIES_TITLE = 'Web3 identities in this message';
export const NO_IDENTITIES_TEXT = 'No web3 identities found in this message.';

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
function kindName(kind: IdentityKind): string {
  return kind === 'solana-address' ? 'Solana address' : 'not looked up here';
}

function shortAddress(address: string): string {
  return address.length > 14 ? `${address.slice(0, 6)}…${address.slice(-4)}` : address;
}

/** A short detail: the resolved address, else the start of the bio. */
function detail(profile: Profile): string {
  if (profile.address) return inlineCode(shortAddress(cleanLine(profile.address)));
  const bio = cleanLine(profile.description ?? '');
  return bio === '' ? '' : escapeLine(truncate(bio, BIO_MAX));
}

function line(answer: IdentityAnswer, index: number): string {
  const written = inlineCode(answer.identity, IDENTITY_CODE_MAX);
  const { profile } = answer;
  if (profile === null) return `${index}. ${written} · not found on Web3.bio`;
  if (profile === undefined)
    return `${index}. ${written} · ${kindName(answer.kind)} · pick it below for the profile`;
  const name = cleanLine(profile.displayName ?? '') || cleanLine(profile.identity) || answer.identity;
  const parts = [`**${escapeLine(truncate(name, NAME_MAX))}**`, escapeLine(platformName(profile.platform))];
  if (name !== answer.identity) parts.push(written);
  const more = detail(profile);
  if (more !== '') parts.push(more);
  return `${index}. ${parts.join(' · ')}`;
}

function option(answer: IdentityAnswer): APISelectMenuOption | null {
  // A value carries the identity itself (at most 100 characters): longer ones stay in the list only.
  if (answer.profile === null || answer.identity.length > DISCORD_LIMITS.selectOptionValue) return null;
  const name = cleanLine(answer.profile?.displayName ?? '') || answer.identity;
  const platform = answer.profile ? platformName(answer.profile.platform) : kindName(answer.kind);
  return {
    label: truncate(name, DISCORD_LIMITS.selectOptionLabel),
    value: answer.identity,
    description: truncate(`${platform} · ${answer.identity}`, DISCORD_LIMITS.selectOptionDescription),
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
  if (answers.length === 0) {
    return finishPayload(
      [{ title: MESSAGE_IDENTITIES_TITLE, description: NO_IDENTITIES_TEXT, color: COLORS.neutral }],
      [],
      ctx,
    );
  }
  const lines = answers.map((answer, i) => line(answer, i + 1));
  const options = answers
    .map(option)
    .filter((o): o is APISelectMenuOption => o !== null)
    .slice(0, DISCORD_LIMITS.selectOptions);
  const menu: APIActionRowComponent<APIStringSelectComponent> = {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.StringSelect,
        custom_id: openId,
        placeholder: 'Open the full /whois card',
        options,
      },
    ],
  };
  return finishPayload(
    [
      {
        title: MESSAGE_IDENTITIES_TITLE,
        description: joinLinesWithin(lines, DISCORD_LIMITS.description),
        color: COLORS.info,
      },
    ],
    options.length > 0 ? [menu] : [],
    ctx,
  );
}
