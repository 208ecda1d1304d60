/**
 * The HTTP server behind `PUBLIC_URL`: serves the signing page, hands out the exact message to sign,
 * and verifies signatures. Every response carries strict security headers and is never cached.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GatingStore } from '../store/types.ts';
import type { DiscordOAuthConfig } from './discordOAuth.ts';
import { send, sendHtml, sendJson } from './httpResponses.ts';
import { handleLinkedRole, type LinkedRolePagesOptions } from './linkedRolePages.ts';
import {
  buildChallengeMessage,
  isChallengeNonce,
  isSolanaChallenge,
  type NonceRecord,
  type NonceStore,
  type SiweConfig,
  siwsFields,
  type VerifyFailureReason,
  verifyChallenge,
  verifyFailureMessage,
} from './siwe.ts';
import type { SignatureLinkResult, VerifyRefusal } from './types.ts';
import { renderVerifyPage, type VerifyPageState } from './verifyPage.ts';
import {
  finishSignIn,
  hasSignedIn,
  SIGN_IN_CALLBACK_PATH,
  startSignIn,
  type VerifySignInOptions,
} from './verifySignIn.ts';

/** Refusals the store counts against a challenge: a wrong or forged signature, not a page reload. */
const COUNTED_FAILURES = new Set<VerifyFailureReason>([
  'tampered',
  'wrong_domain',
  'wrong_address',
  'bad_signature',
  'malformed',
]);

const LINK_REFUSALS: Record<VerifyRefusal['code'], string> = {
  too_many_links:
    'Your signature was valid, but you already have the most verified identities allowed in this server. Remove one with /unverify, then run /verify again.',
  address_taken: 'Your signature was valid, but this wallet already backs another member here.',
  not_enabled: 'Your signature was valid, but role gating was switched off in this server meanwhile.',
  invalid_identity: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  lookup_failed: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  not_found: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
  no_address: 'Your signature was valid, but the identity can no longer be linked. Run /verify again.',
};

/** Counts refused attempts per client address in a sliding window (in memory, per process). */
class FailureWindow {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #hits = new Map<string, number[]>();
  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }
  blocked(client: string, now: number): boolean {
    return this.#recent(client, now).length >= this.#limit;
  }
  count(client: string, now: number): void {
    const hits = this.#recent(client, now);
    hits.push(now);
    this.#hits.set(client, hits);
    if (this.#hits.size > 10_000) this.#hits.delete(this.#hits.keys().next().value ?? '');
  }
  #recent(client: string, now: number): number[] {
    return (this.#hits.get(client) ?? []).filter((t) => now - t < this.#windowMs);
  }
}

/** The subset of a pino logger the server uses. */
export interface VerifyServerLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

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
  /** With LINKED_ROLES_ENABLED: the Linked Roles verification URL, `/linked-role` below PUBLIC_URL. */
  linkedRoles?: Omit<LinkedRolePagesOptions, 'logger' | 'now' | 'store'>;
}

export interface VerifyServer {
  /** Where the server listens (not the public URL). */
  url: string;
  port: number;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 8 * 1024;
const PAGE_ROUTE = /^\/verify\/([^/]+)$/;
const MESSAGE_ROUTE = /^\/verify\/([^/]+)\/message$/;
const SIGNATURE_SHAPE = /^0x[0-9a-fA-F]+$/;

const STATUS_BY_REASON: Record<VerifyFailureReason, number> = {
  unknown_nonce: 404,
  expired: 410,
  used: 410,
  malformed: 400,
  tampered: 422,
  wrong_domain: 422,
  wrong_address: 422,
  bad_signature: 422,
};

const NO_LOG: VerifyServerLogger = { info() {}, warn() {}, error() {} };

/** Starts the verification server on node:http; resolves once it listens. */
export async function startVerifyServer(opts: VerifyServerOptions): Promise<VerifyServer> {
  const log = opts.logger ?? NO_LOG;
  const windowMs = opts.failureWindowMs ?? 10 * 60_000;
  const failures = new FailureWindow(opts.maxFailuresPerClient ?? 30, windowMs);
  const signIns = new FailureWindow(opts.maxSignInsPerClient ?? 30, windowMs);
  const server = createServer((req, res) => {
    handle(req, res, opts, log, failures, signIns).catch((error: unknown) => {
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
    const linked = { ...opts.linkedRoles, store: opts.store, logger: log, now };
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
    return sendMessage(req, res, opts, signIn, messageMatch[1] ?? '');
  }

  const pageMatch = PAGE_ROUTE.exec(path);
  if (pageMatch) {
    const nonce = pageMatch[1] ?? '';
    if (readOnly) return sendPage(req, res, opts, signIn, signIns, nonce);
    if (method === 'POST') return receiveSignature(req, res, opts, signIn, log, failures, nonce);
    return methodNotAllowed(res, 'GET, HEAD, POST');
  }

  return sendJson(res, 404, { ok: false, message: 'Not found.' });
}

/** The challenge behind a link if it can still be signed, else why not. */
async function openChallenge(
  opts: VerifyServerOptions,
  nonce: string,
): Promise<{ record: NonceRecord } | { refusal: 'unknown_nonce' | 'used' | 'expired' }> {
  const record = isChallengeNonce(nonce) ? await opts.store.getNonce(nonce) : undefined;
  if (!record) return { refusal: 'unknown_nonce' };
  if (record.usedAt !== null) return { refusal: 'used' };
  if (record.expiresAt <= (opts.siwe.now ?? Date.now)()) return { refusal: 'expired' };
  return { record };
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
  const challenge = await openChallenge(opts, nonce);
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

async function sendMessage(
  req: IncomingMessage,
  res: ServerResponse,
  opts: VerifyServerOptions,
  signIn: VerifySignInOptions | null,
  nonce: string,
): Promise<void> {
  const challenge = await openChallenge(opts, nonce);
  if (!('record' in challenge)) return sendFailure(res, challenge.refusal);
  if (notSignedIn(signIn, req, challenge.record)) return sendJson(res, 401, SIGN_IN_FIRST);
  const record = challenge.record;
  sendJson(res, 200, {
    message: buildChallengeMessage(opts.siwe, record),
    ...(isSolanaChallenge(record) ? { signIn: siwsFields(opts.siwe, record) } : {}),
  });
}

async function receiveSignature(
  req: IncomingMessage,
  res: ServerResponse,
  opts: VerifyServerOptions,
  signIn: VerifySignInOptions | null,
  log: VerifyServerLogger,
  failures: FailureWindow,
  nonce: string,
): Promise<void> {
  // Cheap checks first: the client's refusal count and the nonce's shape, before any body or RPC work.
  const client = req.socket.remoteAddress ?? 'unknown';
  const now = (opts.siwe.now ?? Date.now)();
  if (failures.blocked(client, now)) {
    req.resume();
    res.setHeader('retry-after', '600');
    return sendJson(res, 429, {
      ok: false,
      reason: 'too_many_attempts',
      message: 'Too many refused signatures from this address. Wait a few minutes, then try again.',
    });
  }
  if (!isChallengeNonce(nonce)) {
    req.resume();
    return sendFailure(res, 'unknown_nonce');
  }
  const contentType = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    req.resume();
    return sendJson(res, 415, { ok: false, reason: 'malformed', message: 'Send JSON.' });
  }
  const raw = await readBody(req, MAX_BODY_BYTES);
  if (raw === undefined) {
    res.setHeader('connection', 'close');
    return sendJson(res, 413, { ok: false, reason: 'malformed', message: 'The request is too large.' });
  }
  const body = parseSignatureBody(raw);
  if (!body) return sendFailure(res, 'malformed');
  if (signIn) {
    const open = await openChallenge(opts, nonce);
    if ('record' in open && notSignedIn(signIn, req, open.record)) {
      log.warn({ nonce: nonce.slice(0, 8), client }, 'signature sent without the Discord sign-in: refused');
      return sendJson(res, 401, SIGN_IN_FIRST);
    }
  }

  const outcome = await verifyChallenge(opts.store, opts.siwe, { nonce, ...body });
  const logFields = { nonce: nonce.slice(0, 8), signature: shorten(body.signature) };
  if (!outcome.ok) {
    log.info({ ...logFields, reason: outcome.reason, client }, 'wallet signature refused');
    if (COUNTED_FAILURES.has(outcome.reason)) {
      failures.count(client, now);
      const attempts = await opts.store.countFailedAttempt(nonce, maxPerChallenge(opts), now);
      if (attempts !== undefined && attempts >= maxPerChallenge(opts)) {
        log.warn({ ...logFields, attempts }, 'challenge burned after too many refused signatures');
        return sendJson(res, 410, {
          ok: false,
          reason: 'used',
          message: `${outcome.message} This link is now used up after ${attempts} refused signatures: run /verify in Discord for a new one.`,
        });
      }
    }
    return sendJson(res, STATUS_BY_REASON[outcome.reason], {
      ok: false,
      reason: outcome.reason,
      message: outcome.message,
    });
  }

  const { record, address } = outcome;
  log.info({ ...logFields, guildId: record.guildId, userId: record.userId }, 'wallet signature verified');
  let linked: SignatureLinkResult;
  try {
    linked = await opts.onVerified({ record, address });
  } catch (error) {
    log.error({ ...logFields, err: errorSummary(error) }, 'onVerified failed after a valid signature');
    return sendJson(res, 500, {
      ok: false,
      reason: 'internal',
      message:
        'Your signature was valid, but linking failed on our side. Run /verify in Discord to try again.',
    });
  }
  if (!linked.ok) {
    log.info({ ...logFields, refusal: linked.refusal.code }, 'valid signature, link refused');
    return sendJson(res, 409, {
      ok: false,
      reason: linked.refusal.code,
      message: LINK_REFUSALS[linked.refusal.code],
    });
  }
  sendJson(res, 200, {
    ok: true,
    message: linked.queued
      ? 'Signature accepted. The bot is still linking it; your roles will update in Discord shortly, and /whoami shows the result.'
      : 'Verified. You can close this tab; your roles will update in Discord.',
  });
}

function maxPerChallenge(opts: VerifyServerOptions): number {
  return opts.maxFailuresPerChallenge ?? 10;
}

function parseSignatureBody(raw: string): { signature: `0x${string}`; message?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { signature, message } = parsed as Record<string, unknown>;
  if (typeof signature !== 'string' || !SIGNATURE_SHAPE.test(signature)) return undefined;
  if (message !== undefined && typeof message !== 'string') return undefined;
  return message === undefined
    ? { signature: signature as `0x${string}` }
    : { signature: signature as `0x${string}`, message };
}

/** The body as text, or undefined when it exceeds `limit` bytes (reading stops there). */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > limit) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendFailure(res: ServerResponse, reason: VerifyFailureReason): void {
  sendJson(res, STATUS_BY_REASON[reason], { ok: false, reason, message: verifyFailureMessage(reason) });
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

/** Enough of a signature to correlate log lines, never the whole thing. */
function shorten(signature: string): string {
  return `${signature.slice(0, 10)}…(${signature.length} chars)`;
}

function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error
    ? { name: error.name, message: error.message.slice(0, 200) }
    : { name: 'unknown', message: String(error).slice(0, 200) };
}
