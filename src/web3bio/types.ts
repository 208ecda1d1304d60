/**
 * Domain objects returned by the Web3.bio client. Wire shapes (`RawX`) live in `schemas.ts` and are
 * mapped to these by `toX` functions; everything here is plain JSON-safe data (times are Unix seconds)
 * so a shared cache can store it as-is.
 */

/** Platforms the profile routes accept as a path segment. `solana` answers with `platform: "sns"`. */
export const PLATFORM_SEGMENTS = [
  'ens',
  'farcaster',
  'lens',
  'basenames',
  'linea',
  'solana',
  'unstoppabledomains',
  'dotbit',
] as const;
export type PlatformSegment = (typeof PLATFORM_SEGMENTS)[number];

/** Platforms accepted inside batch ids (`<platform>,<identity>`). */
export const BATCH_PLATFORMS = ['ethereum', 'ens', 'basenames', 'linea', 'farcaster', 'lens'] as const;
export type BatchPlatform = (typeof BATCH_PLATFORMS)[number];

/** A platform label as the server writes it. Known values are listed; unknown ones are kept. */
export type Platform =
  | 'ens'
  | 'farcaster'
  | 'lens'
  | 'basenames'
  | 'linea'
  | 'sns'
  | 'solana'
  | 'ethereum'
  | 'unstoppabledomains'
  | 'dotbit'
  | (string & {});

export interface ProfileLink {
  /** Link key as sent by the server, e.g. `website`, `github`, `twitter`. */
  key: string;
  /** URL, or null when the server sent an empty string. Not yet sanitised: render decides what is safe. */
  link: string | null;
  handle: string | null;
  /** Empty when the server sent none (older responses). */
  sources: string[];
}

export interface Social {
  uid: string | number | null;
  follower: number | null;
  following: number | null;
}

/** `/ns` object: the reduced name-service view. */
export interface NsProfile {
  address: string | null;
  identity: string;
  platform: Platform;
  displayName: string | null;
  avatar: string | null;
  description: string | null;
  header: string | null;
  status: string | null;
  /** `<platform>,<identity>` pairs; only batch answers carry them, otherwise empty. */
  aliases: string[];
}

/** `/profile` object. */
export interface Profile extends NsProfile {
  email: string | null;
  location: string | null;
  contenthash: string | null;
  links: ProfileLink[];
  /** Null when the server sent an empty object. */
  social: Social | null;
  /** Unix seconds, or null. Live-only field. */
  createdAt: number | null;
}

export type CredentialCategory = 'isHuman' | 'isRisky' | 'isSpam';
export const CREDENTIAL_CATEGORIES: readonly CredentialCategory[] = ['isHuman', 'isRisky', 'isSpam'];

export interface Credential {
  /** `<platform>,<identity>`; null inside the wallet bundle. */
  id: string | null;
  platform: string;
  category: CredentialCategory;
  source: string;
  /** `boolean` or `score` seen; other values kept. */
  type: string;
  /** Raw text value (`true`, or a decimal number as text). */
  value: string;
  label: string;
  description: string;
  link: string | null;
  /** Unix seconds. */
  updatedAt: number | null;
  /** Unix seconds; null = never expires. */
  expiredAt: number | null;
}

export type CredentialSet = Record<CredentialCategory, Credential[]>;

export interface DomainInfo {
  identity: string;
  platform: Platform;
  resolvedAddress: string | null;
  ownerAddress: string | null;
  managerAddress: string | null;
  resolverAddress: string | null;
  isPrimary: boolean;
  status: string | null;
  /** Unix seconds, each null when absent or unparseable. */
  createdAt: number | null;
  firstTxAt: number | null;
  updatedAt: number | null;
  expiredAt: number | null;
  contenthash: string | null;
  texts: Record<string, string>;
  /** Chain name -> address. */
  addresses: Record<string, string>;
  /** Related domain names, when the server lists any. */
  domains: string[];
}

export interface WalletEntry {
  identity: string;
  address: string | null;
  platform: Platform;
  isPrimary: boolean;
  displayName: string | null;
  avatar: string | null;
  description: string | null;
  /** Unix seconds. */
  updatedAt: number | null;
}

export interface WalletGraphEntry extends WalletEntry {
  sources: string[];
}

export interface WalletBundle extends WalletEntry {
  domains: WalletEntry[];
  credential: CredentialSet;
  identityGraph: WalletGraphEntry[];
}

export interface AvatarResult {
  identity: string;
  /** Image URL, or null when the server has no avatar (SVG placeholder or no body). */
  url: string | null;
}

/** One requested batch id and what came back for it. */
export interface BatchEntry<T> {
  /** The id as the caller passed it. */
  input: string;
  /** Normalised `<platform>,<identity>` used on the wire and to match `aliases`. */
  id: string;
  /** null: the server dropped the id (invalid or not resolvable). */
  result: T | null;
}

/** A client answer with its freshness. */
export interface Fetched<T> {
  data: T;
  /** True when the upstream failed and the last good answer was served instead. */
  stale: boolean;
  /** When the data was fetched from upstream (ms since epoch). */
  fetchedAt: number;
  /** True when served from cache without an upstream request. */
  cached: boolean;
}
