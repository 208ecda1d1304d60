/**
 * Who may ask how often, with @fastify/rate-limit (in memory, or on Redis with REDIS_URL so every
 * process shares the counts). Limits key on the real client address (`request.ip`, which follows
 * X-Forwarded-For only from TRUST_PROXY's proxies) and, where a Discord account is signed in, on the
 * account too. Every refusal is a 429 with Retry-After and says how long to wait.
 */
import rateLimit, { normalizeIP } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { Redis } from 'ioredis';
import { PROVE_READ_MAX_AGE_MS } from '../gating/rules/recordReads.ts';
import { t } from '../i18n/index.ts';
import { requestLocale } from './locale.ts';
import { sendJson } from './responses.ts';

export interface WebLimitSettings {
  /** Requests per client per minute on any route without a limit of its own. */
  requestsPerClientPerMinute: number;
  /** Refused signatures per client in `windowMs` before its signatures are turned away unread. */
  refusedSignaturesPerClient: number;
  /** Signature submissions per client in `windowMs`, refused or not. */
  signaturesPerClient: number;
  /** Discord sign-ins a client may start in `windowMs` (each stores a state). */
  signInsPerClient: number;
  /** Farcaster sign-in channels a client may have the bot open on the relay in `windowMs`. */
  farcasterStartsPerClient: number;
  windowMs: number;
  /** Linked Roles proofs per signed-in Discord account per minute (each may read Web3.bio). */
  provesPerAccountPerMinute: number;
  /** Linked Roles proofs per client per minute, whoever is signed in. */
  provesPerClientPerMinute: number;
  /** Webhook event deliveries per client per minute. */
  eventsPerClientPerMinute: number;
  /**
   * Interaction deliveries refused (bad signature, stale, replayed) per client per minute before its
   * deliveries are turned away unchecked. Discord's own never fail, so they are never counted.
   */
  refusedDeliveriesPerClientPerMinute: number;
  /** Dashboard changes (dry runs included: each walks the member list) per Discord account per minute. */
  dashboardChangesPerAccountPerMinute: number;
}

export const DEFAULT_LIMITS: WebLimitSettings = {
  requestsPerClientPerMinute: 300,
  refusedSignaturesPerClient: 30,
  signaturesPerClient: 60,
  signInsPerClient: 30,
  farcasterStartsPerClient: 30,
  windowMs: 10 * 60_000,
  provesPerAccountPerMinute: 5,
  provesPerClientPerMinute: 20,
  eventsPerClientPerMinute: 120,
  refusedDeliveriesPerClientPerMinute: 30,
  dashboardChangesPerAccountPerMinute: 20,
};

/** A signature and its message fit in far less: a larger body is refused unread (413). */
export const MAX_SIGNATURE_BODY_BYTES = 8 * 1024;

/**
 * Fresh record reads per account per PROVE_READ_MAX_AGE_MS: a member who is refused, fixes their record
 * and tries again is read afresh; a burst reads the cache.
 */
export const FRESH_PROOF_READS = 2;

/** What the routes use: hooks for whole routes, and checks for the steps only some requests take. */
export interface WebLimiters {
  /** Signature submissions per client (a route hook). */
  signatures: onRequestHookHandler;
  /** Webhook deliveries per client (a route hook). */
  events: onRequestHookHandler;
  /** The largest signature body read. */
  signatureBodyBytes: number;
  /** Seconds to wait when this client has too many refused signatures; undefined when it may go on. */
  refusedWait(request: FastifyRequest): Promise<number | undefined>;
  /** Counts one refused signature against the client. */
  countRefused(request: FastifyRequest): Promise<void>;
  /** Interaction deliveries: seconds to wait when this client sent too many refused ones, and the count. */
  refusedDeliveries: RefusalCounter;
  /** Counts a sign-in start; seconds to wait when over the limit. */
  signIns(request: FastifyRequest): Promise<number | undefined>;
  /** Counts a Farcaster channel opened for the client; seconds to wait when over the limit. */
  farcasterStarts(request: FastifyRequest): Promise<number | undefined>;
  /** Counts a Linked Roles proof for the account and the client; seconds to wait when either is over. */
  proves(request: FastifyRequest, accountId: string): Promise<number | undefined>;
  /** Whether this account's proof may read Web3.bio fresh (FRESH_PROOF_READS per PROVE_READ_MAX_AGE_MS), else from the cache. */
  freshRead(request: FastifyRequest, accountId: string): Promise<boolean>;
  /** Counts a dashboard change for the account; seconds to wait when over the limit. */
  dashboardChanges(request: FastifyRequest, accountId: string): Promise<number | undefined>;
}

/** Refusals per client: checked without counting before the work, counted only when refused. */
export interface RefusalCounter {
  wait(request: FastifyRequest): Promise<number | undefined>;
  count(request: FastifyRequest): Promise<void>;
}

/** The client a limit counts: the address (IPv6 by its /64, as one host usually holds the whole prefix). */
export function clientKey(request: FastifyRequest): string {
  return addressKey(request.ip);
}

/** An address as the limits count it: IPv6 by its /64 (an IPv4-mapped one as IPv4), IPv4 as it is. */
export function addressKey(ip: string): string {
  return ip.includes(':') ? normalizeIP(ip) : ip;
}

/**
 * Registers the plugin on `app` (every route gets the per-client floor) and returns the limiters the
 * routes add. With `redis`, counts live under `${prefix}rate:`.
 */
export async function registerLimits(
  app: FastifyInstance,
  settings: WebLimitSettings,
  redis: { client: Redis; prefix: string } | undefined,
  signatureBodyBytes: number,
): Promise<WebLimiters> {
  await app.register(rateLimit, {
    global: true,
    max: settings.requestsPerClientPerMinute,
    timeWindow: 60_000,
    keyGenerator: (request) => `client:${clientKey(request)}`,
    ...(redis ? { redis: redis.client, nameSpace: `${redis.prefix}rate:` } : {}),
    // A Redis outage must not take the pages down: the limits then count nothing until it is back.
    skipOnError: true,
    // The limit is said when it is reached (429 with Retry-After), not on every answer.
    addHeadersOnExceeding: {
      'x-ratelimit-limit': false,
      'x-ratelimit-remaining': false,
      'x-ratelimit-reset': false,
    },
    errorResponseBuilder: (request, context) => slowDown(context.ttl, requestLocale(request)),
  });
  const windowMs = settings.windowMs;
  const counter = (name: string, max: number, timeWindow: number, key = clientKey) =>
    app.createRateLimit({ max, timeWindow, keyGenerator: (request) => `${name}:${key(request)}` });
  const refusals = (name: string, max: number, timeWindow: number): RefusalCounter => {
    const limit = counter(name, max, timeWindow);
    return {
      async wait(request) {
        const state = await limit(request, { increment: false });
        return !state.isAllowed && state.remaining === 0 ? waitSeconds(state.ttl) : undefined;
      },
      async count(request) {
        await limit(request);
      },
    };
  };
  const refused = refusals('refused', settings.refusedSignaturesPerClient, windowMs);
  const signIns = counter('sign-in', settings.signInsPerClient, windowMs);
  const farcasterStarts = counter('farcaster-start', settings.farcasterStartsPerClient, windowMs);
  const provesByClient = counter('prove-client', settings.provesPerClientPerMinute, 60_000);
  const accountOf = new WeakMap<FastifyRequest, string>();
  const provesByAccount = counter('prove-account', settings.provesPerAccountPerMinute, 60_000, (request) =>
    String(accountOf.get(request)),
  );
  const freshReads = counter('fresh-read', FRESH_PROOF_READS, PROVE_READ_MAX_AGE_MS, (request) =>
    String(accountOf.get(request)),
  );
  const changesByAccount = counter(
    'dashboard-change',
    settings.dashboardChangesPerAccountPerMinute,
    60_000,
    (request) => String(accountOf.get(request)),
  );
  const over = (limit: { isAllowed: boolean; isExceeded?: boolean; ttl?: number }) =>
    !limit.isAllowed && limit.isExceeded ? waitSeconds(limit.ttl ?? 0) : undefined;

  return {
    signatures: app.rateLimit({
      max: settings.signaturesPerClient,
      timeWindow: windowMs,
      keyGenerator: (request) => `signature:${clientKey(request)}`,
      errorResponseBuilder: (request, context) => tooManySignatures(context.ttl, requestLocale(request)),
    }),
    events: app.rateLimit({
      max: settings.eventsPerClientPerMinute,
      timeWindow: 60_000,
      keyGenerator: (request) => `event:${clientKey(request)}`,
    }),
    signatureBodyBytes,
    refusedWait: (request) => refused.wait(request),
    countRefused: (request) => refused.count(request),
    refusedDeliveries: refusals('refused-delivery', settings.refusedDeliveriesPerClientPerMinute, 60_000),
    signIns: async (request) => over(await signIns(request)),
    farcasterStarts: async (request) => over(await farcasterStarts(request)),
    async proves(request, accountId) {
      accountOf.set(request, accountId);
      return over(await provesByAccount(request)) ?? over(await provesByClient(request));
    },
    async freshRead(request, accountId) {
      accountOf.set(request, accountId);
      return over(await freshReads(request)) === undefined;
    },
    async dashboardChanges(request, accountId) {
      accountOf.set(request, accountId);
      return over(await changesByAccount(request));
    },
  };
}

/** The route hooks' refusal: a JSON 429 (the plugin adds Retry-After). */
export class LimitError extends Error {
  readonly statusCode = 429;
  readonly body: { ok: false; reason: string; message: string };
  constructor(body: { ok: false; reason: string; message: string }) {
    super(body.message);
    this.body = body;
  }
}

/** The refusal of a client asking too much: 429, saying how long to wait, in `locale`. */
export function slowDown(ttlMs: number, locale: string): LimitError {
  return new LimitError({
    ok: false,
    reason: 'slow_down',
    message: t(locale, 'web.limit.slowDown', { seconds: waitSeconds(ttlMs) }),
  });
}

function tooManySignatures(ttlMs: number, locale: string): LimitError {
  return new LimitError({
    ok: false,
    reason: 'too_many_attempts',
    message: t(locale, 'web.limit.tooManySignatures', { minutes: minutes(waitSeconds(ttlMs)) }),
  });
}

/** Answers a limit refusal met inside a handler, the way the route hooks do, in `locale`. */
export function sendTooManyRefused(reply: FastifyReply, wait: number, locale: string): FastifyReply {
  reply.header('retry-after', String(wait));
  return sendJson(reply, 429, {
    ok: false,
    reason: 'too_many_attempts',
    message: t(locale, 'web.limit.tooManyRefused', { minutes: minutes(wait) }),
  });
}

function waitSeconds(ttlMs: number): number {
  return Math.max(1, Math.ceil(ttlMs / 1_000));
}

/** Whole minutes to wait, at least one. */
function minutes(seconds: number): number {
  return Math.max(1, Math.ceil(seconds / 60));
}
