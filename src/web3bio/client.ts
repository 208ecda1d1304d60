/**
 * The Web3.bio Profile API client: one method per endpoint, identities parsed before any request,
 * answers validated and mapped to domain objects, and every lookup behind the LookupCache.
 */
import type { Dispatcher } from 'undici';
import type { ZodType } from 'zod';
import packageJson from '../../package.json' with { type: 'json' };
import { createLookupCache } from '../cache/lookupCache.ts';
import { MemoryStore } from '../cache/memoryStore.ts';
import type { CachePolicy, LookupCache } from '../cache/types.ts';
import { avatarUrl, isErrorBody, parseJson } from './answers.ts';
import { BatchScheduler } from './batchScheduler.ts';
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
import { DOMAIN_KINDS, encodeSegment, parseBatchId, parseIdentity } from './identity.ts';
import type { RateLimit, RequestLimiter } from './rateLimiter.ts';
import {
  parseResponse,
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
  type BatchPlatform,
  type CredentialSet,
  type DomainInfo,
  type Fetched,
  type NsProfile,
  PLATFORM_SEGMENTS,
  type PlatformSegment,
  type Profile,
  type WalletBundle,
} from './types.ts';

export type EndpointName = 'profile' | 'ns' | 'credential' | 'domain' | 'wallet' | 'avatar';

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

export interface CallOptions {
  /** Stops this caller's wait. The shared request itself continues (bounded by its timeout) and fills the cache. */
  signal?: AbortSignal;
  /** Bypass a fresh cache entry. */
  fresh?: boolean;
  /** Per attempt, overrides the client's. */
  timeoutMs?: number;
}

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
/** The server's batch limit. */
export const MAX_BATCH_IDS = 30;

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

type BatchKind = 'profile' | 'ns';

/** Client for the Web3.bio Profile API. */
export class Web3BioClient {
  readonly hasApiKey: boolean;
  readonly #transport: Web3BioTransport;
  readonly #cache: LookupCache;
  readonly #ownsCache: boolean;
  readonly #ttl: Record<EndpointName, number>;
  readonly #negativeTtlMs: number;
  readonly #staleIfErrorMs: number;
  readonly #batchers: Record<BatchKind, BatchScheduler>;

  constructor(options: Web3BioClientOptions = {}) {
    const apiKey = options.apiKey?.trim() || undefined;
    this.hasApiKey = apiKey !== undefined;
    const rateLimit =
      options.rateLimit === undefined ? (apiKey ? null : KEYLESS_RATE_LIMIT) : options.rateLimit;
    this.#transport = new Web3BioTransport({
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
    this.#ownsCache = options.closeCache ?? options.cache === undefined;
    this.#cache =
      options.cache ?? createLookupCache({ store: new MemoryStore(), ...createClientCacheOptions() });
    this.#ttl = { ...DEFAULT_TTL_MS };
    for (const [endpoint, ms] of Object.entries(options.ttl ?? {})) {
      if (endpoint in DEFAULT_TTL_MS && typeof ms === 'number' && ms >= 0)
        this.#ttl[endpoint as EndpointName] = ms;
    }
    this.#negativeTtlMs = options.negativeTtlMs ?? 60_000;
    this.#staleIfErrorMs = options.staleIfErrorMs ?? 24 * 60 * 60_000;
    this.#batchers = {
      profile: new BatchScheduler(MAX_BATCH_IDS, (ids) => this.#fetchBatch('profile', ids)),
      ns: new BatchScheduler(MAX_BATCH_IDS, (ids) => this.#fetchBatch('ns', ids)),
    };
  }

  /** Every platform's profile of an identity. @see GET /profile/{identity} */
  async getProfiles(identity: string, o?: CallOptions): Promise<Fetched<Profile[]>> {
    const parsed = parseIdentity(identity);
    return this.#lookup('profile', '*', parsed.identity, o, (timeoutMs) =>
      this.#getJson(
        `/profile/${encodeSegment(parsed.identity)}`,
        parsed.identity,
        RawProfileList,
        timeoutMs,
      ).then((list) => list.map(toProfile)),
    );
  }

  /** One platform's profile. @see GET /profile/{platform}/{identity} */
  async getPlatformProfile(
    platform: PlatformSegment,
    identity: string,
    o?: CallOptions,
  ): Promise<Fetched<Profile>> {
    const parsed = parseIdentity(identity, checkPlatform(platform));
    return this.#lookup('profile', platform, parsed.identity, o, (timeoutMs) =>
      this.#getJson(
        `/profile/${platform}/${encodeSegment(parsed.identity)}`,
        parsed.identity,
        RawProfile,
        timeoutMs,
      ).then(toProfile),
    );
  }

  /** Every platform's name-service view of an identity. @see GET /ns/{identity} */
  async getNsProfiles(identity: string, o?: CallOptions): Promise<Fetched<NsProfile[]>> {
    const parsed = parseIdentity(identity);
    return this.#lookup('ns', '*', parsed.identity, o, (timeoutMs) =>
      this.#getJson(
        `/ns/${encodeSegment(parsed.identity)}`,
        parsed.identity,
        RawNsProfileList,
        timeoutMs,
      ).then((list) => list.map(toNsProfile)),
    );
  }

  /** One platform's name-service view. @see GET /ns/{platform}/{identity} */
  async getPlatformNsProfile(
    platform: PlatformSegment,
    identity: string,
    o?: CallOptions,
  ): Promise<Fetched<NsProfile>> {
    const parsed = parseIdentity(identity, checkPlatform(platform));
    return this.#lookup('ns', platform, parsed.identity, o, (timeoutMs) =>
      this.#getJson(
        `/ns/${platform}/${encodeSegment(parsed.identity)}`,
        parsed.identity,
        RawNsProfile,
        timeoutMs,
      ).then(toNsProfile),
    );
  }

  /**
   * Profiles of many `platform,identity` ids (any number; sent 30 per request, cached per id), in input
   * order; ids the server dropped come back with `result: null`. @see GET /profile/batch/{ids}
   */
  async getProfilesBatch(ids: readonly string[], o?: CallOptions): Promise<BatchEntry<Profile>[]> {
    return (await this.#batch('profile', ids, o)) as BatchEntry<Profile>[];
  }

  /** Name-service views of many ids, as getProfilesBatch. @see GET /ns/batch/{ids} */
  async getNsBatch(ids: readonly string[], o?: CallOptions): Promise<BatchEntry<NsProfile>[]> {
    return await this.#batch('ns', ids, o);
  }

  /** Credentials (isHuman, isRisky, isSpam) of an identity or `platform,identity`. @see GET /credential/{id} */
  async getCredentials(identity: string, o?: CallOptions): Promise<Fetched<CredentialSet>> {
    const id = credentialId(identity);
    return this.#lookup('credential', '*', id, o, (timeoutMs) =>
      this.#getJson(`/credential/${encodeSegment(id)}`, id, RawCredentialSet, timeoutMs).then(
        toCredentialSet,
      ),
    );
  }

  /** Domain metadata of an ENS, Basenames, Linea or Solana name. @see GET /domain/{name} */
  async getDomain(name: string, o?: CallOptions): Promise<Fetched<DomainInfo>> {
    const parsed = parseIdentity(name);
    if (!DOMAIN_KINDS.has(parsed.kind)) {
      throw new InvalidIdentityError(name, 'domain lookups take an ENS, Basenames, Linea or Solana name');
    }
    return this.#lookup('domain', '*', parsed.identity, o, (timeoutMs) =>
      this.#getJson(`/domain/${encodeSegment(parsed.identity)}`, parsed.identity, RawDomain, timeoutMs).then(
        toDomainInfo,
      ),
    );
  }

  /** Identity bundle of a wallet; needs the API key (ApiKeyRequiredError, no request, without). @see GET /wallet/{identity} */
  async getWallet(identity: string, o?: CallOptions): Promise<Fetched<WalletBundle>> {
    if (!this.hasApiKey) throw new ApiKeyRequiredError('wallet');
    const parsed = parseIdentity(identity);
    return this.#lookup('wallet', '*', parsed.identity, o, (timeoutMs) =>
      this.#getJson(`/wallet/${encodeSegment(parsed.identity)}`, parsed.identity, RawWallet, timeoutMs).then(
        toWalletBundle,
      ),
    );
  }

  /** Avatar URL of an identity (`url: null` when it has none). @see GET /avatar/{identity} */
  async getAvatar(identity: string, o?: CallOptions): Promise<Fetched<AvatarResult>> {
    const parsed = parseIdentity(identity);
    return this.#lookup('avatar', '*', parsed.identity, o, async (timeoutMs) => {
      const answer = await this.#transport.get(`/avatar/${encodeSegment(parsed.identity)}`, {
        identity: parsed.identity,
        timeoutMs,
      });
      return { identity: parsed.identity, url: avatarUrl(answer, parsed.identity) };
    });
  }

  /** Close the owned connection pool and cache; queued requests are rejected. */
  async close(): Promise<void> {
    await this.#transport.close();
    if (this.#ownsCache) await this.#cache.close();
  }

  #policy(endpoint: EndpointName): CachePolicy {
    return {
      ttlMs: this.#ttl[endpoint],
      negativeTtlMs: this.#negativeTtlMs,
      staleIfErrorMs: this.#staleIfErrorMs,
    };
  }

  async #lookup<T>(
    endpoint: EndpointName,
    platform: string,
    identity: string,
    o: CallOptions | undefined,
    load: (timeoutMs: number | undefined) => Promise<T>,
  ): Promise<Fetched<T>> {
    o?.signal?.throwIfAborted();
    const pending = this.#cache.get(
      cacheKey(endpoint, platform, identity),
      () => load(o?.timeoutMs),
      this.#policy(endpoint),
      { bypass: o?.fresh === true },
    );
    const result = await untilAborted(pending, o?.signal);
    return { data: result.value, stale: result.stale, fetchedAt: result.fetchedAt, cached: result.hit };
  }

  async #batch(kind: BatchKind, ids: readonly string[], o?: CallOptions): Promise<BatchEntry<NsProfile>[]> {
    o?.signal?.throwIfAborted();
    const parsed = ids.map((input) => ({ input, ...parseBatchId(input) }));
    const byId = new Map<string, Promise<NsProfile | null>>();
    const policy = this.#policy(kind);
    for (const { id, platform, identity } of parsed) {
      if (byId.has(id)) continue;
      const lookup = this.#cache
        .get(
          cacheKey(kind, platform, routeIdentity(platform, identity)),
          () => this.#batchers[kind].load(id),
          policy,
          { bypass: o?.fresh === true },
        )
        .then(
          (result) => result.value as NsProfile,
          (error: unknown) => {
            if (error instanceof NotFoundError) return null;
            throw error;
          },
        );
      byId.set(id, lookup);
    }
    const results = await untilAborted(Promise.all(byId.values()), o?.signal);
    const resultById = new Map([...byId.keys()].map((id, i) => [id, results[i] ?? null]));
    return parsed.map(({ input, id }) => ({ input, id, result: resultById.get(id) ?? null }));
  }

  /** One batch request (at most 30 ids); each id's answer, or NotFoundError when the server dropped it. */
  async #fetchBatch(kind: BatchKind, ids: readonly string[]): Promise<Map<string, NsProfile>> {
    const path = `/${kind}/batch/${encodeSegment(JSON.stringify(ids))}`;
    const answer = await this.#transport.get(path, { identity: ids.join(' ') });
    const data = parseJson(answer);
    const list: NsProfile[] =
      kind === 'profile'
        ? parseResponse(RawProfileList, data, answer.url).map(toProfile)
        : parseResponse(RawNsProfileList, data, answer.url).map(toNsProfile);
    const byAlias = new Map<string, NsProfile>();
    for (const item of list) {
      // Aliases are how the server says which requested id an answer belongs to; its own
      // platform,identity pair is an exact match too.
      for (const alias of [...item.aliases, `${item.platform},${item.identity}`]) {
        const key = alias.toLowerCase();
        if (!byAlias.has(key)) byAlias.set(key, item);
      }
    }
    const out = new Map<string, NsProfile>();
    for (const id of ids) {
      const item = byAlias.get(id.toLowerCase());
      if (item) out.set(id, item);
    }
    return out;
  }

  async #getJson<T>(
    path: string,
    identity: string,
    schema: ZodType<T>,
    timeoutMs: number | undefined,
  ): Promise<T> {
    const answer = await this.#transport.get(path, { identity, timeoutMs });
    if (answer.status !== 200) throw new UpstreamError(answer.status, answer.url, answer.body);
    const data = parseJson(answer);
    // A 200 carrying an error body, or an empty list, is a failed lookup, not an answer.
    if (isErrorBody(data) || (Array.isArray(data) && data.length === 0)) {
      throw new NotFoundError(identity, answer.status, answer.url, answer.body);
    }
    return parseResponse(schema, data, answer.url);
  }
}

function cacheKey(endpoint: EndpointName, platform: string, identity: string): string {
  return `${endpoint}:${platform}:${identity}`;
}

/** The identity a platform route takes for a batch id's identity (`#3` is `farcaster,#3` there). */
function routeIdentity(platform: BatchPlatform, identity: string): string {
  return platform === 'farcaster' && identity.startsWith('#') ? `farcaster,${identity}` : identity;
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

/** `promise`, or the signal's reason as soon as it aborts (the promise itself keeps running). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  promise.catch(() => {});
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}
