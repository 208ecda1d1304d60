/**
 * `PUBLIC_URL/linked-role`, the app's Linked Roles verification URL: Discord sign-in with
 * `identify role_connections.write`, then the member proves an identity, by its own record (its
 * `discord` link or `com.discord` text record names their Discord username) or by a wallet signature on
 * the same page (`linkedRoleSigning.ts`), then the metadata is written. The session between the steps is
 * the sealed cookie of `linkedRoleSession.ts`; nothing is stored before a proof.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  newOAuthState,
  oauthErrorSummary,
  safeEqual,
} from '../../discord/oauth.ts';
import type { ConnectOutcome, LinkedRoleService } from '../../gating/linkedRoles/linkedRoleService.ts';
import { recordNamesDiscordUser } from '../../gating/proofs/recordProof.ts';
import type { NonceStore, SiweConfig } from '../../gating/proofs/siwe.ts';
import { type Evaluator, PROVE_READ_MAX_AGE_MS, resolvedAddressOf } from '../../gating/rules/evaluation.ts';
import type { GatingStore } from '../../store/types.ts';
import { InvalidIdentityError } from '../../web3bio/errors.ts';
import { type ParsedIdentity, parseIdentity } from '../../web3bio/identity.ts';
import { failed, type ProveProblem, sendLinkedRolePage } from '../pages/linkedRolePage.ts';
import { readBody, readCookie, redirect, setCookie } from '../responses.ts';
import type { FailureWindow, PageLogger } from '../signing/challengeRoutes.ts';
import {
  clearSession,
  cookieOptions,
  LINKED_ROLE_PATH,
  type LinkedRoleSession,
  readSession,
  SESSION_MS,
  writeSession,
} from './session.ts';
import { handleSigning, startSigning } from './signing.ts';

export { LINKED_ROLE_PATH };
export const LINKED_ROLE_CALLBACK_PATH = '/linked-role/callback';
const PROVE_PATH = '/linked-role/prove';
const DONE_PATH = '/linked-role/done';
const STATE_COOKIE = 'linked_role_state';
const MAX_CODE_LENGTH = 512;
const MAX_FORM_BYTES = 2_048;

/** What the bot gives the pages when Linked Roles are on. */
export interface LinkedRolePagesSetup {
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes: seals the session cookie and the stored tokens. */
  key: Buffer;
  evaluator: Pick<Evaluator, 'readRecord'>;
  service: LinkedRoleService;
}

export interface LinkedRolePagesOptions extends LinkedRolePagesSetup {
  store: Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'> & NonceStore;
  siwe: SiweConfig;
  logger: PageLogger;
  now: () => number;
  /** Refused signatures per client address (shared with the signing page). */
  failures: FailureWindow;
  maxFailuresPerChallenge: number;
}

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
  else if (path === DONE_PATH && method === 'GET') await done(o, req, res);
  else return handleSigning(o, req, res, path);
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
    return failed(o.oauth.publicUrl, res, 400, 'bad_state');
  }
  const now = o.now();
  const issued = await o.store.consumeOAuthState(hashOAuthState(state), now);
  setCookie(res, STATE_COOKIE, '', cookieOptions(o, LINKED_ROLE_CALLBACK_PATH, 0));
  if (issued?.purpose !== 'linked-role') {
    o.logger.warn(
      { route: LINKED_ROLE_CALLBACK_PATH },
      'linked role sign-in refused: unknown, used or expired state',
    );
    return failed(o.oauth.publicUrl, res, 400, 'bad_state');
  }
  if (query.get('error') !== null) {
    const denied = query.get('error') === 'access_denied';
    return failed(o.oauth.publicUrl, res, denied ? 200 : 502, denied ? 'denied' : 'failed');
  }
  const code = query.get('code') ?? '';
  if (code === '' || code.length > MAX_CODE_LENGTH) return failed(o.oauth.publicUrl, res, 400, 'failed');
  let session: LinkedRoleSession;
  try {
    const grant = await exchangeCode(o.oauth, {
      code,
      redirectPath: LINKED_ROLE_CALLBACK_PATH,
      needs: ['identify', 'role_connections.write'],
    });
    const user = await fetchCurrentUser(o.oauth, grant.accessToken);
    session = { userId: user.id, username: user.username, grant, until: now + SESSION_MS };
  } catch (error) {
    o.logger.warn({ err: oauthErrorSummary(error) }, 'linked role sign-in failed');
    return failed(o.oauth.publicUrl, res, 502, 'failed');
  }
  writeSession(o, res, session);
  await provePage(o, res, 200, session);
}

async function prove(o: LinkedRolePagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const form = await readForm(req);
  const session = readSession(o, req);
  if (!session) return failed(o.oauth.publicUrl, res, 401, 'expired');
  const input = form?.get('identity')?.trim() ?? '';
  let parsed: ParsedIdentity;
  try {
    parsed = parseIdentity(input);
  } catch (error) {
    if (!(error instanceof InvalidIdentityError)) throw error;
    return provePage(o, res, 400, session, { problem: 'invalid', identity: input.slice(0, 200) });
  }
  if (form?.get('proof') === 'signature') {
    const problem = await startSigning(o, res, session, parsed);
    if (problem !== undefined)
      await provePage(o, res, PROBLEM_STATUS[problem], session, { problem, identity: parsed.identity });
    return;
  }
  const retry = (problem: ProveProblem) =>
    provePage(o, res, PROBLEM_STATUS[problem], session, { problem, identity: parsed.identity });
  const read = await o.evaluator.readRecord(parsed, { maxAgeMs: PROVE_READ_MAX_AGE_MS });
  if (read.failed) return retry('lookup_failed');
  if (!recordNamesDiscordUser(read, { username: session.username })) {
    o.logger.info({ userId: session.userId }, 'linked role: the record does not name the member');
    return retry('not_named');
  }
  let outcome: ConnectOutcome;
  try {
    outcome = await o.service.connect(session.userId, session.grant, {
      identity: parsed.identity,
      platform: String(parsed.platform),
      address: resolvedAddressOf(read),
      proofMethod: 'record',
    });
  } catch (error) {
    o.logger.warn({ userId: session.userId, err: oauthErrorSummary(error) }, 'linked role write failed');
    return failed(o.oauth.publicUrl, res, 502, 'failed');
  }
  if (outcome.kind === 'lookup_failed') return retry('lookup_failed');
  if (outcome.kind === 'refused') return retry(outcome.refusal.code);
  // With credentials that do not count, the session stays so the page's "sign with that wallet" works.
  if (outcome.kind === 'pending' || outcome.uncounted.length === 0) clearSession(o, res);
  if (outcome.kind === 'pending') return failed(o.oauth.publicUrl, res, 202, 'write_pending');
  sendLinkedRolePage(res, 200, {
    kind: 'connected',
    identity: parsed.identity,
    proof: 'record',
    metadata: outcome.connection.metadata,
    uncounted: outcome.uncounted,
  });
}

/** After a signature: what Discord now holds for the member (once; the session ends here). */
async function done(o: LinkedRolePagesOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const session = readSession(o, req);
  const status = session?.connected ? await o.service.status(session.userId) : undefined;
  if (!session?.connected || !status || status.identity !== session.connected.identity)
    return failed(o.oauth.publicUrl, res, 401, 'expired');
  clearSession(o, res);
  sendLinkedRolePage(res, 200, {
    kind: 'connected',
    identity: status.identity,
    proof: session.connected.proof,
    metadata: status.metadata ?? {},
  });
}

const PROBLEM_STATUS: Record<ProveProblem, number> = {
  not_named: 403,
  lookup_failed: 502,
  invalid: 400,
  not_found: 404,
  no_address: 422,
  address_taken: 409,
  raced: 409,
};

/** The page where the member chooses a proof, with their connection now (a stale one says so). */
async function provePage(
  o: LinkedRolePagesOptions,
  res: ServerResponse,
  status: number,
  session: LinkedRoleSession,
  retry: { problem: ProveProblem; identity: string } | Record<string, never> = {},
): Promise<void> {
  const current = await o.service.status(session.userId);
  sendLinkedRolePage(res, status, {
    kind: 'prove',
    username: session.username,
    ...retry,
    ...(current
      ? {
          current: {
            identity: current.identity,
            stale: current.stale,
            releasedReason: current.releasedReason,
          },
        }
      : {}),
  });
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | undefined> {
  const body = await readBody(req, MAX_FORM_BYTES);
  return body === undefined ? undefined : new URLSearchParams(body.toString('utf8'));
}
