/**
 * The client's cache side: each endpoint's freshness policy, lookups through the LookupCache (one key
 * per endpoint, platform and identity), batch ids cached one by one, and callers' aborts.
 */
import type { CachePolicy, LookupCache } from '../cache/types.ts';
import { NotFoundError } from './errors.ts';
import { parseBatchId } from './identity.ts';
import type { BatchEntry, BatchPlatform, Fetched, NsProfile } from './types.ts';
import type { BatchKind } from './upstream.ts';

export type EndpointName = 'profile' | 'ns' | 'credential' | 'domain' | 'wallet' | 'avatar';

export interface CallOptions {
  /** Stops this caller's wait. The shared request itself continues (bounded by its timeout) and fills the cache. */
  signal?: AbortSignal;
  /** Bypass a fresh cache entry. */
  fresh?: boolean;
  /**
   * Accept a cached answer only when it was fetched within this many ms (and is still fresh); otherwise
   * fetch it (still shared with concurrent callers, still stale-if-error).
   */
  maxAgeMs?: number;
  /** Per attempt, overrides the client's. */
  timeoutMs?: number;
}

export interface LookupSettings {
  /** Fresh time per endpoint, ms. */
  ttl: Record<EndpointName, number>;
  negativeTtlMs: number;
  staleIfErrorMs: number;
}

/** Lookups through the cache, with the client's policy per endpoint. */
export class CachedLookups {
  readonly #cache: LookupCache;
  readonly #ownsCache: boolean;
  readonly #settings: LookupSettings;

  constructor(cache: LookupCache, ownsCache: boolean, settings: LookupSettings) {
    this.#cache = cache;
    this.#ownsCache = ownsCache;
    this.#settings = settings;
  }

  async lookup<T>(
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
      { bypass: o?.fresh === true, maxAgeMs: o?.maxAgeMs },
    );
    const result = await untilAborted(pending, o?.signal);
    return { data: result.value, stale: result.stale, fetchedAt: result.fetchedAt, cached: result.hit };
  }

  async batch(
    kind: BatchKind,
    ids: readonly string[],
    o: CallOptions | undefined,
    load: (id: string) => Promise<NsProfile>,
  ): Promise<BatchEntry<NsProfile>[]> {
    o?.signal?.throwIfAborted();
    const parsed = ids.map((input) => ({ input, ...parseBatchId(input) }));
    const byId = new Map<string, Promise<NsProfile | null>>();
    const policy = this.#policy(kind);
    for (const { id, platform, identity } of parsed) {
      if (byId.has(id)) continue;
      const lookup = this.#cache
        .get(cacheKey(kind, platform, routeIdentity(platform, identity)), () => load(id), policy, {
          bypass: o?.fresh === true,
          maxAgeMs: o?.maxAgeMs,
        })
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

  /** Close the cache when it is owned (its Redis connections). */
  async close(): Promise<void> {
    if (this.#ownsCache) await this.#cache.close();
  }

  #policy(endpoint: EndpointName): CachePolicy {
    return {
      ttlMs: this.#settings.ttl[endpoint],
      negativeTtlMs: this.#settings.negativeTtlMs,
      staleIfErrorMs: this.#settings.staleIfErrorMs,
    };
  }
}

function cacheKey(endpoint: EndpointName, platform: string, identity: string): string {
  return `${endpoint}:${platform}:${identity}`;
}

/** The identity a platform route takes for a batch id's identity (`#3` is `farcaster,#3` there). */
function routeIdentity(platform: BatchPlatform, identity: string): string {
  return platform === 'farcaster' && identity.startsWith('#') ? `farcaster,${identity}` : identity;
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
