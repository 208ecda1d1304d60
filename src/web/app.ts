/**
 * The HTTP server behind `PUBLIC_URL`: serves the signing page, hands out the exact message to sign,
 * and verifies signatures; with Linked Roles, also their pages and (with DISCORD_PUBLIC_KEY) Discord's
 * webhook events. Every response carries strict security headers and is never cached.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import type { NonceRecord, NonceStore, SiweConfig } from '../gating/proofs/siwe.ts';
import type { SignatureLinkResult, VerifyRefusal } from '../gating/types.ts';
import type { GatingStore } from '../store/types.ts';
import { handleLinkedRole, type LinkedRolePagesSetup } from './linkedRoles/routes.ts';
import { renderVerifyPage, type VerifyPageState } from './pages/verifyPage.ts';
import { send, sendHtml, sendJson } from './responses.ts';
import {
  errorSummary,
  FailureWindow,
  type JsonAnswer,
  openChallenge,
  type PageLogger,
  receiveSignature,
  type SignatureRoutesOptions,
  sendChallengeMessage,
} from './signing/challengeRoutes.ts';
import {
  finishSignIn,
  hasSignedIn,
  SIGN_IN_CALLBACK_PATH,
  startSignIn,
  type VerifySignInOptions,
} from './signing/signIn.ts';
import { WEBHOOK_EVENTS_PATH, WebhookEventReceiver } from './webhookEvents.ts';

const LINK_REFUSALS: Record<VerifyRefusal['code'], string> = {
  too_many_links:
    'Your signature was valid, but you already have the most verified identities allowed in this server. Remove one with /unverify, then run /verify again.',
  address_taken: 'Your signature was valid, but this wallet already backs another member here.',
  raced:
    'Your signature was valid, but another account proved this wallet after your link was made, so nothing was changed. If the wallet is yours, run /verify again and sign the new link.',
  not_enabled: 'Your signature was valid, but role gating was switched off in this server meanwhile.',
  invalid_identity: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  lookup_failed: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  not_found: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  no_address: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
};

/** The subset of a pino logger the server uses. */
export type VerifyServerLogger = PageLogger;

export interface VerifyServerOptions {
  port: number;
  /** Default: all interfaces (the page is public, usually behind a TLS reverse proxy). */
  host?: string;
  /** The OAuth-state methods are used only with `oauth`. */
  store: NonceStore & Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'>;
  siwe: SiweConfig;
  /** Called once per successful verification, after the nonce was consumed; may still refuse the link. */
  onVerified: (result: { record: NonceRecord; address: string }) => Promise<SignatureLinkResult>;
  logger?: VerifyServerLogger;
  /** Refused signatures per challenge before it is burned. Default 10. */
  maxFailuresPerChallenge?: number;
  /** Refused signatures per client address in `failureWindowMs` before it is turned away. Default 30. */
  maxFailuresPerClient?: number;
  /** Default 10 minutes. */
  failureWindowMs?: number;
  /** Discord sign-ins a client address may start in `failureWindowMs` (each stores a state). Default 30. */
  maxSignInsPerClient?: number;
  /**
   * With DISCORD_CLIENT_SECRET: a link only opens after signing in with Discord as the account it was
   * made for (`/oauth/callback` below PUBLIC_URL is the redirect URI).
   */
  oauth?: DiscordOAuthConfig;
  /**
   * With LINKED_ROLES_ENABLED: the Linked Roles verification URL, `/linked-role` below PUBLIC_URL; when
   * its `oauth.publicKey` is set, also the Webhook Events URL, `/discord/events`.
   */
  linkedRoles?: LinkedRolePagesSetup;
}

export interface VerifyServer {
  /** Where the server listens (not the public URL). */
  url: string;
  port: number;
  close(): Promise<void>;
}

const PAGE_ROUTE = /^\/verify\/([^/]+)$/;
const MESSAGE_ROUTE = /^\/verify\/([^/]+)\/message$/;
const NO_LOG: VerifyServerLogger = { info() {}, warn() {}, error() {} };

/** Starts the verification server on node:http; resolves once it listens. */
export async function startVerifyServer(opts: VerifyServerOptions): Promise<VerifyServer> {
  const log = opts.logger ?? NO_LOG;
  const windowMs = opts.failureWindowMs ?? 10 * 60_000;
  const failures = new FailureWindow(opts.maxFailuresPerClient ?? 30, windowMs);
  const signIns = new FailureWindow(opts.maxSignInsPerClient ?? 30, windowMs);
  const events = webhookEvents(opts, log);
  const server = createServer((req, res) => {
    const handled =
      events && safePath(req) === WEBHOOK_EVENTS_PATH
        ? events.handle(req, res)
        : handle(req, res, opts, log, failures, signIns);
    handled.catch((error: unknown) => {
      log.error(
        { err: errorSummary(error), method: req.method, route: routeName(safePath(req)) },
        'verify server request failed',
      );
      if (!res.headersSent) sendJson(res, 500, { ok: false, message: 'Something went wrong. Try again.' });
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host ?? '0.0.0.0', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const shownHost = address === '0.0.0.0' || address === '::' ? '127.0.0.1' : address;
  log.info({ port }, 'verify server listening');
  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

async function handle(
  req: IncomingMessage,
  res: ServerResponse,
  opts: VerifyServerOptions,
  log: VerifyServerLogger,
  failures: FailureWindow,
  signIns: FailureWindow,
): Promise<void> {
  const path = safePath(req);
  const method = req.method ?? 'GET';
  const readOnly = method === 'GET' || method === 'HEAD';
  const signIn = signInOptions(opts, log);

  if (path === SIGN_IN_CALLBACK_PATH && signIn) {
    if (!readOnly) return methodNotAllowed(res, 'GET, HEAD');
    return finishSignIn(signIn, req, res);
  }

  if (opts.linkedRoles && path.startsWith('/linked-role')) {
    const now = opts.siwe.now ?? Date.now;
    const linked = {
      ...opts.linkedRoles,
      store: opts.store,
      siwe: opts.siwe,
      logger: log,
      now,
      failures,
      maxFailuresPerChallenge: maxPerChallenge(opts),
    };
    // Each start stores an OAuth2 state: the same per-client limit as the signing page's sign-ins.
    if (path === '/linked-role' && readOnly) {
      const client = req.socket.remoteAddress ?? 'unknown';
      if (signIns.blocked(client, now())) {
        res.setHeader('retry-after', '600');
        return sendJson(res, 429, {
          ok: false,
          message: 'Too many sign-ins from this address. Wait a few minutes.',
        });
      }
      signIns.count(client, now());
    }
    if (await handleLinkedRole(linked, req, res, path)) return;
  }

  if (path === '/healthz') {
    if (!readOnly) return methodNotAllowed(res, 'GET, HEAD');
    return send(res, 200, 'text/plain; charset=utf-8', 'ok');
  }

  const messageMatch = MESSAGE_ROUTE.exec(path);
  if (messageMatch) {
    if (!readOnly) return methodNotAllowed(res, 'GET, HEAD');
    return sendChallengeMessage(
      signatureRoutes(opts, signIn, log, failures),
      req,
      res,
      messageMatch[1] ?? '',
    );
  }

  const pageMatch = PAGE_ROUTE.exec(path);
  if (pageMatch) {
    const nonce = pageMatch[1] ?? '';
    if (readOnly) return sendPage(req, res, opts, signIn, signIns, nonce);
    if (method === 'POST')
      return receiveSignature(signatureRoutes(opts, signIn, log, failures), req, res, nonce, (result) =>
        completeLink(opts, log, result),
      );
    return methodNotAllowed(res, 'GET, HEAD, POST');
  }

  return sendJson(res, 404, { ok: false, message: 'Not found.' });
}

/** With Linked Roles and DISCORD_PUBLIC_KEY: Discord's signed webhook events (a member's deauthorization). */
function webhookEvents(opts: VerifyServerOptions, log: VerifyServerLogger): WebhookEventReceiver | null {
  const linked = opts.linkedRoles;
  if (!linked?.oauth.publicKey) return null;
  return new WebhookEventReceiver({
    publicKey: linked.oauth.publicKey,
    applicationId: linked.oauth.clientId,
    service: linked.service,
    logger: log,
    now: opts.siwe.now ?? Date.now,
  });
}

function signInOptions(opts: VerifyServerOptions, log: VerifyServerLogger): VerifySignInOptions | null {
  if (!opts.oauth) return null;
  return {
    oauth: opts.oauth,
    store: opts.store,
    now: opts.siwe.now ?? Date.now,
    logger: log,
    maxFailuresPerChallenge: maxPerChallenge(opts),
  };
}

/** With the Discord sign-in on: the refusal for a browser that has not signed in as the link's account. */
function notSignedIn(signIn: VerifySignInOptions | null, req: IncomingMessage, record: NonceRecord): boolean {
  return signIn !== null && !hasSignedIn(signIn, req, record);
}

const SIGN_IN_FIRST = {
  ok: false,
  reason: 'sign_in',
  message: 'Sign in with Discord first: reload this page.',
};

async function sendPage(
  req: IncomingMessage,
  res: ServerResponse,
  opts: VerifyServerOptions,
  signIn: VerifySignInOptions | null,
  signIns: FailureWindow,
  nonce: string,
): Promise<void> {
  const challenge = await openChallenge({ ...opts, linkedRoles: false }, nonce);
  if (signIn && 'record' in challenge && notSignedIn(signIn, req, challenge.record)) {
    const client = req.socket.remoteAddress ?? 'unknown';
    const now = signIn.now();
    if (signIns.blocked(client, now)) {
      res.setHeader('retry-after', '600');
      return sendHtml(res, 429, (cspNonce) =>
        renderVerifyPage({ kind: 'sign_in_failed', reason: 'too_many', retryUrl: null }, cspNonce),
      );
    }
    signIns.count(client, now);
    return startSignIn(signIn, res, challenge.record);
  }
  const state: VerifyPageState =
    'record' in challenge
      ? { kind: 'ready', record: challenge.record }
      : { kind: challenge.refusal === 'used' ? 'used' : 'expired' };
  sendHtml(res, 200, (cspNonce) => renderVerifyPage(state, cspNonce));
}

/** The shared challenge routes, for `/verify` challenges, behind the Discord sign-in when it is on. */
function signatureRoutes(
  opts: VerifyServerOptions,
  signIn: VerifySignInOptions | null,
  log: VerifyServerLogger,
  failures: FailureWindow,
): SignatureRoutesOptions {
  return {
    store: opts.store,
    siwe: opts.siwe,
    log,
    failures,
    maxFailuresPerChallenge: maxPerChallenge(opts),
    linkedRoles: false,
    refuse: (req, record) =>
      notSignedIn(signIn, req, record) ? { status: 401, body: SIGN_IN_FIRST } : undefined,
  };
}

/** After a valid signature: the link, or why it was refused although the signature was valid. */
async function completeLink(
  opts: VerifyServerOptions,
  log: VerifyServerLogger,
  result: { record: NonceRecord; address: string },
): Promise<JsonAnswer> {
  const linked = await opts.onVerified(result);
  if (!linked.ok) {
    log.info(
      { nonce: result.record.nonce.slice(0, 8), refusal: linked.refusal.code },
      'valid signature, link refused',
    );
    return {
      status: 409,
      body: { ok: false, reason: linked.refusal.code, message: LINK_REFUSALS[linked.refusal.code] },
    };
  }
  return {
    status: 200,
    body: {
      ok: true,
      message: linked.queued
        ? 'Signature accepted. The bot is still linking it; your roles will update in Discord shortly, and /whoami shows the result.'
        : 'Verified. You can close this tab; your roles will update in Discord.',
    },
  };
}

function maxPerChallenge(opts: VerifyServerOptions): number {
  return opts.maxFailuresPerChallenge ?? 10;
}

function methodNotAllowed(res: ServerResponse, allow: string): void {
  res.setHeader('allow', allow);
  sendJson(res, 405, { ok: false, message: 'Method not allowed.' });
}

function safePath(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const queryStart = url.indexOf('?');
  return queryStart === -1 ? url : url.slice(0, queryStart);
}

/** The route without its nonce, for logs. */
function routeName(path: string): string {
  if (MESSAGE_ROUTE.test(path)) return '/verify/:nonce/message';
  if (PAGE_ROUTE.test(path)) return '/verify/:nonce';
  return path.slice(0, 64);
}
