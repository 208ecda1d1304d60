import { rawProfile } from './builders.ts';
import {
  farcasterBaseName,
  farcasterFid,
  isAddress,
  isEvmAddress,
  isPlausibleIdentity,
  isSolanaAddress,
  lensBaseName,
  normalizeField,
  normalizeIdentity,
  platformForName,
  shortAddress,
  universalRank,
} from './identity.ts';

/** A wire-format object (profile, domain, wallet bundle) exactly as the server sends it. */
export type RawObject = Record<string, unknown>;

export interface RawCredentials {
  isHuman: unknown[];
  isRisky: unknown[];
  isSpam: unknown[];
}

/** `/profile` answers the whole object, `/ns` the name-service fields only. */
export type ProfileView = 'profile' | 'ns';

export interface LookupError {
  ok: false;
  status: 400 | 404;
  /** Reason text for the error body, e.g. "Not Found". */
  error: string;
  identity: string;
  platform: string;
}

export type Lookup<T> = { ok: true; value: T } | LookupError;

/** What `/avatar` resolved to; `url: null` means the identity is known but has no avatar. */
export interface AvatarAnswer {
  identity: string;
  url: string | null;
}

export interface FakeWorldOptions {
  /** Clock for synthesised dates (ms since epoch). */
  now?: () => number;
}

/** Fields of an `/ns` object, in wire order. */
export const NS_FIELDS = [
  'address',
  'identity',
  'platform',
  'displayName',
  'avatar',
  'description',
  'header',
  'status',
] as const;

/** Segments accepted by `/profile/{platform}/{id}` and `/ns/{platform}/{id}`. */
export const PLATFORM_ROUTES = [
  'ens',
  'ethereum',
  'farcaster',
  'lens',
  'basenames',
  'linea',
  'solana',
  'sns',
  'unstoppabledomains',
  'dotbit',
] as const;

export const MAX_BATCH_IDS = 30;
export const INVALID_IDENTITY = 'Invalid Identity or Domain';
export const NOT_FOUND = 'Not Found';

const BATCH_PLATFORMS = new Set(['ethereum', 'ens', 'basenames', 'linea', 'farcaster', 'lens']);
const DOMAIN_PLATFORMS = new Set(['ens', 'basenames', 'linea', 'sns']);
const NAME_PLATFORMS = new Set([...DOMAIN_PLATFORMS, 'unstoppabledomains', 'dotbit']);
const ADDRESS_PLATFORMS = new Set(['ethereum', 'solana']);
const ENS_PUBLIC_RESOLVER = '0x231b0ee14048e9dccd1d247744d114a4eb5e8e63';
const DAY_MS = 86_400_000;

function isPlatformRoute(value: string): value is (typeof PLATFORM_ROUTES)[number] {
  return (PLATFORM_ROUTES as readonly string[]).includes(value);
}

function fail(status: 400 | 404, error: string, identity: string, platform: string): LookupError {
  return { ok: false, status, error, identity, platform };
}

function ok<T>(value: T): Lookup<T> {
  return { ok: true, value };
}

function text(raw: RawObject, key: string): string | null {
  const value = raw[key];
  return typeof value === 'string' ? value : null;
}

function platformOf(profile: RawObject): string {
  return text(profile, 'platform')?.toLowerCase() ?? '';
}

function identityOf(profile: RawObject): string | null {
  return normalizeField(profile.identity);
}

function addressOf(profile: RawObject): string | null {
  return normalizeField(profile.address);
}

function uidOf(profile: RawObject): string | null {
  const social = profile.social;
  if (typeof social !== 'object' || social === null || !('uid' in social)) return null;
  const uid = social.uid;
  return typeof uid === 'string' || typeof uid === 'number' ? String(uid) : null;
}

function isObject(value: unknown): value is RawObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a stored profile of `platform` answers to the normalised `query` on that platform's route. */
function matchesOnPlatform(profile: RawObject, platform: string, query: string): boolean {
  if (addressOf(profile) === query) return true;
  const identity = identityOf(profile);
  if (identity === null) return false;
  if (identity === query) return true;
  if (platform === 'farcaster') {
    const fid = farcasterFid(query);
    return fid === null ? farcasterBaseName(identity) === farcasterBaseName(query) : uidOf(profile) === fid;
  }
  if (platform === 'lens') return lensBaseName(identity) === lensBaseName(query);
  return false;
}

/** The object the server makes up for an address that has no name on the platform. */
function minimalProfile(platform: 'ethereum' | 'solana', address: string): RawObject {
  return rawProfile(platform, address, address, { displayName: shortAddress(address) });
}

function minimalFor(query: string): RawObject | null {
  if (isEvmAddress(query)) return minimalProfile('ethereum', query);
  if (isSolanaAddress(query)) return minimalProfile('solana', query);
  return null;
}

/** Project a profile for the requested view; `/ns` keeps only the name-service fields it has. */
export function projectProfile(profile: RawObject, view: ProfileView): RawObject {
  if (view === 'profile') return profile;
  const ns: RawObject = {};
  for (const key of NS_FIELDS) if (key in profile) ns[key] = profile[key];
  return ns;
}

/** Parse a batch `{ids}` segment: a JSON array of at most 30 strings, else the reason it is refused. */
export function parseBatchIds(raw: string): string[] | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return INVALID_IDENTITY;
  }
  if (!Array.isArray(parsed) || !parsed.every((id) => typeof id === 'string')) return INVALID_IDENTITY;
  if (parsed.length > MAX_BATCH_IDS) return `Too Many Identities (max ${MAX_BATCH_IDS})`;
  return parsed;
}

function ownAliases(profile: RawObject): string[] {
  const platform = platformOf(profile);
  const aliases = [`${platform},${identityOf(profile)}`];
  const address = addressOf(profile);
  if (address !== null) aliases.push(`${platform},${address}`);
  const uid = uidOf(profile);
  if (platform === 'farcaster' && uid !== null) aliases.push(`farcaster,#${uid}`);
  return aliases;
}

function withoutIds(credentials: RawCredentials): RawCredentials {
  const strip = (entries: unknown[]) =>
    entries.map((entry) => {
      if (!isObject(entry)) return entry;
      const { id: _id, ...rest } = entry;
      return rest;
    });
  return {
    isHuman: strip(credentials.isHuman),
    isRisky: strip(credentials.isRisky),
    isSpam: strip(credentials.isSpam),
  };
}

/**
 * The stand-in server's data: identities in wire format, and the rules that answer every route from them.
 * Answers are the stored objects themselves: treat them as read-only.
 */
export class FakeWorld {
  readonly #now: () => number;
  #profiles: RawObject[] = [];
  readonly #credentials = new Map<string, RawCredentials>();
  readonly #domains = new Map<string, RawObject>();
  readonly #owners = new Map<string, { owner: string | null; manager: string | null }>();
  readonly #wallets = new Map<string, RawObject>();
  readonly #avatars = new Map<string, string | null>();

  constructor(options: FakeWorldOptions = {}) {
    this.#now = options.now ?? Date.now;
  }

  /** Add (or replace, by platform and identity) a wire-format profile object. */
  addProfile(raw: Record<string, unknown>): void {
    const platform = platformOf(raw);
    const identity = identityOf(raw);
    if (platform === '' || identity === null)
      throw new TypeError('a profile needs a platform and an identity');
    const copy = structuredClone(raw);
    const index = this.#profiles.findIndex((p) => platformOf(p) === platform && identityOf(p) === identity);
    if (index === -1) this.#profiles.push(copy);
    else this.#profiles[index] = copy;
  }

  /** Remove the profile with this platform and identity, if any. */
  removeProfile(platform: string, identity: string): void {
    const key = normalizeIdentity(identity);
    const wanted = platform.toLowerCase();
    this.#profiles = this.#profiles.filter((p) => !(platformOf(p) === wanted && identityOf(p) === key));
  }

  /** Set the credential answer for an identity (name or address); null removes it. */
  setCredentials(identity: string, raw: RawCredentials | null): void {
    setOrDelete(this.#credentials, normalizeIdentity(identity), raw);
  }

  /** Set the `/domain` answer for a name; null removes it (a profile-derived answer may remain). */
  setDomain(name: string, raw: Record<string, unknown> | null): void {
    setOrDelete(this.#domains, normalizeIdentity(name), raw);
  }

  /**
   * Who owns and manages a name, as its `/domain` answer says (by default both are the address it
   * resolves to, as for a name held in the wallet it points at); null forgets the override.
   */
  setDomainOwners(name: string, owners: { owner: string | null; manager: string | null } | null): void {
    setOrDelete(this.#owners, normalizeIdentity(name), owners);
  }

  /** Set the `/wallet` bundle for an identity; it also answers to its address and its `domains`. */
  setWallet(identity: string, raw: Record<string, unknown> | null): void {
    setOrDelete(this.#wallets, normalizeIdentity(identity), raw);
  }

  /** Override the `/avatar` answer: a URL, or null for "no avatar" (the SVG placeholder in live mode). */
  setAvatar(identity: string, url: string | null): void {
    this.#avatars.set(normalizeIdentity(identity), url);
  }

  /** Forget everything. */
  clear(): void {
    this.#profiles = [];
    this.#credentials.clear();
    this.#domains.clear();
    this.#owners.clear();
    this.#wallets.clear();
    this.#avatars.clear();
  }

  /** Copies of every stored profile, in insertion order. */
  profiles(): RawObject[] {
    return structuredClone(this.#profiles);
  }

  /** `/profile/{id}`, `/ns/{id}`: every profile of the identity, ordered as the live server does. */
  lookupUniversal(rawId: string, view: ProfileView): Lookup<RawObject[]> {
    const query = normalizeIdentity(rawId);
    if (query === '') return fail(400, INVALID_IDENTITY, rawId, 'universal');
    const found = this.#universal(query);
    const minimal = found.length === 0 ? minimalFor(query) : null;
    if (minimal !== null) found.push(minimal);
    if (found.length === 0) return this.#missing(query, platformForName(query) ?? 'universal');
    return ok(found.map((profile) => projectProfile(profile, view)));
  }

  /** `/profile/{platform}/{id}`, `/ns/{platform}/{id}`: one object. */
  lookupPlatform(segment: string, rawId: string, view: ProfileView): Lookup<RawObject> {
    const route = segment.toLowerCase();
    const platform = route === 'solana' ? 'sns' : route;
    const query = normalizeIdentity(rawId);
    if (query === '') return fail(400, INVALID_IDENTITY, rawId, platform);
    if (!isPlatformRoute(route)) return fail(404, 'Invalid Platform', query, platform);
    const found = this.#findOnPlatform(route, query);
    if (found === null) return this.#missing(query, platform);
    return ok(projectProfile(found, view));
  }

  /** `/profile/batch/{ids}`, `/ns/batch/{ids}`: resolved ids with `aliases`, unresolvable ones dropped. */
  lookupBatch(rawIds: string, view: ProfileView): Lookup<RawObject[]> {
    const ids = parseBatchIds(rawIds);
    if (typeof ids === 'string') return fail(400, ids, rawIds.slice(0, 200), 'batch');
    const results = new Map<string, { profile: RawObject; aliases: Set<string> }>();
    for (const id of ids) {
      const comma = id.indexOf(',');
      const platform = id.slice(0, Math.max(comma, 0)).trim().toLowerCase();
      const identity = normalizeIdentity(id.slice(comma + 1));
      if (!BATCH_PLATFORMS.has(platform) || identity === '') continue;
      const profile =
        platform === 'ethereum'
          ? (this.#universal(identity)[0] ?? minimalFor(identity))
          : this.#findOnPlatform(platform, identity);
      if (profile === null) continue;
      const key = `${platformOf(profile)},${identityOf(profile)}`;
      const entry = results.get(key) ?? { profile, aliases: new Set<string>() };
      entry.aliases.add(`${platform},${identity}`);
      results.set(key, entry);
    }
    // Reversed so that results never come back in request order: clients must match by `aliases`.
    return ok(
      [...results.values()].reverse().map(({ profile, aliases }) => ({
        ...projectProfile(profile, view),
        aliases: [...new Set([...aliases, ...ownAliases(profile)])],
      })),
    );
  }

  /** `/credential/{platform,identity}` or `/credential/{identity}`. */
  lookupCredential(rawId: string): Lookup<RawCredentials> {
    const comma = rawId.indexOf(',');
    const platform = comma === -1 ? '' : rawId.slice(0, comma).trim().toLowerCase();
    const query = normalizeIdentity(comma === -1 ? rawId : rawId.slice(comma + 1));
    const errorPlatform = platform || (platformForName(query) ?? 'universal');
    if (query === '') return fail(400, INVALID_IDENTITY, rawId, errorPlatform);
    const direct = this.#credentials.get(query);
    if (direct !== undefined) {
      // A name's answer also carries the entries of the wallet it resolves to (their id names the wallet).
      const wallet = isAddress(query) ? undefined : this.#walletCredentials(query);
      return ok(wallet === undefined ? direct : mergeCredentials(direct, wallet));
    }
    const profiles =
      isPlatformRoute(platform) && platform !== 'ethereum'
        ? [this.#findOnPlatform(platform, query)].filter((p) => p !== null)
        : this.#universal(query);
    const found = this.#credentialsFor(profiles);
    return found === null ? fail(404, NOT_FOUND, query, errorPlatform) : ok(found);
  }

  /** `/domain/{name}`: ENS, Basenames, Linea and SNS names only. */
  lookupDomain(rawName: string): Lookup<RawObject> {
    const name = normalizeIdentity(rawName);
    if (name === '') return fail(400, INVALID_IDENTITY, rawName, 'ens');
    const platform = platformForName(name);
    if (platform === null || !DOMAIN_PLATFORMS.has(platform)) {
      return fail(404, INVALID_IDENTITY, name, platform ?? 'ens');
    }
    const explicit = this.#domains.get(name);
    const profile = this.#profiles.find((p) => platformOf(p) === platform && identityOf(p) === name);
    const domain = explicit ?? (profile === undefined ? undefined : this.#domainFrom(profile, platform));
    if (domain === undefined) return fail(404, NOT_FOUND, name, platform);
    const owners = this.#owners.get(name);
    return ok(
      owners === undefined
        ? domain
        : { ...domain, ownerAddress: owners.owner, managerAddress: owners.manager },
    );
  }

  /** `/wallet/{id}`: a stored bundle, or one built from the identity's profiles and credentials. */
  lookupWallet(rawId: string): Lookup<RawObject> {
    const query = normalizeIdentity(rawId);
    if (query === '') return fail(400, INVALID_IDENTITY, rawId, 'ethereum');
    const stored = this.#findWallet(query);
    if (stored !== undefined) return ok(stored);
    const profiles = this.#universal(query);
    const minimal = profiles.length === 0 ? minimalFor(query) : null;
    if (minimal !== null) profiles.push(minimal);
    if (profiles.length === 0) return this.#missing(query, platformForName(query) ?? 'ethereum');
    return ok(this.#walletFrom(profiles));
  }

  /** `/avatar/{id}`: own platform first, then ENS, Farcaster, Lens (Lens queries: Lens, ENS, Farcaster). */
  lookupAvatar(rawId: string): Lookup<AvatarAnswer> {
    const query = normalizeIdentity(rawId);
    if (query === '') return fail(400, INVALID_IDENTITY, rawId, 'universal');
    const override = this.#avatars.get(query);
    if (override !== undefined) return ok({ identity: query, url: override });
    const profiles = this.#universal(query);
    if (profiles.length === 0) {
      return isAddress(query)
        ? ok({ identity: query, url: null })
        : this.#missing(query, platformForName(query) ?? 'universal');
    }
    const own = platformForName(query) ?? 'ens';
    const preference = own === 'lens' ? ['lens', 'ens', 'farcaster'] : [own, 'ens', 'farcaster', 'lens'];
    const rank = (p: RawObject) => {
      const index = preference.indexOf(platformOf(p));
      return index === -1 ? preference.length + universalRank(platformOf(p)) : index;
    };
    for (const profile of [...profiles].sort((a, b) => rank(a) - rank(b))) {
      const explicit = this.#avatars.get(identityOf(profile) ?? '');
      if (explicit !== undefined) return ok({ identity: query, url: explicit });
      const avatar = text(profile, 'avatar');
      if (avatar) return ok({ identity: query, url: avatar });
    }
    return ok({ identity: query, url: null });
  }

  #missing(query: string, platform: string): LookupError {
    const plausible = isPlausibleIdentity(query, platform);
    return fail(404, plausible ? NOT_FOUND : INVALID_IDENTITY, query, platform);
  }

  /** Profiles named `query` (or at address `query`), then every profile sharing their addresses. */
  #universal(query: string): RawObject[] {
    const farcasterName = /\.(?:farcaster|fcast\.id)$/.test(query);
    const direct = this.#profiles.filter((p) => {
      if (isAddress(query)) return addressOf(p) === query;
      if (farcasterName) return platformOf(p) === 'farcaster' && matchesOnPlatform(p, 'farcaster', query);
      return identityOf(p) === query;
    });
    const addresses = new Set(direct.map(addressOf).filter((a) => a !== null));
    const related = this.#profiles.filter((p) => !direct.includes(p) && addresses.has(addressOf(p) ?? ''));
    const exactFirst = (p: RawObject) => (!isAddress(query) && direct.includes(p) ? 0 : 1);
    return [...direct, ...related].sort(
      (a, b) => exactFirst(a) - exactFirst(b) || universalRank(platformOf(a)) - universalRank(platformOf(b)),
    );
  }

  #findOnPlatform(route: string, query: string): RawObject | null {
    if (route === 'ethereum') {
      const address = isEvmAddress(query)
        ? query
        : this.#universal(query)
            .map(addressOf)
            .find((a) => a !== null && isEvmAddress(a));
      return address === undefined || address === null ? null : this.#addressProfile('ethereum', address);
    }
    const platform = route === 'solana' ? 'sns' : route;
    const match = this.#profiles.find(
      (p) => platformOf(p) === platform && matchesOnPlatform(p, platform, query),
    );
    if (match !== undefined) return match;
    if (platform === 'ens' && isEvmAddress(query)) return this.#addressProfile('ethereum', query);
    if (platform === 'sns' && isSolanaAddress(query)) return this.#addressProfile('solana', query);
    return null;
  }

  #addressProfile(platform: 'ethereum' | 'solana', address: string): RawObject {
    const stored = this.#profiles.find((p) => platformOf(p) === platform && addressOf(p) === address);
    return stored ?? minimalProfile(platform, address);
  }

  #credentialsFor(profiles: RawObject[]): RawCredentials | null {
    for (const profile of profiles) {
      const identity = identityOf(profile);
      // A Farcaster account's answer is filed under its name as users write it too (`alice.farcaster`).
      const farcasterName =
        platformOf(profile) === 'farcaster' && identity !== null
          ? `${farcasterBaseName(identity)}.farcaster`
          : null;
      for (const key of [identity, farcasterName, addressOf(profile)]) {
        const found = key === null ? undefined : this.#credentials.get(key);
        if (found !== undefined) return found;
      }
    }
    return null;
  }

  /** Credentials stored for the address a name's own profiles resolve to, if any. */
  #walletCredentials(name: string): RawCredentials | undefined {
    for (const profile of this.#profiles) {
      const address = identityOf(profile) === name ? addressOf(profile) : null;
      const found = address === null ? undefined : this.#credentials.get(address);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  #findWallet(query: string): RawObject | undefined {
    const direct = this.#wallets.get(query);
    if (direct !== undefined) return direct;
    for (const wallet of this.#wallets.values()) {
      if (normalizeField(wallet.address) === query) return wallet;
      const domains = Array.isArray(wallet.domains) ? wallet.domains : [];
      if (domains.some((d) => isObject(d) && normalizeField(d.identity) === query)) return wallet;
    }
    return undefined;
  }

  #domainFrom(profile: RawObject, platform: string): RawObject {
    const address = text(profile, 'address');
    const now = this.#now();
    const texts: Record<string, string> = {};
    for (const key of ['avatar', 'header', 'description', 'email', 'location']) {
      const value = text(profile, key);
      if (value) texts[key] = value;
    }
    const links = isObject(profile.links) ? profile.links : {};
    for (const [linkKey, textKey] of [
      ['website', 'url'],
      ['github', 'vnd.github'],
      ['twitter', 'vnd.twitter'],
    ] as const) {
      const link = links[linkKey];
      const handle = isObject(link) ? text(link, linkKey === 'website' ? 'link' : 'handle') : null;
      if (handle) texts[textKey] = handle;
    }
    return {
      identity: text(profile, 'identity'),
      platform,
      resolvedAddress: address,
      ownerAddress: address,
      managerAddress: address,
      resolverAddress: platform === 'sns' ? null : ENS_PUBLIC_RESOLVER,
      isPrimary: true,
      status: 'cached',
      createdAt: '2022-05-04T10:20:30.000Z',
      firstTxAt: '2022-05-04T10:20:30.000Z',
      updatedAt: new Date(now - DAY_MS).toISOString(),
      expiredAt: new Date(now + 730 * DAY_MS).toISOString(),
      contenthash: text(profile, 'contenthash'),
      texts,
      addresses: address === null ? {} : { [platform === 'sns' ? 'solana' : 'ethereum']: address },
      domains: [],
    };
  }

  #walletFrom(profiles: RawObject[]): RawObject {
    const address = profiles.map((p) => text(p, 'address')).find((a) => a !== null) ?? null;
    const names = profiles.filter((p) => NAME_PLATFORMS.has(platformOf(p)));
    const graph = profiles.filter((p) => !names.includes(p) && !ADDRESS_PLATFORMS.has(platformOf(p)));
    const primary = names[0] ?? profiles[0] ?? {};
    const updatedAt = Math.floor(this.#now() / 1000);
    const entry = (p: RawObject, isPrimary: boolean) => ({
      identity: text(p, 'identity'),
      address: text(p, 'address'),
      platform: platformOf(p),
      isPrimary,
      displayName: text(p, 'displayName'),
      avatar: text(p, 'avatar'),
      description: text(p, 'description'),
      updatedAt,
      domains: [],
    });
    const credentials = this.#credentialsFor(profiles) ?? { isHuman: [], isRisky: [], isSpam: [] };
    return {
      identity: address ?? text(primary, 'identity'),
      address,
      platform: address !== null && isSolanaAddress(address) ? 'solana' : 'ethereum',
      isPrimary: true,
      displayName: text(primary, 'displayName'),
      avatar: text(primary, 'avatar'),
      description: text(primary, 'description'),
      updatedAt,
      domains: names.map((p, index) => entry(p, index === 0)),
      credential: withoutIds(credentials),
      identityGraph: graph.map((p) => ({ ...entry(p, false), sources: [platformOf(p)] })),
    };
  }
}

/** Both answers' entries, each once. */
function mergeCredentials(a: RawCredentials, b: RawCredentials): RawCredentials {
  const merge = (x: unknown[], y: unknown[]) => {
    const seen = new Set(x.map((e) => JSON.stringify(e)));
    return [...x, ...y.filter((e) => !seen.has(JSON.stringify(e)))];
  };
  return {
    isHuman: merge(a.isHuman, b.isHuman),
    isRisky: merge(a.isRisky, b.isRisky),
    isSpam: merge(a.isSpam, b.isSpam),
  };
}

function setOrDelete<T>(map: Map<string, T>, key: string, value: T | null): void {
  if (value === null) map.delete(key);
  else map.set(key, structuredClone(value));
}
