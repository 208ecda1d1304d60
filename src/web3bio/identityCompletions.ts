import { MAX_IDENTITY_LENGTH, parseIdentity } from './identity.ts';

/**
 * The endings a name is completed with, in the order they are offered: ENS, Basenames, Linea, Farcaster,
 * Lens. Each is a form `parseIdentity` accepts for its platform.
 */
export const NAME_ENDINGS: readonly string[] = ['.eth', '.base.eth', '.linea.eth', '.farcaster', '.lens'];

/** Hex after 0x: an address being typed, which no ending turns into a name anyone means. */
const PARTIAL_EVM_ADDRESS = /^0x[0-9a-f]*$/i;

/**
 * The identities `typed` may be heading for, normalised by `parseIdentity` (ENSIP-15), in the order of
 * NAME_ENDINGS after the typed text itself when it already names something else (an address, a
 * `.sol` name, a FID). Only forms that parse are returned; never throws.
 */
export function completeIdentity(typed: string): string[] {
  const text = typeof typed === 'string' ? typed.trim() : '';
  if (text === '' || text.length > MAX_IDENTITY_LENGTH) return [];
  const completions = PARTIAL_EVM_ADDRESS.test(text) ? [] : endingsFor(text);
  const out = new Set<string>();
  const itself = parsedOrUndefined(text);
  // A bare word parses as a Farcaster username: it is offered among the endings, in its place.
  if (itself !== undefined && !(itself.kind === 'farcaster' && !text.includes('.'))) out.add(itself.identity);
  for (const candidate of completions) {
    const parsed = parsedOrUndefined(candidate);
    if (parsed) out.add(parsed.identity);
  }
  return [...out];
}

/** `text` completed with each ending it is on its way to (`vitalik.ba` → `vitalik.base.eth`). */
function endingsFor(text: string): string[] {
  const lower = text.toLowerCase();
  const out: string[] = [];
  for (const ending of NAME_ENDINGS) {
    const started = startedEnding(lower, ending);
    if (started === undefined) continue;
    const base = text.slice(0, text.length - started);
    if (base !== '' && !base.endsWith('.')) out.push(`${base}${ending}`);
  }
  return out;
}

/** How many characters at the end of `lower` begin `ending` (0 when none do, as for a bare word). */
function startedEnding(lower: string, ending: string): number | undefined {
  for (let length = Math.min(ending.length, lower.length); length > 0; length -= 1) {
    if (lower.endsWith(ending.slice(0, length))) return length;
  }
  return lower.includes('.') ? undefined : 0;
}

function parsedOrUndefined(text: string) {
  try {
    return parseIdentity(text);
  } catch {
    return undefined;
  }
}
