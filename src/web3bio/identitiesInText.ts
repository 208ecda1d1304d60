/**
 * Web3 identities written in free text, such as a Discord message: names ending in .eth, .base.eth or
 * .linea.eth, EVM and Solana addresses, Farcaster handles (`@name`, `name.farcaster`) and Lens handles
 * (`lens/name`, `name.lens`). Words are only cut out here; parseIdentity decides what each one is.
 */
import { parseBatchId, parseIdentity, withoutHandleMark } from './identity.ts';
import type { IdentityKind } from './identityKind.ts';

/** At most this many identities are taken from one text (the first ones written). */
export const MAX_IDENTITIES_IN_TEXT = 10;

export interface IdentityInText {
  /** Normalised by parseIdentity: what /whois takes, and the key duplicates are dropped by. */
  identity: string;
  kind: IdentityKind;
  /** The `platform,identity` id for the batch lookup; null for kinds the batch route does not take. */
  batchId: string | null;
}

// Discord markup that only looks like text: mentions, channels, slash commands, emoji, timestamps.
const DISCORD_MARKUP = /<(?:@[!&]?|#|\/|a?:|t:|id:)[^<>]*>/g;
// Characters no identity contains; `/` is handled per word (URLs, `lens/name`).
const WORD_SEPARATORS = /[\s,;()[\]{}<>"'`*|~!?\\]+/u;
const LENS_PATH = /^lens\/([a-z0-9_][a-z0-9_-]{0,63})$/i;
const EDGE_PUNCTUATION = /^[.:]+|[.:]+$/g;
/** Name endings that count in prose; parseIdentity also reads bare DNS names as ENS, which prose is full of. */
const NAME_ENDINGS: Partial<Record<IdentityKind, readonly string[]>> = {
  ens: ['.eth'],
  basenames: ['.base.eth'],
  linea: ['.linea.eth'],
  lens: ['.lens'],
  farcaster: ['.farcaster', '.fcast.id', '.farcaster.eth'],
};
const ADDRESS_KINDS: ReadonlySet<IdentityKind> = new Set(['evm-address', 'solana-address']);

/** The identities written in `text`, in order of first appearance, without duplicates, at most `max`. */
export function findIdentitiesInText(text: string, max = MAX_IDENTITIES_IN_TEXT): IdentityInText[] {
  const found = new Map<string, IdentityInText>();
  for (const candidate of candidates(text)) {
    if (found.size >= max) break;
    const identity = identify(candidate);
    if (identity && !found.has(identity.identity)) found.set(identity.identity, identity);
  }
  return [...found.values()];
}

/** What each word could be: `@name` stays marked as a handle, `lens/name` becomes `name.lens`. */
function* candidates(text: string): Generator<{ word: string; handle: boolean }> {
  for (const word of text.replace(DISCORD_MARKUP, ' ').split(WORD_SEPARATORS)) {
    const lens = LENS_PATH.exec(word);
    if (lens) {
      yield { word: `${lens[1]}.lens`, handle: false };
      continue;
    }
    for (const piece of word.split('/')) {
      const bare = unwrap(piece);
      const word = withoutHandleMark(bare);
      if (word !== '') yield { word, handle: word !== bare };
    }
  }
}

/** Drop sentence punctuation and markdown underscores around a word (`_vitalik.eth_.` is vitalik.eth). */
function unwrap(word: string): string {
  let out = word.replace(EDGE_PUNCTUATION, '');
  while (out.length > 2 && out.startsWith('_') && out.endsWith('_')) out = out.slice(1, -1);
  return out;
}

function identify({ word, handle }: { word: string; handle: boolean }): IdentityInText | null {
  let parsed: ReturnType<typeof parseIdentity>;
  try {
    parsed = parseIdentity(word);
  } catch {
    return null;
  }
  const written = word.toLowerCase();
  const endings = NAME_ENDINGS[parsed.kind] ?? [];
  const counts =
    ADDRESS_KINDS.has(parsed.kind) ||
    endings.some((ending) => written.endsWith(ending)) ||
    (handle && parsed.kind === 'farcaster');
  if (!counts) return null;
  return { identity: parsed.identity, kind: parsed.kind, batchId: batchIdOf(parsed.identity) };
}

function batchIdOf(identity: string): string | null {
  try {
    return parseBatchId(identity).id;
  } catch {
    return null;
  }
}
