/**
 * Wire shapes of every Web3.bio answer (`RawX`, zod) and their mapping to domain objects (`toX`).
 * The schemas tolerate the drift the spec and the live server show (extra fields, missing optional
 * ones, `""` links, empty `social`, string or number ids) and fail, naming the path, on real breakage.
 */
import { type ZodType, z } from 'zod';
import { SchemaError } from './errors.ts';
import type {
  Credential,
  CredentialCategory,
  CredentialSet,
  DomainInfo,
  NsProfile,
  Profile,
  ProfileLink,
  Social,
  WalletBundle,
  WalletEntry,
  WalletGraphEntry,
} from './types.ts';

const text = z.string().nullish();
const count = z.number().nullish();
/** Unix seconds, milliseconds or an ISO date: all seen for timestamps across routes and releases. */
const timestamp = z.union([z.number(), z.string()]).nullish();
const stringList = z.array(z.string()).nullish();

export const RawLink = z.object({
  link: text,
  handle: text,
  sources: stringList,
});
export type RawLink = z.infer<typeof RawLink>;

export const RawSocial = z.object({
  uid: z.union([z.string(), z.number()]).nullish(),
  follower: count,
  following: count,
});
export type RawSocial = z.infer<typeof RawSocial>;

export const RawNsProfile = z.object({
  address: text,
  identity: z.string(),
  platform: z.string(),
  displayName: text,
  avatar: text,
  description: text,
  header: text,
  status: text,
  aliases: stringList,
});
export type RawNsProfile = z.infer<typeof RawNsProfile>;

export const RawProfile = RawNsProfile.extend({
  email: text,
  location: text,
  contenthash: text,
  links: z.record(z.string(), RawLink).nullish(),
  social: RawSocial.nullish(),
  createdAt: timestamp,
});
export type RawProfile = z.infer<typeof RawProfile>;

export const RawProfileList = z.array(RawProfile);
export const RawNsProfileList = z.array(RawNsProfile);

export const RawCredential = z.object({
  id: text,
  platform: z.string(),
  category: text,
  credentialSource: text,
  type: z.string(),
  value: z.union([z.string(), z.number(), z.boolean()]),
  label: text,
  description: text,
  link: text,
  updatedAt: timestamp,
  expiredAt: timestamp,
});
export type RawCredential = z.infer<typeof RawCredential>;

export const RawCredentialSet = z.object({
  isHuman: z.array(RawCredential).nullish(),
  isRisky: z.array(RawCredential).nullish(),
  isSpam: z.array(RawCredential).nullish(),
});
export type RawCredentialSet = z.infer<typeof RawCredentialSet>;

export const RawDomain = z.object({
  identity: z.string(),
  platform: z.string(),
  resolvedAddress: text,
  ownerAddress: text,
  managerAddress: text,
  resolverAddress: text,
  isPrimary: z.boolean().nullish(),
  status: text,
  createdAt: timestamp,
  firstTxAt: timestamp,
  updatedAt: timestamp,
  expiredAt: timestamp,
  contenthash: text,
  texts: z.record(z.string(), z.unknown()).nullish(),
  addresses: z.record(z.string(), z.unknown()).nullish(),
  domains: z.array(z.unknown()).nullish(),
});
export type RawDomain = z.infer<typeof RawDomain>;

export const RawWalletEntry = z.object({
  identity: z.string(),
  address: text,
  platform: z.string(),
  isPrimary: z.boolean().nullish(),
  displayName: text,
  avatar: text,
  description: text,
  updatedAt: timestamp,
});
export type RawWalletEntry = z.infer<typeof RawWalletEntry>;

export const RawWalletGraphEntry = RawWalletEntry.extend({ sources: stringList });
export type RawWalletGraphEntry = z.infer<typeof RawWalletGraphEntry>;

export const RawWallet = RawWalletEntry.extend({
  domains: z.array(RawWalletEntry).nullish(),
  credential: RawCredentialSet.nullish(),
  identityGraph: z.array(RawWalletGraphEntry).nullish(),
});
export type RawWallet = z.infer<typeof RawWallet>;

/** The live `/avatar` lookup error: HTTP 200 with this JSON. */
export const RawAvatarError = z.object({
  identity: text,
  platform: text,
  message: text,
  code: z.union([z.string(), z.number()]).nullish(),
});
export type RawAvatarError = z.infer<typeof RawAvatarError>;

/** Parse `data` with `schema`, or throw a SchemaError naming the first broken path. */
export function parseResponse<T>(schema: ZodType<T>, data: unknown, url: string): T {
  const result = schema.safeParse(data);
  if (result.success) return result.data;
  const issues = result.error.issues.slice(0, 5).map((issue) => {
    const at = formatPath(issue.path);
    return at ? `${at}: ${issue.message}` : issue.message;
  });
  throw new SchemaError(url, formatPath(result.error.issues[0]?.path ?? []), issues);
}

/** `[0].links.twitter.handle`-style path; keys that are not plain words are quoted. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else if (typeof key === 'string' && /^[A-Za-z_$][\w$]*$/.test(key)) out += out ? `.${key}` : key;
    else out += `[${JSON.stringify(String(key))}]`;
  }
  return out;
}

/**
 * The human-readable reason of an error body, or null. Bodies come as the spec's `{address, identity,
 * platform, error}`, the live `{identity, path, platform, error}` and the auth layer's `{error, message}`.
 */
export function errorReason(body: unknown): string | null {
  if (!body || typeof body !== 'object') return null;
  const { error, message } = body as { error?: unknown; message?: unknown };
  // The auth layer answers {"error":"Forbidden","message":"API key required"}: the message says more.
  if (typeof error === 'string' && error !== 'Forbidden' && error !== 'Unauthorized') return error;
  if (typeof message === 'string') return message;
  return typeof error === 'string' ? error : null;
}

/** `/ns` object to NsProfile. */
export function toNsProfile(raw: RawNsProfile): NsProfile {
  return {
    address: orNull(raw.address),
    identity: raw.identity,
    platform: raw.platform,
    displayName: orNull(raw.displayName),
    avatar: orNull(raw.avatar),
    description: orNull(raw.description),
    header: orNull(raw.header),
    status: orNull(raw.status),
    aliases: raw.aliases ?? [],
  };
}

/** `/profile` object to Profile. */
export function toProfile(raw: RawProfile): Profile {
  return {
    ...toNsProfile(raw),
    email: orNull(raw.email),
    location: orNull(raw.location),
    contenthash: orNull(raw.contenthash),
    links: Object.entries(raw.links ?? {}).map(([key, link]) => toLink(key, link)),
    social: toSocial(raw.social),
    createdAt: toUnixSeconds(raw.createdAt),
  };
}

function toLink(key: string, raw: RawLink): ProfileLink {
  return { key, link: orNull(raw.link), handle: orNull(raw.handle), sources: raw.sources ?? [] };
}

function toSocial(raw: RawSocial | null | undefined): Social | null {
  if (!raw) return null;
  const uid = raw.uid ?? null;
  const follower = raw.follower ?? null;
  const following = raw.following ?? null;
  if (uid === null && follower === null && following === null) return null;
  return { uid, follower, following };
}

/** Credential set; each entry takes the category of the array that holds it. */
export function toCredentialSet(raw: RawCredentialSet): CredentialSet {
  return {
    isHuman: (raw.isHuman ?? []).map((c) => toCredential(c, 'isHuman')),
    isRisky: (raw.isRisky ?? []).map((c) => toCredential(c, 'isRisky')),
    isSpam: (raw.isSpam ?? []).map((c) => toCredential(c, 'isSpam')),
  };
}

function toCredential(raw: RawCredential, category: CredentialCategory): Credential {
  return {
    id: orNull(raw.id),
    platform: raw.platform,
    category,
    source: raw.credentialSource || raw.platform,
    type: raw.type,
    value: String(raw.value),
    label: raw.label ?? '',
    description: raw.description ?? '',
    link: orNull(raw.link),
    updatedAt: toUnixSeconds(raw.updatedAt),
    expiredAt: toUnixSeconds(raw.expiredAt),
  };
}

/** Domain object to DomainInfo (ISO dates become Unix seconds). */
export function toDomainInfo(raw: RawDomain): DomainInfo {
  return {
    identity: raw.identity,
    platform: raw.platform,
    resolvedAddress: orNull(raw.resolvedAddress),
    ownerAddress: orNull(raw.ownerAddress),
    managerAddress: orNull(raw.managerAddress),
    resolverAddress: orNull(raw.resolverAddress),
    isPrimary: raw.isPrimary ?? false,
    status: orNull(raw.status),
    createdAt: toUnixSeconds(raw.createdAt),
    firstTxAt: toUnixSeconds(raw.firstTxAt),
    updatedAt: toUnixSeconds(raw.updatedAt),
    expiredAt: toUnixSeconds(raw.expiredAt),
    contenthash: orNull(raw.contenthash),
    texts: stringValues(raw.texts),
    addresses: stringValues(raw.addresses),
    domains: (raw.domains ?? []).flatMap(domainName),
  };
}

function domainName(item: unknown): string[] {
  if (typeof item === 'string') return item ? [item] : [];
  if (item && typeof item === 'object') {
    const { identity, name } = item as { identity?: unknown; name?: unknown };
    if (typeof identity === 'string' && identity) return [identity];
    if (typeof name === 'string' && name) return [name];
  }
  return [];
}

function stringValues(record: Record<string, unknown> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(record ?? {})) {
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number') out[key] = String(value);
  }
  return out;
}

/** Wallet bundle to WalletBundle. */
export function toWalletBundle(raw: RawWallet): WalletBundle {
  return {
    ...toWalletEntry(raw),
    domains: (raw.domains ?? []).map(toWalletEntry),
    credential: toCredentialSet(raw.credential ?? {}),
    identityGraph: (raw.identityGraph ?? []).map(toWalletGraphEntry),
  };
}

function toWalletEntry(raw: RawWalletEntry): WalletEntry {
  return {
    identity: raw.identity,
    address: orNull(raw.address),
    platform: raw.platform,
    isPrimary: raw.isPrimary ?? false,
    displayName: orNull(raw.displayName),
    avatar: orNull(raw.avatar),
    description: orNull(raw.description),
    updatedAt: toUnixSeconds(raw.updatedAt),
  };
}

function toWalletGraphEntry(raw: RawWalletGraphEntry): WalletGraphEntry {
  return { ...toWalletEntry(raw), sources: raw.sources ?? [] };
}

/** Blank text counts as absent. */
function orNull(value: string | null | undefined): string | null {
  return value ? value : null;
}

/** Unix seconds from seconds, milliseconds or a date string; null when absent or unparseable. */
export function toUnixSeconds(value: number | string | null | undefined): number | null {
  if (value === null || value === undefined || value === '') return null;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return null;
    return Math.floor(Math.abs(value) >= 1e12 ? value / 1_000 : value);
  }
  if (/^-?\d+(\.\d+)?$/.test(value.trim())) return toUnixSeconds(Number(value));
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : Math.floor(ms / 1_000);
}
