/**
 * Fixture responses mapped by hand into domain objects (independent of the client's schema mapping),
 * and builders for edge-case data.
 */
import { readFileSync } from 'node:fs';
import type { RenderContext } from '../../src/render/types.ts';
import type {
  Credential,
  CredentialSet,
  DomainInfo,
  Profile,
  WalletBundle,
  WalletEntry,
  WalletGraphEntry,
} from '../../src/web3bio/types.ts';

type Json = Record<string, unknown>;

/** 2026-05-28T20:26:40Z: after every fixture's updatedAt, before sujiyan.eth expires. */
export const NOW_SEC = 1_780_000_000;

export function ctx(overrides: Partial<RenderContext> = {}): RenderContext {
  return { locale: 'en-US', nowSec: NOW_SEC, ipfsGateway: 'https://ipfs.io', ...overrides };
}

export function fixtureText(name: string): string {
  return readFileSync(new URL(`../fixtures/web3bio/${name}`, import.meta.url), 'utf8');
}

export function fixture(name: string): unknown {
  return JSON.parse(fixtureText(name));
}

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' ? v : null);
const isoSec = (v: unknown): number | null =>
  typeof v === 'string' ? Math.floor(Date.parse(v) / 1000) : null;

export function toProfile(raw: Json): Profile {
  const links = Object.entries((raw.links ?? {}) as Record<string, Json>).map(([key, l]) => ({
    key,
    link: str(l.link) || null,
    handle: str(l.handle),
    sources: Array.isArray(l.sources) ? (l.sources as string[]) : [],
  }));
  const social = (raw.social ?? {}) as Json;
  return {
    address: str(raw.address),
    identity: String(raw.identity),
    platform: String(raw.platform),
    displayName: str(raw.displayName),
    avatar: str(raw.avatar),
    description: str(raw.description),
    header: str(raw.header),
    status: str(raw.status),
    aliases: [],
    email: str(raw.email),
    location: str(raw.location),
    contenthash: str(raw.contenthash),
    links,
    social:
      Object.keys(social).length === 0
        ? null
        : {
            uid: (social.uid as string | number | null) ?? null,
            follower: num(social.follower),
            following: num(social.following),
          },
    createdAt: isoSec(raw.createdAt),
  };
}

export function toCredential(raw: Json): Credential {
  return {
    id: str(raw.id),
    platform: String(raw.platform),
    category: raw.category as Credential['category'],
    source: String(raw.credentialSource),
    type: String(raw.type),
    value: String(raw.value),
    label: String(raw.label),
    description: String(raw.description),
    link: str(raw.link),
    updatedAt: num(raw.updatedAt),
    expiredAt: num(raw.expiredAt),
  };
}

export function toCredentialSet(raw: Json): CredentialSet {
  const list = (key: string) => ((raw[key] ?? []) as Json[]).map(toCredential);
  return { isHuman: list('isHuman'), isRisky: list('isRisky'), isSpam: list('isSpam') };
}

export function toDomain(raw: Json): DomainInfo {
  return {
    identity: String(raw.identity),
    platform: String(raw.platform),
    resolvedAddress: str(raw.resolvedAddress),
    ownerAddress: str(raw.ownerAddress),
    managerAddress: str(raw.managerAddress),
    resolverAddress: str(raw.resolverAddress),
    isPrimary: raw.isPrimary === true,
    status: str(raw.status),
    createdAt: isoSec(raw.createdAt),
    firstTxAt: isoSec(raw.firstTxAt),
    updatedAt: isoSec(raw.updatedAt),
    expiredAt: isoSec(raw.expiredAt),
    contenthash: str(raw.contenthash),
    texts: (raw.texts ?? {}) as Record<string, string>,
    addresses: (raw.addresses ?? {}) as Record<string, string>,
    domains: (raw.domains ?? []) as string[],
  };
}

function toWalletEntry(raw: Json): WalletEntry {
  return {
    identity: String(raw.identity),
    address: str(raw.address),
    platform: String(raw.platform),
    isPrimary: raw.isPrimary === true,
    displayName: str(raw.displayName),
    avatar: str(raw.avatar),
    description: str(raw.description),
    updatedAt: num(raw.updatedAt),
  };
}

export function toWallet(raw: Json): WalletBundle {
  return {
    ...toWalletEntry(raw),
    domains: ((raw.domains ?? []) as Json[]).map(toWalletEntry),
    credential: toCredentialSet((raw.credential ?? {}) as Json),
    identityGraph: ((raw.identityGraph ?? []) as Json[]).map(
      (entry): WalletGraphEntry => ({ ...toWalletEntry(entry), sources: (entry.sources ?? []) as string[] }),
    ),
  };
}

export function vitalikProfiles(): Profile[] {
  return (fixture('profile-universal-vitalik.json') as Json[]).map(toProfile);
}

/** A profile with every optional field missing. */
export function emptyProfile(overrides: Partial<Profile> = {}): Profile {
  return {
    address: null,
    identity: 'nobody.eth',
    platform: 'ens',
    displayName: null,
    avatar: null,
    description: null,
    header: null,
    status: null,
    aliases: [],
    email: null,
    location: null,
    contenthash: null,
    links: [],
    social: null,
    createdAt: null,
    ...overrides,
  };
}

/** A domain with every optional field missing. */
export function emptyDomain(overrides: Partial<DomainInfo> = {}): DomainInfo {
  return {
    identity: 'nobody.eth',
    platform: 'ens',
    resolvedAddress: null,
    ownerAddress: null,
    managerAddress: null,
    resolverAddress: null,
    isPrimary: false,
    status: null,
    createdAt: null,
    firstTxAt: null,
    updatedAt: null,
    expiredAt: null,
    contenthash: null,
    texts: {},
    addresses: {},
    domains: [],
    ...overrides,
  };
}

export function credential(overrides: Partial<Credential> = {}): Credential {
  return {
    id: 'ens,someone.eth',
    platform: 'test',
    category: 'isHuman',
    source: 'test-source',
    type: 'boolean',
    value: 'true',
    label: 'Test credential',
    description: 'A test credential',
    link: null,
    updatedAt: NOW_SEC - 86_400,
    expiredAt: null,
    ...overrides,
  };
}

export function emptyCredentialSet(): CredentialSet {
  return { isHuman: [], isRisky: [], isSpam: [] };
}

/** A string full of everything hostile: markdown, mentions, masked links, control and bidi characters. */
export const HOSTILE =
  '**@everyone** <@123456789012345678> <@&42> <#99> </ban:1> [click](javascript:alert(1)) ' +
  '[x](https://evil.example) \u202Egnp.exe\u202C \u0000\u0007 `code` ~~s~~ ||spoiler|| # H\n> quote\n- item \ud800';
