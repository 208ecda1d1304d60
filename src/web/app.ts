/**
 * The bot's one web app (Fastify): the signing page behind PUBLIC_URL, the Discord sign-in, the
 * Linked Roles pages, Discord's webhook events, interactions over HTTP, and the operator's routes. Every
 * answer carries strict security headers (helmet's, worked out once at start; the API set on a route only
 * servers read) and is never cached; every route has a per-client limit (limits.ts), or, for
 * /interactions, a limit on refused deliveries; bodies are read only up to each route's limit; errors
 * answer without details.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import cookie from '@fastify/cookie';
import formBody from '@fastify/formbody';
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerFactory,
  type onRequestHookHandler,
} from 'fastify';
import helmet from 'helmet';
import type { Redis } from 'ioredis';
import type { LinkedRolePagesSetup } from '../gating/linkedRoles/linkedRoleService.ts';
import type { FarcasterConfig } from '../gating/proofs/farcasterSignIn.ts';
import type { DashboardSetup } from './dashboard/routes.ts';
import {
  BytesInFlight,
  DEFAULT_BODY_TIMEOUT_MS,
  DEFAULT_BYTES_PER_CLIENT,
  type DeliveryGuards,
  MAX_BYTES_IN_FLIGHT,
} from './deliveryGate.ts';
import { type InteractionEndpoint, registerInteractions } from './interactions.ts';
import {
  clientKey,
  DEFAULT_LIMITS,
  LimitError,
  MAX_SIGNATURE_BODY_BYTES,
  registerLimits,
  slowDown,
  type WebLimiters,
  type WebLimitSettings,
} from './limits.ts';
import { requestLocale } from './locale.ts';
import { type OpsRoutesOptions, registerOpsRoutes } from './ops.ts';
import { errorSummary, NO_LOG, sendJson, type WebLogger } from './responses.ts';
import { SeenDeliveries, SharedDeliveries } from './seenDeliveries.ts';
import { UnreadBody } from './signedBody.ts';
import type { SigningPagesSetup } from './signing/verifyRoutes.ts';
import { WebhookEventReceiver } from './webhookEvents.ts';

/** TRUST_PROXY: how many proxies stand in front (a hop count), or their addresses (IPs or CIDRs). */
export type TrustProxy = number | string[];

export interface WebAppOptions extends Partial<SigningPagesSetup> {
  logger?: WebLogger;
  /** Unset: X-Forwarded-For is ignored and the TCP peer is the client. */
  trustProxy?: TrustProxy | undefined;
  /** Shares the rate-limit counts across processes. */
  redis?: { client: Redis; prefix: string } | undefined;
  limits?: Partial<WebLimitSettings>;
  /** `/healthz` always; `/readyz` and `/metrics` as these options allow. Default: `/healthz` only. */
  ops?: OpsRoutesOptions;
  /**
   * With LINKED_ROLES_ENABLED: the Linked Roles verification URL, `/linked-role` below PUBLIC_URL; when
   * its `oauth.publicKey` is set, also the Webhook Events URL, `/discord/events`.
   */
  linkedRoles?: LinkedRolePagesSetup;
  serverFactory?: FastifyServerFactory;
  /**
   * With TRUST_PROXY: requests one client (as X-Forwarded-For names it through the trusted proxies) may
   * have open at once, on every route; past it, 429. Without TRUST_PROXY the TCP peer is the client and
   * server.ts caps its connections instead.
   */
  openRequestsPerClient?: number;
  /** INTERACTIONS=http: `POST /interactions`, the Interactions Endpoint URL. */
  interactions?: InteractionEndpoint;
  /** The signed routes' bodies: what one client may have in flight, and how long a body may take. */
  deliveries?: { bytesPerClient?: number; bodyTimeoutMs?: number };
  /** DASHBOARD_ENABLED: the owners' dashboard at `/dashboard` below PUBLIC_URL. */
  dashboard?: DashboardSetup;
  /** With OPTIMISM_RPC_URL: the Sign in with Farcaster pages (`/farcaster/…`, and on the Linked Roles page). */
  farcaster?: FarcasterConfig | undefined;
}

/**
 * Every answer's headers: helmet's (its policy for a page that embeds nothing, frames nothing and posts
 * nowhere; HTML answers replace the CSP with their own nonce'd one, responses.ts) plus no caching. Helmet
 * runs once here: @fastify/helmet rebuilds its middleware on every request, which cost 26 µs of a
 * ~150 µs page (npm run bench).
 */
const SECURITY_HEADERS: Record<string, string> = {
  ...headersOf(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          defaultSrc: ["'none'"],
          frameAncestors: ["'none'"],
          baseUri: ["'none'"],
          formAction: ["'none'"],
        },
      },
      frameguard: { action: 'deny' },
      referrerPolicy: { policy: 'no-referrer' },
    }),
  ),
  'cache-control': 'no-store, max-age=0',
  pragma: 'no-cache',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};

/**
 * The headers of a route whose answers only a server reads (`config: { answers: 'api' }`: Discord's
 * POSTs to /interactions): OWASP's set for a REST API, the page-only ones left out. Each header costs
 * every answer its setting, checking and writing; this route carries every interaction.
 * @see https://cheatsheetseries.owasp.org/cheatsheets/REST_Security_Cheat_Sheet.html#security-headers
 */
const API_HEADERS: Record<string, string> = Object.fromEntries(
  [
    'cache-control',
    'content-security-policy',
    'strict-transport-security',
    'x-content-type-options',
    'x-frame-options',
  ].map((name) => [name, SECURITY_HEADERS[name] ?? '']),
);

declare module 'fastify' {
  interface FastifyContextConfig {
    /** `api`: the route's answers are read by a server, not shown in a browser (API_HEADERS). */
    answers?: 'api';
  }
}

/** The headers a (synchronous, request-independent) Connect-style middleware sets. */
function headersOf(
  middleware: (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void,
): Record<string, string> {
  const headers: Record<string, string> = {};
  const res = {
    setHeader: (name: string, value: unknown) => {
      headers[name.toLowerCase()] = String(value);
    },
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
  };
  middleware({} as IncomingMessage, res as unknown as ServerResponse, (error) => {
    if (error) throw error;
  });
  return headers;
}

/** Builds the app (not listening: `server.ts` does that, and tests may `inject`). */
export async function buildWebApp(o: WebAppOptions): Promise<FastifyInstance> {
  const log = o.logger ?? NO_LOG;
  const trust = o.trustProxy;
  const app: FastifyInstance = Fastify({
    logger: false,
    // A hop count trusts that many addresses from the socket's end of X-Forwarded-For.
    trustProxy: typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : (trust ?? false),
    bodyLimit: 16 * 1024,
    return503OnClosing: true,
    ...(o.serverFactory ? { serverFactory: o.serverFactory } : {}),
  });
  const setHeaders = (headers: Record<string, string>, request: FastifyRequest, reply: FastifyReply) => {
    reply.headers(headers);
    if (o.trustProxy === undefined && request.headers['x-forwarded-for'] !== undefined) warnProxyOnce(log);
  };
  const headersHook =
    (headers: Record<string, string>): onRequestHookHandler =>
    (request, reply, done) => {
      setHeaders(headers, request, reply);
      done();
    };
  const pageHeaders = headersHook(SECURITY_HEADERS);
  const apiHeaders = headersHook(API_HEADERS);
  // Each route's first hook, chosen once as it is added (request.routeOptions builds an object per call);
  // unknown paths get the page's from the app's own hook.
  app.addHook('onRoute', (route) => {
    const own = route.onRequest === undefined ? [] : [route.onRequest].flat();
    route.onRequest = [route.config?.answers === 'api' ? apiHeaders : pageHeaders, ...own];
  });
  app.addHook('onRequest', (request, reply, done) => {
    if (request.is404) setHeaders(SECURITY_HEADERS, request, reply);
    done();
  });
  if (trust !== undefined && o.openRequestsPerClient !== undefined)
    capOpenRequestsPerClient(app, o.openRequestsPerClient);
  const limits = await registerLimits(
    app,
    { ...DEFAULT_LIMITS, ...o.limits },
    o.redis,
    MAX_SIGNATURE_BODY_BYTES,
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof LimitError) return sendJson(reply, 429, error.body);
    if (error instanceof UnreadBody) return error.answer(reply);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      reply.header('connection', 'close');
      return sendJson(reply, 413, { ok: false, reason: 'malformed', message: 'The request is too large.' });
    }
    if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
      return sendJson(reply, 415, { ok: false, reason: 'malformed', message: 'Send JSON.' });
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500)
      return sendJson(reply, error.statusCode, { ok: false, message: 'Bad request.' });
    log.error(
      { err: errorSummary(error), method: request.method, route: routeName(request) },
      'web request failed',
    );
    return sendJson(reply, 500, { ok: false, message: 'Something went wrong. Try again.' });
  });
  // Unknown paths count against the client too, so guessing links is as limited as using them.
  app.setNotFoundHandler({ preHandler: app.rateLimit() }, (_request, reply) =>
    sendJson(reply, 404, { ok: false, message: 'Not found.' }),
  );

  registerOpsRoutes(app, o.ops ?? { metrics: false, readiness: {}, openWithoutToken: false });
  const { store, siwe, onVerified } = o;
  if (store && siwe && onVerified) {
    // Loaded only here: a web replica without gating never loads the signing code (viem).
    const [{ registerVerifyRoutes }, { registerLinkedRoleRoutes }, farcasterRoutes] = await Promise.all([
      import('./signing/verifyRoutes.ts'),
      import('./linkedRoles/routes.ts'),
      // Sign in with Farcaster only behind the Discord sign-in: else a forwarded page would prove the
      // FID of whoever opened it for the member who sent it (signInConfig turns it off and says why).
      o.farcaster && o.oauth ? import('./farcaster/routes.ts') : undefined,
    ]);
    await app.register(async (pages) => {
      // Only the pages keep a session: the cookie hooks run on their routes alone, not on every interaction.
      await pages.register(cookie);
      // Signatures arrive as JSON text, parsed by the routes themselves; the Linked Roles form as a form.
      pages.removeAllContentTypeParsers();
      pages.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) =>
        done(null, body),
      );
      await pages.register(formBody);
      registerVerifyRoutes(pages, { ...o, store, siwe, onVerified, logger: log, limits });
      if (o.dashboard) {
        const { registerDashboardRoutes } = await import('./dashboard/routes.ts');
        registerDashboardRoutes(pages, {
          ...o.dashboard,
          logger: log,
          limits,
          now: siwe.now ?? Date.now,
        });
      }
      const farcasterOptions =
        o.farcaster && o.oauth && farcasterRoutes
          ? {
              farcaster: o.farcaster,
              store,
              siwe,
              oauth: o.oauth,
              logger: log,
              limits,
              onVerified,
              maxFailuresPerChallenge: o.maxFailuresPerChallenge ?? 10,
            }
          : undefined;
      const farcaster = farcasterOptions && farcasterRoutes?.createFarcasterSignIns(farcasterOptions);
      if (farcasterOptions && farcaster)
        farcasterRoutes?.registerFarcasterRoutes(pages, farcasterOptions, farcaster);
      if (o.linkedRoles) {
        registerLinkedRoleRoutes(pages, {
          ...o.linkedRoles,
          store,
          siwe,
          logger: log,
          now: siwe.now ?? Date.now,
          limits,
          maxFailuresPerChallenge: o.maxFailuresPerChallenge ?? 10,
          farcaster,
        });
      }
    });
  }
  registerSignedRoutes(app, o, limits, log);
  return app;
}

/**
 * The routes that receive Discord's signed POSTs: `/interactions` (INTERACTIONS=http) and the webhook
 * events (Linked Roles with a public key), sharing one set of guards per process: both routes' bodies
 * count against the same bytes, and a client's refusals on either count against it on both.
 */
function registerSignedRoutes(
  app: FastifyInstance,
  o: WebAppOptions,
  limits: WebLimiters,
  log: WebLogger,
): void {
  const linked = o.linkedRoles;
  if (!o.interactions && !linked?.oauth.publicKey) return;
  // One of each per process: both routes' bodies count against the same bytes, and a client's refusals
  // on either count against it on both.
  const shared = o.redis
    ? new SharedDeliveries({ redis: o.redis.client, prefix: o.redis.prefix, logger: log })
    : undefined;
  if (shared) app.addHook('onClose', async () => shared.close());
  const guards: DeliveryGuards = {
    refusals: limits.refusedDeliveries,
    ledger: shared ?? new SeenDeliveries(),
    budget: new BytesInFlight(MAX_BYTES_IN_FLIGHT, o.deliveries?.bytesPerClient ?? DEFAULT_BYTES_PER_CLIENT),
    bodyTimeoutMs: o.deliveries?.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
  };
  if (o.interactions) registerInteractions(app, o.interactions, guards, log);
  if (linked?.oauth.publicKey) {
    new WebhookEventReceiver({
      publicKey: linked.oauth.publicKey,
      applicationId: linked.oauth.clientId,
      service: linked.service,
      logger: log,
      now: o.siwe?.now ?? Date.now,
      guards,
    }).register(app, limits.events);
  }
}

/**
 * Behind a trusted proxy every client shares the proxy's connections, which server.ts cannot tell apart:
 * open requests are counted per forwarded client (`clientKey`) instead, from the request's start until
 * its response ends or its connection closes. One client past `max` gets 429 and its connection closed;
 * another client through the same proxy is served.
 */
function capOpenRequestsPerClient(app: FastifyInstance, max: number): void {
  const open = new Map<string, number>();
  app.addHook('onRequest', (request, reply, done) => {
    const key = clientKey(request);
    const count = (open.get(key) ?? 0) + 1;
    if (count > max) {
      reply.headers(SECURITY_HEADERS).header('connection', 'close').header('retry-after', '1');
      sendJson(reply, 429, slowDown(1_000, requestLocale(request)).body);
      return;
    }
    open.set(key, count);
    reply.raw.once('close', () => {
      const left = (open.get(key) ?? 1) - 1;
      if (left <= 0) open.delete(key);
      else open.set(key, left);
    });
    done();
  });
}

let proxyWarned = false;

/** Said once per process: behind a proxy without TRUST_PROXY, every member shares the proxy's limits. */
function warnProxyOnce(log: WebLogger): void {
  if (proxyWarned) return;
  proxyWarned = true;
  log.warn(
    {},
    'requests carry X-Forwarded-For but TRUST_PROXY is unset: the header is ignored, and every client behind the proxy shares one set of limits. Set TRUST_PROXY to the proxy hop count or addresses.',
  );
}

/** The route without its nonce, for logs. */
function routeName(request: { routeOptions: { url?: string | undefined }; url: string }): string {
  return request.routeOptions.url ?? request.url.split('?', 1)[0]?.slice(0, 64) ?? '';
}
