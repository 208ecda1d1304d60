import { MAX_IDENTITY_LENGTH, type ParsedIdentity, parseIdentity, withoutHandleMark } from './identity.ts';
import type { IdentityKind } from './identityKind.ts';

/**
 * The endings a name is completed with, in the order they are offered: ENS, Basenames, Linea, Farcaster,
 * Lens. Each is a form `parseIdentity` accepts for its platform.
 */
export const NAME_ENDINGS: readonly string[] = ['.eth', '.base.eth', '.linea.eth', '.farcaster', '.lens'];

/** Hex after 0x: an address being typed, which no ending turns into a name anyone means. */
const PARTIAL_EVM_ADDRESS = /^0x[0-9a-f]*$/i;

/** Identities that stand for themselves: nothing is appended to them. */
const WHOLE_KINDS: ReadonlySet<IdentityKind> = new Set(['evm-address', 'solana-address', 'farcaster-fid']);

/**
 * The identities `typed` may be heading for, normalised by `parseIdentity` (ENSIP-15): an address or a
 * FID as it is; else its completions in the order of NAME_ENDINGS (`vitalik` → `vitalik.eth` …
 * `vitalik.lens`, `vitalik.ba` → `vitalik.base.eth`); else, when no ending fits, the typed name itself
 * (`bonfida.sol`). A handle being typed (`@dwr`) is the Farcaster username `parseIdentity` reads it as
 * (`dwr.farcaster`); once it has a dot, the name after the `@` is completed. Only forms that parse back to
 * themselves are returned; never throws.
 */
export function completeIdentity(typed: string): string[] {
  const text = typeof typed === 'string' ? typed.trim() : '';
  if (text === '' || text.length > MAX_IDENTITY_LENGTH) return [];
  if (text.startsWith('@')) return completeHandle(text);
  const itself = stableIdentity(text);
  if (itself && WHOLE_KINDS.has(itself.kind)) return [itself.identity];
  if (PARTIAL_EVM_ADDRESS.test(text)) return [];
  const completions = new Set<string>();
  for (const candidate of endingsFor(text)) {
    const parsed = stableIdentity(candidate);
    if (parsed) completions.add(parsed.identity);
  }
  if (completions.size > 0) return [...completions];
  return itself ? [itself.identity] : [];
}

/** `@name`: its Farcaster form while dotless (normalised through the name's ENSIP-15 path), else the name's completions. */
function completeHandle(text: string): string[] {
  const handle = withoutHandleMark(text);
  if (handle === text) return [];
  if (handle.includes('.')) return completeIdentity(handle);
  const parsed = stableIdentity(`${handle}.farcaster`);
  return parsed?.kind === 'farcaster' ? [parsed.identity] : [];
}

/**
 * `text` parsed, when its normalised identity parses to itself again (so it can be offered as a value:
 * `ab--cd` parses as a Farcaster username, but `ab--cd.farcaster` is no valid name); undefined otherwise.
 */
export function stableIdentity(text: string): ParsedIdentity | undefined {
  try {
    const parsed = parseIdentity(text);
    return parseIdentity(parsed.identity).identity === parsed.identity ? parsed : undefined;
  } catch {
    return undefined;
  }
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
