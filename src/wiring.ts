import { createDefaultCache } from './cache/index.ts';
import { type Config, rateLimitOption } from './config.ts';
import type { Logger } from './log.ts';
import { createClientCacheOptions, Web3BioClient } from './web3bio/client.ts';

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
>;

/** The Web3.bio client and its cache (Redis when REDIS_URL is set, else in-process) from config. */
export function createWeb3BioFromConfig(config: Web3BioConfig, logger: Logger): Web3BioClient {
  const cache = createDefaultCache({
    redisUrl: config.REDIS_URL,
    maxEntries: config.CACHE_MAX_ENTRIES,
    maxBytes: config.CACHE_MAX_MB * 1024 * 1024,
    ...createClientCacheOptions(),
    onStoreError: (error, operation, key) => logger.warn({ err: error, operation, key }, 'cache store error'),
  });
  const rateLimit = rateLimitOption(config.WEB3BIO_RATE_LIMIT);
  return new Web3BioClient({
    baseUrl: config.WEB3BIO_API_URL,
    apiKey: config.WEB3BIO_API_KEY,
    cache,
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
  });
}
