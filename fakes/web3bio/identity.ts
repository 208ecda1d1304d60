/**
 * Identity rules of the stand-in server, written the way the live Web3.bio server applies them
 * (see /work/shared/spec/real-server-notes.md, "Caching").
 */

const EVM_ADDRESS = /^0x[0-9a-f]{40}$/i;
const BASE58_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
/** Something dotted with no whitespace, control characters, commas or slashes (ENS allows emoji). */
const DOTTED_NAME = /^[^\s\p{Cc},/]+\.[^\s\p{Cc},/.]+$/u;
const FARCASTER_FID = /^(?:farcaster,)?#(\d{1,12})$|^fid:(\d{1,12})$/;
const FARCASTER_NAME = /^[a-z0-9][a-z0-9_.-]{0,63}$/;

/** Order of platforms in a universal answer, as the live server sorts it. Others come after. */
export const UNIVERSAL_ORDER = [
  'ens',
  'basenames',
  'linea',
  'ethereum',
  'farcaster',
  'lens',
  'sns',
  'solana',
];

/** True for a 0x-prefixed 20-byte hex address, any case. */
export function isEvmAddress(value: string): boolean {
  return EVM_ADDRESS.test(value);
}

/** True for a base58 Solana address (case matters). */
export function isSolanaAddress(value: string): boolean {
  return BASE58_ADDRESS.test(value);
}

/** True for either address form. */
export function isAddress(value: string): boolean {
  return isEvmAddress(value) || isSolanaAddress(value);
}

/** Trim, lowercase (except base58 addresses) and write `.base`/`.linea` as `.base.eth`/`.linea.eth`. */
export function normalizeIdentity(raw: string): string {
  const trimmed = raw.trim();
  if (isSolanaAddress(trimmed)) return trimmed;
  const lower = trimmed.toLowerCase();
  return lower.endsWith('.base') || lower.endsWith('.linea') ? `${lower}.eth` : lower;
}

/** Normalise a value read from a stored wire object; non-strings give null. */
export function normalizeField(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? normalizeIdentity(value) : null;
}

/** `0x1234...abcd`: the display name the server gives an address with no name. */
export function shortAddress(address: string): string {
  return `${address.slice(0, 6)}...${address.slice(-4)}`;
}

/** The FID in `farcaster,#3`, `#3` or legacy `fid:3`, else null. */
export function farcasterFid(identity: string): string | null {
  const match = FARCASTER_FID.exec(identity);
  return match ? (match[1] ?? match[2] ?? null) : null;
}

/** A Farcaster name without its `.farcaster`, `.fcast.id` or `.eth` suffix, for comparison. */
export function farcasterBaseName(identity: string): string {
  return identity.replace(/\.(?:farcaster|fcast\.id)$/, '').replace(/\.eth$/, '');
}

/** A Lens handle without `lens/` prefix or `.lens` suffix, for comparison. */
export function lensBaseName(identity: string): string {
  return identity.replace(/^lens\//, '').replace(/\.lens$/, '');
}

/** Platform a name or address belongs to by its form, or null when the form is unknown. */
export function platformForName(identity: string): string | null {
  if (isEvmAddress(identity)) return 'ethereum';
  if (isSolanaAddress(identity)) return 'solana';
  if (farcasterFid(identity) !== null || /\.(?:farcaster|fcast\.id)$/.test(identity)) return 'farcaster';
  if (identity.endsWith('.base.eth')) return 'basenames';
  if (identity.endsWith('.linea.eth')) return 'linea';
  if (identity.endsWith('.eth')) return 'ens';
  if (identity.endsWith('.lens')) return 'lens';
  if (identity.endsWith('.sol')) return 'sns';
  if (identity.endsWith('.bit')) return 'dotbit';
  if (/\.(?:crypto|nft|x|wallet|blockchain|dao|888|zil|bitcoin)$/.test(identity)) return 'unstoppabledomains';
  return null;
}

/** Whether a normalised identity has a form some route could accept (`platform` narrows Farcaster/Lens names). */
export function isPlausibleIdentity(identity: string, platform?: string): boolean {
  if (isAddress(identity) || DOTTED_NAME.test(identity)) return true;
  if (platform === 'farcaster') return farcasterFid(identity) !== null || FARCASTER_NAME.test(identity);
  if (platform === 'lens') return FARCASTER_NAME.test(lensBaseName(identity));
  return false;
}

/** Rank of a platform in universal answers; unknown platforms sort last. */
export function universalRank(platform: string): number {
  const index = UNIVERSAL_ORDER.indexOf(platform);
  return index === -1 ? UNIVERSAL_ORDER.length : index;
}
