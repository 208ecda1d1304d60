/**
 * Builders of wire-format objects for the stand-in Web3.bio: profiles and credentials as the server
 * sends them, with the fields a test does not care about filled in blandly.
 */
import type { RawCredentials, RawObject } from './world.ts';

/** The current profile shape: display name = identity, everything else blank unless `extra` sets it. */
export function rawProfile(
  platform: string,
  identity: string,
  address: string | null,
  extra: RawObject = {},
): RawObject {
  return {
    address,
    identity,
    platform,
    displayName: identity,
    avatar: null,
    description: null,
    status: null,
    email: null,
    location: null,
    header: null,
    contenthash: null,
    links: {},
    social: {},
    ...extra,
  };
}

/** An ENS profile, with a `discord` link when `discordHandle` is given. */
export function ensProfile(identity: string, address: string, discordHandle?: string): RawObject {
  const links = discordHandle ? { discord: { link: '', handle: discordHandle, sources: ['ens'] } } : {};
  return rawProfile('ens', identity, address, { links });
}

export interface CredentialFields {
  id: string;
  category: 'isHuman' | 'isRisky' | 'isSpam';
  platform: string;
  source: string;
  type: string;
  value: string;
  label: string;
  updatedAt: number;
  expiredAt?: number | null;
  link?: string | null;
  description?: string;
}

/** One credential entry as `/credential` sends it; the description defaults to a made-up one. */
export function rawCredential(fields: CredentialFields): RawObject {
  return {
    id: fields.id,
    platform: fields.platform,
    category: fields.category,
    credentialSource: fields.source,
    type: fields.type,
    value: fields.value,
    label: fields.label,
    description: fields.description ?? `${fields.label} (fake)`,
    link: fields.link ?? null,
    updatedAt: fields.updatedAt,
    expiredAt: fields.expiredAt ?? null,
  };
}

/** When the gating credentials below were issued (seconds). */
const ISSUED_AT = 1_762_956_888;

/** Dentity's boolean isHuman credential for an ENS name. */
export function dentityHumanCredential(identity: string): RawObject {
  return rawCredential({
    id: `ens,${identity}`,
    category: 'isHuman',
    platform: 'dentity',
    source: 'dentity',
    type: 'boolean',
    value: 'true',
    label: 'Dentity Humanity Verified',
    description: 'Personhood Verified by Dentity',
    updatedAt: ISSUED_AT,
  });
}

/** The Farcaster spam label (a score of 0 under isSpam). */
export function farcasterSpamCredential(identity: string): RawObject {
  return rawCredential({
    id: `farcaster,${identity}`,
    category: 'isSpam',
    platform: 'farcaster',
    source: 'warpcast',
    type: 'score',
    value: '0',
    label: 'Farcaster spam label',
    description: 'Spam label',
    updatedAt: ISSUED_AT,
  });
}

/** A `/credential` answer: the Dentity isHuman credential unless `human` is false, the spam label if `spam`. */
export function gatingCredentials(
  identity: string,
  opts: { human?: boolean; spam?: boolean } = {},
): RawCredentials {
  return {
    isHuman: opts.human === false ? [] : [dentityHumanCredential(identity)],
    isRisky: [],
    isSpam: opts.spam ? [farcasterSpamCredential(identity)] : [],
  };
}

/**
 * A wallet's own credentials as the live server lists them (the public 0xhelena.eth sample's Galxe and
 * Human Passport entries), each `id` naming the wallet; with `spam`, a spam flag on it too.
 */
export function walletCredentials(
  address: string,
  opts: { human?: boolean; spam?: boolean } = {},
): RawCredentials {
  const id = `ethereum,${address.toLowerCase()}`;
  const human =
    opts.human === false
      ? []
      : [
          rawCredential({
            id,
            category: 'isHuman',
            platform: 'galxe',
            source: 'galxe-passport',
            type: 'boolean',
            value: 'true',
            label: 'Galxe KYC Verified',
            description: 'Proof of KYC by Galxe',
            link: 'https://app.galxe.com/passport',
            updatedAt: 1_734_404_558,
          }),
          rawCredential({
            id,
            category: 'isHuman',
            platform: 'humanpassport',
            source: 'human-passport',
            type: 'score',
            value: '47.8',
            label: 'Passport Humanity Verified',
            description: 'Proof of Personhood by Human Passport',
            link: 'https://app.passport.xyz',
            updatedAt: 1_762_546_524,
          }),
        ];
  const spam = opts.spam
    ? [
        rawCredential({
          id,
          category: 'isSpam',
          platform: 'ethereum',
          source: 'spam-list',
          type: 'boolean',
          value: 'true',
          label: 'Known spam wallet',
          updatedAt: ISSUED_AT,
        }),
      ]
    : [];
  return { isHuman: human, isRisky: [], isSpam: spam };
}

let addressSeed = 0x1000;
/** A fresh EVM address, unique within the process. */
export function nextAddress(): string {
  addressSeed += 1;
  return `0x${addressSeed.toString(16).padStart(40, '0')}`;
}
