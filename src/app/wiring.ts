import { createDefaultCache, createRedisClient } from '../cache/index.ts';
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import { createClientCacheOptions, Web3BioClient } from '../web3bio/client.ts';
import type { RateLimit } from '../web3bio/rateLimiter.ts';
import { SharedRateLimiter } from '../web3bio/sharedRateLimiter.ts';
import { type Config, rateLimitOption } from './config.ts';

export type Web3BioConfig = Pick<
  Config,
  | 'WEB3BIO_API_URL'
  | 'WEB3BIO_API_KEY'
  | 'WEB3BIO_RATE_LIMIT'
  | 'WEB3BIO_TIMEOUT_MS'
  | 'WEB3BIO_CONCURRENCY'
  | 'CACHE_MAX_ENTRIES'
  | 'CACHE_MAX_MB'
  | 'CACHE_TTL_PROFILE_SECONDS'
  | 'CACHE_TTL_CREDENTIAL_SECONDS'
  | 'CACHE_TTL_DOMAIN_SECONDS'
  | 'CACHE_TTL_AVATAR_SECONDS'
  | 'CACHE_TTL_WALLET_SECONDS'
  | 'CACHE_NEGATIVE_TTL_SECONDS'
  | 'CACHE_STALE_IF_ERROR_SECONDS'
  | 'REDIS_URL'
  | 'REDIS_PREFIX'
  | 'CACHE_L1_TTL_SECONDS'
  | 'CACHE_FILL_LOCK_SECONDS'
>;

/**
 * The Web3.bio client from config: its cache (Redis behind an in-process L1 when REDIS_URL is set, else
 * in-process), its rate limiter (shared by every process through Redis when REDIS_URL is set), and
 * its metrics when `metrics` is given.
 */
export function createWeb3BioFromConfig(
  config: Web3BioConfig,
  logger: Logger,
  metrics?: BotMetrics,
): Web3BioClient {
  const cache = createDefaultCache({
    redisUrl: config.REDIS_URL,
    redisPrefix: config.REDIS_PREFIX,
    maxEntries: config.CACHE_MAX_ENTRIES,
    maxBytes: config.CACHE_MAX_MB * 1024 * 1024,
    l1TtlMs: config.CACHE_L1_TTL_SECONDS * 1_000,
    fillLockMs: config.CACHE_FILL_LOCK_SECONDS * 1_000,
    ...createClientCacheOptions(),
    onStoreError: (error, operation, key) => logger.warn({ err: error, operation, key }, 'cache store error'),
    ...(metrics
      ? {
          onRead: (tier, hit) => metrics.cacheLookups.inc({ tier, result: hit ? 'hit' : 'miss' }),
          onLookup: (result) => metrics.cacheLookups.inc({ tier: 'all', result }),
        }
      : {}),
  });
  const rateLimit = rateLimitOption(config.WEB3BIO_RATE_LIMIT);
  const { REDIS_URL } = config;
  return new Web3BioClient({
    baseUrl: config.WEB3BIO_API_URL,
    apiKey: config.WEB3BIO_API_KEY,
    cache,
    // Built here for this client alone: closing the client closes its Redis connections too.
    closeCache: true,
    timeoutMs: config.WEB3BIO_TIMEOUT_MS,
    concurrency: config.WEB3BIO_CONCURRENCY,
    ...(rateLimit === undefined ? {} : { rateLimit }),
    ttl: {
      profile: config.CACHE_TTL_PROFILE_SECONDS * 1_000,
      ns: config.CACHE_TTL_PROFILE_SECONDS * 1_000,
      credential: config.CACHE_TTL_CREDENTIAL_SECONDS * 1_000,
      domain: config.CACHE_TTL_DOMAIN_SECONDS * 1_000,
      avatar: config.CACHE_TTL_AVATAR_SECONDS * 1_000,
      wallet: config.CACHE_TTL_WALLET_SECONDS * 1_000,
    },
    negativeTtlMs: config.CACHE_NEGATIVE_TTL_SECONDS * 1_000,
    staleIfErrorMs: config.CACHE_STALE_IF_ERROR_SECONDS * 1_000,
    logger,
    ...(REDIS_URL === undefined
      ? {}
      : {
          rateLimiter: (limit: RateLimit) => {
            metrics?.limiterShared.set(1);
            return new SharedRateLimiter({
              redis: createRedisClient(REDIS_URL),
              ownsRedis: true,
              limit,
              apiKey: config.WEB3BIO_API_KEY,
              prefix: config.REDIS_PREFIX,
              logger: logger.child({ module: 'rate-limiter' }),
              onSharedChange: (shared) => metrics?.limiterShared.set(shared ? 1 : 0),
            });
          },
        }),
    ...(metrics
      ? {
          observer: {
            onAttempt: (endpoint: string, status: string, ms: number) => {
              metrics.upstreamRequests.inc({ endpoint, status });
              metrics.upstreamSeconds.observe({ endpoint }, ms / 1_000);
            },
            onLimiterWait: (ms: number) => metrics.limiterWaitSeconds.observe(ms / 1_000),
          },
        }
      : {}),
  });
}
