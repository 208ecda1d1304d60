/**
 * The kinds of identity the parser tells apart, and what each means for the API: its platform label, the
 * platform routes that take it, the route that holds its profile, and its name in an error message.
 */
import type { Platform, PlatformSegment } from './types.ts';

export type IdentityKind =
  | 'evm-address'
  | 'solana-address'
  | 'ens'
  | 'basenames'
  | 'linea'
  | 'farcaster'
  | 'farcaster-fid'
  | 'lens'
  | 'sns'
  | 'unstoppabledomains'
  | 'dotbit';

/** Kinds each platform route accepts. */
export const ROUTE_KINDS: Record<PlatformSegment, readonly IdentityKind[]> = {
  ens: ['evm-address', 'ens', 'basenames', 'linea'],
  farcaster: ['evm-address', 'solana-address', 'farcaster', 'farcaster-fid', 'ens', 'basenames', 'linea'],
  lens: ['evm-address', 'lens'],
  basenames: ['evm-address', 'basenames'],
  linea: ['evm-address', 'linea'],
  solana: ['solana-address', 'sns'],
  unstoppabledomains: ['evm-address', 'unstoppabledomains'],
  dotbit: ['evm-address', 'dotbit'],
};

/** On a platform route a bare name gets that platform's suffix (`stani` on lens is `stani.lens`). */
export const BARE_NAME_SUFFIX: Partial<Record<PlatformSegment, string>> = {
  ens: '.eth',
  lens: '.lens',
  basenames: '.base.eth',
  linea: '.linea.eth',
  solana: '.sol',
  dotbit: '.bit',
};

/** What each platform route takes, in words for an error message. */
export const ROUTE_EXAMPLES: Record<PlatformSegment, string> = {
  ens: 'an ENS name or an EVM address',
  farcaster: 'a Farcaster username, FID or address',
  lens: 'a Lens handle or an EVM address',
  basenames: 'a Basename (name.base.eth) or an EVM address',
  linea: 'a Linea name (name.linea.eth) or an EVM address',
  solana: 'a Solana name (name.sol) or a Solana address',
  unstoppabledomains: 'an Unstoppable Domains name or an EVM address',
  dotbit: 'a .bit name or an EVM address',
};

/** The platform label the server uses, by kind. */
export const KIND_PLATFORM: Record<IdentityKind, Platform> = {
  'evm-address': 'ethereum',
  'solana-address': 'solana',
  ens: 'ens',
  basenames: 'basenames',
  linea: 'linea',
  farcaster: 'farcaster',
  'farcaster-fid': 'farcaster',
  lens: 'lens',
  sns: 'sns',
  unstoppabledomains: 'unstoppabledomains',
  dotbit: 'dotbit',
};

/** The platform route (`/profile/{segment}/…`) that holds an identity's own profile, by kind. */
export const KIND_PROFILE_SEGMENT: Readonly<Partial<Record<IdentityKind, PlatformSegment>>> = {
  ens: 'ens',
  basenames: 'basenames',
  linea: 'linea',
  farcaster: 'farcaster',
  'farcaster-fid': 'farcaster',
  lens: 'lens',
  sns: 'solana',
  'solana-address': 'solana',
  unstoppabledomains: 'unstoppabledomains',
  dotbit: 'dotbit',
};

/** Kinds the `/domain/{name}` endpoint accepts: ENS, Basenames, Linea and Solana names. */
export const DOMAIN_KINDS: ReadonlySet<IdentityKind> = new Set(['ens', 'basenames', 'linea', 'sns']);

/** Kinds whose names carry ENS-style text records (`/domain` reads them; SNS names have none). */
export const TEXT_RECORD_KINDS: ReadonlySet<IdentityKind> = new Set(['ens', 'basenames', 'linea']);

/** A kind in words for an error message (`an ENS name`). */
export function describeKind(kind: IdentityKind): string {
  switch (kind) {
    case 'evm-address':
      return 'an EVM address';
    case 'solana-address':
      return 'a Solana address';
    case 'ens':
      return 'an ENS name';
    case 'basenames':
      return 'a Basename';
    case 'linea':
      return 'a Linea name';
    case 'farcaster':
      return 'a Farcaster username';
    case 'farcaster-fid':
      return 'a Farcaster FID';
    case 'lens':
      return 'a Lens handle';
    case 'sns':
      return 'a Solana name';
    case 'unstoppabledomains':
      return 'an Unstoppable Domains name';
    case 'dotbit':
      return 'a .bit name';
  }
}
