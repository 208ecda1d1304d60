export {
  type CallOptions,
  createClientCacheOptions,
  DEFAULT_BASE_URL,
  DEFAULT_RETRY,
  DEFAULT_TTL_MS,
  DEFAULT_USER_AGENT,
  type EndpointName,
  KEYLESS_RATE_LIMIT,
  MAX_BATCH_IDS,
  notFoundFromNegative,
  notFoundToNegative,
  Web3BioClient,
  type Web3BioClientOptions,
} from './client.ts';
export * from './errors.ts';
export type { RetryOptions, TransportLogger } from './http.ts';
export { parseRetryAfter } from './httpAnswer.ts';
export {
  ACCEPTED_FORMS,
  encodeSegment,
  MAX_IDENTITY_LENGTH,
  type ParsedIdentity,
  parseBatchId,
  parseIdentity,
} from './identity.ts';
export type { IdentityKind } from './identityKind.ts';
export type { RateLimit } from './rateLimiter.ts';
export * from './types.ts';
