/**
 * `PUBLIC_URL/linked-role`, the app's Linked Roles verification URL: Discord sign-in with
 * `identify role_connections.write`, then the member proves an identity by its own record (its
 * `discord` link or `com.discord` text record names their Discord username), then the metadata is
 * written. Between the sign-in and the proof the browser holds the grant sealed with
 * TOKEN_ENCRYPTION_KEY in an HttpOnly cookie scoped to these pages; nothing is stored before a proof.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GatingStore } from '../store/types.ts';
import { InvalidIdentityError } from '../web3bio/errors.ts';
import { parseIdentity } from '../web3bio/identity.ts';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  DiscordOAuthError,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  newOAuthState,
  safeEqual,
  type TokenGrant,
} from './discordOAuth.ts';
import { type Evaluator, resolvedAddressOf } from './evaluation.ts';
import { readCookie, redirect, sendHtml, setCookie } from './httpResponses.ts';
import type { LinkedRoleService } from './linkedRoleService.ts';
import { openToken, sealToken } from './linkedRoles.ts';
import { recordNamesDiscordUser } from './recordProof.ts';
import { escapeHtml } from './verifyPage.ts';
import type { VerifyServerLogger } from './verifyServer.ts';

export const LINKED_ROLE_PATH = '/linked-role';
export const LINKED_ROLE_CALLBACK_PATH = '/linked-role/callback';
const PROVE_PATH = '/linked-role/prove';
const STATE_COOKIE = 'linked_role_state';
const SESSION_COOKIE = 'linked_role_session';
const SESSION_CONTEXT = 'linked-role-session';
const SESSION_MS = 10 * 60_000;
const MAX_CODE_LENGTH = 512;
const MAX_FORM_BYTES = 2_048;

export interface LinkedRolePagesOptions {
  oauth: DiscordOAuthConfig;
  key: Buffer;
  store: Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'>;
  evaluator: Pick<Evaluator, 'readRecord'>;
  service: LinkedRoleService;
  logger: VerifyServerLogger;
  now: () => number;
}

interface Session {
  userId: string;
  username: string;
  grant: TokenGrant;
  until: number;
}

export type LinkedRolePage =
  | {
      kind: 'prove';
      username: string;
      problem?: 'not_named' | 'lookup_failed' | 'invalid';
      identity?: string;
    }
  | { kind: 'connected'; identity: string }
  | { kind: 'failed'; reason: 'denied' | 'bad_state' | 'failed' | 'expired' };

/** Handles the Linked Roles routes; false for any other path. */
export async function handleLinkedRole(
  o: LinkedRolePagesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
): Promise<boolean> {
  const method = req.method ?? 'GET';
  if (path === LINKED_ROLE_PATH && method === 'GET') await start(o, res);
  else if (path === LINKED_ROLE_CALLBACK_PATH && method === 'GET') await callback(o, req, res);
  else if (path === PROVE_PATH && method === 'POST') await prove(o, req, res);
  else return false;
  return true;
}

async function start(o: LinkedRolePagesOptions, res: ServerResponse): Promise<void> {
  const { state, hash } = newOAuthState();
  const now = o.now();
  await o.store.createOAuthState(
    { stateHash: hash, purpose: 'linked-role', nonce: null, expiresAt: now + SESSION_MS },
    now,
  );
  setCookie(res, STATE_COOKIE, state, cookieOptions(o, LINKED_ROLE_CALLBACK_PATH, SESSION_MS / 1_000));
  redirect(
    res,
    authorizeUrl(o.oauth, {
      scopes: ['identify', 'role_connections.write'],
      state,
      redirectPath: LINKED_ROLE_CALLBACK_PATH,
    }),
  );
}

async function callback(o: LinkedRolePagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const query = new URL(req.url ?? '/', 'http://callback.invalid').searchParams;
  const state = query.get('state') ?? '';
  const browserState = readCookie(req, STATE_COOKIE);
  if (!isOAuthState(state) || browserState === undefined || !safeEqual(browserState, state)) {
    o.logger.warn(
      { route: LINKED_ROLE_CALLBACK_PATH },
      'linked role sign-in refused: state not from this browser',
    );
    return page(res, 400, { kind: 'failed', reason: 'bad_state' });
  }
  const now = o.now();
  const issued = await o.store.consumeOAuthState(hashOAuthState(state), now);
  setCookie(res, STATE_COOKIE, '', cookieOptions(o, LINKED_ROLE_CALLBACK_PATH, 0));
  if (issued?.purpose !== 'linked-role') {
    o.logger.warn(
      { route: LINKED_ROLE_CALLBACK_PATH },
      'linked role sign-in refused: unknown, used or expired state',
    );
    return page(res, 400, { kind: 'failed', reason: 'bad_state' });
  }
  if (query.get('error') !== null) {
    const denied = query.get('error') === 'access_denied';
    return page(res, denied ? 200 : 502, { kind: 'failed', reason: denied ? 'denied' : 'failed' });
  }
  const code = query.get('code') ?? '';
  if (code === '' || code.length > MAX_CODE_LENGTH)
    return page(res, 400, { kind: 'failed', reason: 'failed' });
  let session: Session;
  try {
    const grant = await exchangeCode(o.oauth, {
      code,
      redirectPath: LINKED_ROLE_CALLBACK_PATH,
      needs: ['identify', 'role_connections.write'],
    });
    const user = await fetchCurrentUser(o.oauth, grant.accessToken);
    session = { userId: user.id, username: user.username, grant, until: now + SESSION_MS };
  } catch (error) {
    o.logger.warn({ err: oauthSummary(error) }, 'linked role sign-in failed');
    return page(res, 502, { kind: 'failed', reason: 'failed' });
  }
  setCookie(
    res,
    SESSION_COOKIE,
    sealToken(o.key, JSON.stringify(session), SESSION_CONTEXT),
    cookieOptions(o, LINKED_ROLE_PATH, SESSION_MS / 1_000),
  );
  page(res, 200, { kind: 'prove', username: session.username });
}

async function prove(o: LinkedRolePagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = await readForm(req);
  const session = openSession(o, readCookie(req, SESSION_COOKIE));
  if (!session) return page(res, 401, { kind: 'failed', reason: 'expired' });
  const input = raw?.get('identity')?.trim() ?? '';
  let parsed: ReturnType<typeof parseIdentity>;
  try {
    parsed = parseIdentity(input);
  } catch (error) {
    if (!(error instanceof InvalidIdentityError)) throw error;
    return page(res, 400, { kind: 'prove', username: session.username, problem: 'invalid', identity: input });
  }
  const retry = (problem: 'not_named' | 'lookup_failed') =>
    page(res, problem === 'lookup_failed' ? 502 : 403, {
      kind: 'prove',
      username: session.username,
      problem,
      identity: parsed.identity,
    });
  const read = await o.evaluator.readRecord(parsed, true);
  if (read.failed) return retry('lookup_failed');
  if (!recordNamesDiscordUser(read, { username: session.username })) {
    o.logger.info({ userId: session.userId }, 'linked role: the record does not name the member');
    return retry('not_named');
  }
  let outcome: 'written' | 'lookup_failed';
  try {
    outcome = await o.service.connect(session.userId, session.grant, {
      identity: parsed.identity,
      platform: String(parsed.platform),
      address: resolvedAddressOf(read),
    });
  } catch (error) {
    o.logger.warn({ userId: session.userId, err: oauthSummary(error) }, 'linked role write failed');
    return page(res, 502, { kind: 'failed', reason: 'failed' });
  }
  if (outcome === 'lookup_failed') return retry('lookup_failed');
  setCookie(res, SESSION_COOKIE, '', cookieOptions(o, LINKED_ROLE_PATH, 0));
  page(res, 200, { kind: 'connected', identity: parsed.identity });
}

function openSession(o: LinkedRolePagesOptions, sealed: string | undefined): Session | undefined {
  if (sealed === undefined) return undefined;
  const text = openToken(o.key, sealed, SESSION_CONTEXT);
  if (text === undefined) return undefined;
  const session = JSON.parse(text) as Session;
  return session.until > o.now() ? session : undefined;
}

function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_FORM_BYTES) chunks.push(chunk);
    });
    req.on('end', () =>
      resolve(
        size > MAX_FORM_BYTES ? undefined : new URLSearchParams(Buffer.concat(chunks).toString('utf8')),
      ),
    );
    req.on('error', reject);
  });
}

function cookieOptions(o: LinkedRolePagesOptions, path: string, maxAgeSeconds: number) {
  const base = new URL(o.oauth.publicUrl);
  return {
    path: `${base.pathname.replace(/\/+$/, '')}${path}`,
    maxAgeSeconds,
    secure: base.protocol === 'https:',
  };
}

function oauthSummary(error: unknown): object {
  return error instanceof DiscordOAuthError
    ? { kind: error.kind, status: error.status, message: error.message }
    : { kind: 'unexpected', message: error instanceof Error ? error.name : 'unknown' };
}

const PROBLEMS: Record<'not_named' | 'lookup_failed' | 'invalid', string> = {
  not_named:
    'That identity’s record does not name your Discord username. Add it as the identity’s Discord link (or the ENS text record com.discord), then try again.',
  lookup_failed: 'Web3.bio could not be reached just now. Nothing was changed; try again in a minute.',
  invalid: 'That is not an identity Web3.bio knows how to read (try a name such as alice.eth or an address).',
};

const FAILURES: Record<'denied' | 'bad_state' | 'failed' | 'expired', string> = {
  denied: 'The Discord sign-in was cancelled. Nothing was changed.',
  bad_state: 'This sign-in link was already used, has expired, or was started in another browser.',
  failed: 'Discord did not complete the request. Nothing was changed.',
  expired: 'The sign-in has expired.',
};

function page(res: ServerResponse, status: number, state: LinkedRolePage): void {
  sendHtml(res, status, (cspNonce) => renderLinkedRolePage(state, cspNonce), { formAction: 'self' });
}

/** The verification page for one state (every dynamic value escaped). */
export function renderLinkedRolePage(state: LinkedRolePage, cspNonce: string): string {
  // Every page sits one level below /linked-role, so this is the start page wherever PUBLIC_URL is mounted.
  const again = '<p><a href="../linked-role">Start again</a></p>';
  const body =
    state.kind === 'connected'
      ? `<h1>Connected</h1><p>Your Discord account is now linked to <strong>${escapeHtml(state.identity)}</strong>. Roles that need its credentials update in Discord; you can close this tab.</p>`
      : state.kind === 'failed'
        ? `<h1>Not connected</h1><p>${FAILURES[state.reason]}</p>${again}`
        : `<h1>Prove a web3 identity</h1>
<p>Signed in to Discord as <strong>@${escapeHtml(state.username)}</strong>. Enter an identity whose own record names this Discord username.</p>
${state.problem ? `<p role="alert">${PROBLEMS[state.problem]}</p>` : ''}
<form method="post" action="prove"><label>Identity <input name="identity" required maxlength="200" value="${escapeHtml(state.identity ?? '')}"></label> <button type="submit">Connect</button></form>`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Web3.bio Linked Roles</title><style nonce="${cspNonce}">body{font-family:system-ui,sans-serif;max-width:36rem;margin:3rem auto;padding:0 1rem}</style></head><body>${body}</body></html>`;
}
