/**
 * The Web3.bio Profile API client: one method per endpoint, identities parsed before any request,
 * answers validated and mapped to domain objects, and every lookup behind the LookupCache.
 */
import type { Dispatcher } from 'undici';
import packageJson from '../../package.json' with { type: 'json' };
import { createLookupCache } from '../cache/lookupCache.ts';
import { MemoryStore } from '../cache/memoryStore.ts';
import type { LookupCache } from '../cache/types.ts';
import { CachedLookups, type CallOptions, type EndpointName } from './cachedLookups.ts';
import {
  ApiKeyRequiredError,
  InvalidIdentityError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  TimeoutError,
  UpstreamError,
} from './errors.ts';
import { type TransportLogger, type TransportObserver, Web3BioTransport } from './http.ts';
import { encodeSegment, parseBatchId, parseIdentity } from './identity.ts';
import { DOMAIN_KINDS } from './identityKind.ts';
import type { RateLimit, RequestLimiter } from './rateLimiter.ts';
import {
  RawCredentialSet,
  RawDomain,
  RawNsProfile,
  RawNsProfileList,
  RawProfile,
  RawProfileList,
  RawWallet,
  toCredentialSet,
  toDomainInfo,
  toNsProfile,
  toProfile,
  toWalletBundle,
} from './schemas.ts';
import {
  type AvatarResult,
  type BatchEntry,
  type CredentialSet,
  type DomainInfo,
  type Fetched,
  type NsProfile,
  PLATFORM_SEGMENTS,
  type PlatformSegment,
  type Profile,
  type WalletBundle,
} from './types.ts';
import { Web3BioUpstream } from './upstream.ts';

export interface Web3BioClientOptions {
  /** Default 'https://api.web3.bio'. */
  baseUrl?: string;
  apiKey?: string | undefined;
  /** Default: a keep-alive Agent owned (and closed) by the client. */
  dispatcher?: Dispatcher;
  /** Default: an in-memory cache owned by the client. Build a shared one with `createClientCacheOptions`. */
  cache?: LookupCache;
  /** Close `cache` in `close()` (its Redis connections); default true only for the client's own cache. */
  closeCache?: boolean;
  /** Per attempt, default 10_000. */
  timeoutMs?: number;
  /** Default 3 retries, 250 ms base, 8 s cap. */
  retry?: { retries: number; baseDelayMs: number; maxDelayMs: number };
  /** Default without a key: 5 per 10 s (the public limit is about 6); with a key: none. null: none. */
  rateLimit?: RateLimit | null;
  /** Builds the limiter for the rate limit chosen above (e.g. a `SharedRateLimiter`); default local. */
  rateLimiter?: (limit: RateLimit) => RequestLimiter;
  /** Most requests in flight at once, default 8. */
  concurrency?: number;
  /** Fresh time per endpoint, ms. */
  ttl?: Partial<Record<EndpointName, number>>;
  /** How long "not found" is remembered, default 60_000. */
  negativeTtlMs?: number;
  /** How long past expiry an answer may stand in for a failing upstream, default 24 h. */
  staleIfErrorMs?: number;
  userAgent?: string;
  /** pino-compatible. Never receives the API key. */
  logger?: TransportLogger;
  /** Told about each upstream attempt and limiter wait (metrics). */
  observer?: TransportObserver;
}

export type { CallOptions, EndpointName } from './cachedLookups.ts';
export { MAX_BATCH_IDS } from './upstream.ts';

export const DEFAULT_BASE_URL = 'https://api.web3.bio';
/** Names the project and its version; no made-up homepage until the project has a public one. */
export const DEFAULT_USER_AGENT = `web3bio-discord-bot/${packageJson.version} (Discord bot; Node.js ${process.versions.node})`;
export const DEFAULT_TTL_MS: Readonly<Record<EndpointName, number>> = {
  profile: 2 * 60 * 60_000,
  ns: 2 * 60 * 60_000,
  credential: 2 * 60 * 60_000,
  domain: 15 * 60_000,
  wallet: 10 * 60_000,
  avatar: 24 * 60 * 60_000,
};
export const DEFAULT_RETRY = { retries: 3, baseDelayMs: 250, maxDelayMs: 8_000 } as const;
export const KEYLESS_RATE_LIMIT: RateLimit = { requests: 5, intervalMs: 10_000 };
/** Cache data kept for a "not found" answer. */
interface NegativeData {
  identity: string;
  status: number;
  url: string;
}

/** `CacheOptions.toNegative` for the client: NotFoundError is remembered, nothing else. */
export function notFoundToNegative(error: unknown): NegativeData | undefined {
  if (!(error instanceof NotFoundError)) return undefined;
  return { identity: error.identity, status: error.status, url: error.url };
}

/** `CacheOptions.fromNegative` for the client: rebuilds the NotFoundError. */
export function notFoundFromNegative(data: unknown, key: string): Error {
  const d = (data ?? {}) as Partial<NegativeData>;
  return new NotFoundError(
    typeof d.identity === 'string' ? d.identity : key,
    typeof d.status === 'number' ? d.status : 404,
    typeof d.url === 'string' ? d.url : '',
  );
}

/**
 * The hooks a cache shared with the client needs (pass to createDefaultCache): "not found" is cached
 * negatively, and only an upstream outage is answered with stale data.
 */
export function createClientCacheOptions(): {
  toNegative: typeof notFoundToNegative;
  fromNegative: typeof notFoundFromNegative;
  staleOn: typeof upstreamOutage;
} {
  return { toNegative: notFoundToNegative, fromNegative: notFoundFromNegative, staleOn: upstreamOutage };
}

/** Errors during which an older answer may be served (the upstream is down, not the request wrong). */
export function upstreamOutage(error: unknown): boolean {
  return (
    error instanceof UpstreamError ||
    error instanceof NetworkError ||
    error instanceof TimeoutError ||
    error instanceof RateLimitedError
  );
}

/** Client for the Web3.bio Profile API. */
export class Web3BioClient {
  readonly hasApiKey: boolean;
  /** The quota this client keeps to (per process, or shared through Redis); null when unlimited. */
  readonly rateLimit: RateLimit | null;
  readonly #upstream: Web3BioUpstream;
  readonly #lookups: CachedLookups;

  constructor(options: Web3BioClientOptions = {}) {
    const apiKey = options.apiKey?.trim() || undefined;
    this.hasApiKey = apiKey !== undefined;
    const rateLimit =
      options.rateLimit === undefined ? (apiKey ? null : KEYLESS_RATE_LIMIT) : options.rateLimit;
    this.rateLimit = rateLimit;
    const transport = new Web3BioTransport({
      baseUrl: options.baseUrl ?? DEFAULT_BASE_URL,
      apiKey,
      dispatcher: options.dispatcher,
      timeoutMs: options.timeoutMs ?? 10_000,
      retry: options.retry ?? DEFAULT_RETRY,
      rateLimit,
      rateLimiter: options.rateLimiter,
      concurrency: options.concurrency ?? 8,
      userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
      logger: options.logger,
      observer: options.observer,
    });
    const ownsCache = options.closeCache ?? options.cache === undefined;
    const cache =
      options.cache ?? createLookupCache({ store: new MemoryStore(), ...createClientCacheOptions() });
    const ttl = { ...DEFAULT_TTL_MS };
    for (const [endpoint, ms] of Object.entries(options.ttl ?? {})) {
      if (endpoint in DEFAULT_TTL_MS && typeof ms === 'number' && ms >= 0) ttl[endpoint as EndpointName] = ms;
    }
    this.#lookups = new CachedLookups(cache, ownsCache, {
      ttl,
      negativeTtlMs: options.negativeTtlMs ?? 60_000,
      staleIfErrorMs: options.staleIfErrorMs ?? 24 * 60 * 60_000,
    });
    this.#upstream = new Web3BioUpstream(transport);
  }

  /** Every platform's profile of an identity. @see GET /profile/{identity} */
  async getProfiles(identity: string, o?: CallOptions): Promise<Fetched<Profile[]>> {
    const parsed = parseIdentity(identity);
    return this.#lookups.lookup('profile', '*', parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(`/profile/${encodeSegment(parsed.identity)}`, parsed.identity, RawProfileList, timeoutMs)
        .then((list) => list.map(toProfile)),
    );
  }

  /** One platform's profile. @see GET /profile/{platform}/{identity} */
  async getPlatformProfile(
    platform: PlatformSegment,
    identity: string,
    o?: CallOptions,
  ): Promise<Fetched<Profile>> {
    const parsed = parseIdentity(identity, checkPlatform(platform));
    return this.#lookups.lookup('profile', platform, parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(
          `/profile/${platform}/${encodeSegment(parsed.identity)}`,
          parsed.identity,
          RawProfile,
          timeoutMs,
        )
        .then(toProfile),
    );
  }

  /** Every platform's name-service view of an identity. @see GET /ns/{identity} */
  async getNsProfiles(identity: string, o?: CallOptions): Promise<Fetched<NsProfile[]>> {
    const parsed = parseIdentity(identity);
    return this.#lookups.lookup('ns', '*', parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(`/ns/${encodeSegment(parsed.identity)}`, parsed.identity, RawNsProfileList, timeoutMs)
        .then((list) => list.map(toNsProfile)),
    );
  }

  /** One platform's name-service view. @see GET /ns/{platform}/{identity} */
  async getPlatformNsProfile(
    platform: PlatformSegment,
    identity: string,
    o?: CallOptions,
  ): Promise<Fetched<NsProfile>> {
    const parsed = parseIdentity(identity, checkPlatform(platform));
    return this.#lookups.lookup('ns', platform, parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(
          `/ns/${platform}/${encodeSegment(parsed.identity)}`,
          parsed.identity,
          RawNsProfile,
          timeoutMs,
        )
        .then(toNsProfile),
    );
  }

  /**
   * Profiles of many `platform,identity` ids (any number; sent 30 per request, cached per id), in input
   * order; ids the server dropped come back with `result: null`. @see GET /profile/batch/{ids}
   */
  async getProfilesBatch(ids: readonly string[], o?: CallOptions): Promise<BatchEntry<Profile>[]> {
    return (await this.#lookups.batch('profile', ids, o, (id) =>
      this.#upstream.loadBatched('profile', id),
    )) as BatchEntry<Profile>[];
  }

  /** Name-service views of many ids, as getProfilesBatch. @see GET /ns/batch/{ids} */
  async getNsBatch(ids: readonly string[], o?: CallOptions): Promise<BatchEntry<NsProfile>[]> {
    return await this.#lookups.batch('ns', ids, o, (id) => this.#upstream.loadBatched('ns', id));
  }

  /** Credentials (isHuman, isRisky, isSpam) of an identity or `platform,identity`. @see GET /credential/{id} */
  async getCredentials(identity: string, o?: CallOptions): Promise<Fetched<CredentialSet>> {
    const id = credentialId(identity);
    return this.#lookups.lookup('credential', '*', id, o, (timeoutMs) =>
      this.#upstream
        .getJson(`/credential/${encodeSegment(id)}`, id, RawCredentialSet, timeoutMs)
        .then(toCredentialSet),
    );
  }

  /** Domain metadata of an ENS, Basenames, Linea or Solana name. @see GET /domain/{name} */
  async getDomain(name: string, o?: CallOptions): Promise<Fetched<DomainInfo>> {
    const parsed = parseIdentity(name);
    if (!DOMAIN_KINDS.has(parsed.kind)) {
      throw new InvalidIdentityError(name, 'domain lookups take an ENS, Basenames, Linea or Solana name');
    }
    return this.#lookups.lookup('domain', '*', parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(`/domain/${encodeSegment(parsed.identity)}`, parsed.identity, RawDomain, timeoutMs)
        .then(toDomainInfo),
    );
  }

  /** Identity bundle of a wallet; needs the API key (ApiKeyRequiredError, no request, without). @see GET /wallet/{identity} */
  async getWallet(identity: string, o?: CallOptions): Promise<Fetched<WalletBundle>> {
    if (!this.hasApiKey) throw new ApiKeyRequiredError('wallet');
    const parsed = parseIdentity(identity);
    return this.#lookups.lookup('wallet', '*', parsed.identity, o, (timeoutMs) =>
      this.#upstream
        .getJson(`/wallet/${encodeSegment(parsed.identity)}`, parsed.identity, RawWallet, timeoutMs)
        .then(toWalletBundle),
    );
  }

  /** Avatar URL of an identity (`url: null` when it has none). @see GET /avatar/{identity} */
  async getAvatar(identity: string, o?: CallOptions): Promise<Fetched<AvatarResult>> {
    const parsed = parseIdentity(identity);
    return this.#lookups.lookup('avatar', '*', parsed.identity, o, (timeoutMs) =>
      this.#upstream.getAvatar(parsed.identity, timeoutMs),
    );
  }

  /** Close the owned connection pool and cache; queued requests are rejected. */
  async close(): Promise<void> {
    await this.#upstream.close();
    await this.#lookups.close();
  }
}

function checkPlatform(platform: PlatformSegment): PlatformSegment {
  if (!(PLATFORM_SEGMENTS as readonly string[]).includes(platform)) {
    throw new InvalidIdentityError(
      String(platform),
      `the platform must be one of ${PLATFORM_SEGMENTS.join(', ')}`,
    );
  }
  return platform;
}

/** `platform,identity` ids are normalised as batch ids; a bare identity is sent as parsed, except
 * Farcaster names, which the credential route knows as `farcaster,<name>`. */
function credentialId(input: string): string {
  if (typeof input === 'string' && input.includes(',')) return parseBatchId(input).id;
  const parsed = parseIdentity(input);
  if (parsed.kind === 'farcaster') return `farcaster,${parsed.identity.replace(/\.farcaster$/, '')}`;
  return parsed.identity;
}
