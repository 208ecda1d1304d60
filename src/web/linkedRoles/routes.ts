/**
 * `PUBLIC_URL/linked-role`, the app's Linked Roles verification URL: Discord sign-in with
 * `identify role_connections.write`, then the member proves an identity, by its own record (its
 * `discord` link or `com.discord` text record names their Discord username) or by a wallet signature on
 * the same page (`linkedRoleSigning.ts`), then the metadata is written. The session between the steps is
 * the sealed cookie of `linkedRoleSession.ts`; nothing is stored before a proof.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authorizeUrl,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  newOAuthState,
  oauthErrorSummary,
  safeEqual,
} from '../../discord/oauth.ts';
import type { ConnectOutcome } from '../../gating/linkedRoles/linkedRoleService.ts';
import { fidIdentity, fidOf } from '../../gating/proofs/farcasterSignIn.ts';
import { recordNamesDiscordUser } from '../../gating/proofs/recordProof.ts';
import { resolvedAddressOf } from '../../gating/rules/recordReads.ts';
import { t } from '../../i18n/index.ts';
import { InvalidIdentityError } from '../../web3bio/errors.ts';
import { type ParsedIdentity, parseIdentity } from '../../web3bio/identity.ts';
import { requestLocale } from '../locale.ts';
import {
  failed,
  type LinkedRolePage,
  type ProveProblem,
  sendLinkedRolePage,
} from '../pages/linkedRolePage.ts';
import { cookieOptions, redirect, setCookie } from '../responses.ts';
import { registerLinkedRoleFarcaster, startFarcaster } from './farcaster.ts';
import { type LinkedRolePagesOptions, proofFreshness } from './options.ts';
import {
  clearSession,
  LINKED_ROLE_PATH,
  type LinkedRoleSession,
  readSession,
  SESSION_MS,
  sessionLocale,
  writeSession,
} from './session.ts';
import { registerLinkedRoleSigning, startSigning } from './signing.ts';

export { LINKED_ROLE_PATH };
export const LINKED_ROLE_CALLBACK_PATH = '/linked-role/callback';
const PROVE_PATH = '/linked-role/prove';
const DONE_PATH = '/linked-role/done';
const STATE_COOKIE = 'linked_role_state';
const MAX_CODE_LENGTH = 512;
const MAX_FORM_BYTES = 2_048;

/** The Linked Roles routes: the start, Discord's return, the proof, the signature and the result. */
export function registerLinkedRoleRoutes(app: FastifyInstance, o: LinkedRolePagesOptions): void {
  app.get(LINKED_ROLE_PATH, async (request, reply) => {
    // Each start stores an OAuth2 state: limited per client, like the signing page's sign-ins.
    const wait = await o.limits.signIns(request);
    if (wait === undefined) return start(o, reply);
    reply.header('retry-after', String(wait));
    return reply
      .code(429)
      .send({ ok: false, message: t(requestLocale(request), 'web.linkedRole.tooManySignIns') });
  });
  app.get(LINKED_ROLE_CALLBACK_PATH, (request, reply) => callback(o, request, reply));
  app.post(PROVE_PATH, { bodyLimit: MAX_FORM_BYTES }, (request, reply) => prove(o, request, reply));
  app.get(DONE_PATH, (request, reply) => done(o, request, reply));
  registerLinkedRoleSigning(app, o);
  if (o.farcaster) registerLinkedRoleFarcaster(app, o, o.farcaster);
}

async function start(o: LinkedRolePagesOptions, reply: FastifyReply): Promise<FastifyReply> {
  const { state, hash } = newOAuthState();
  const now = o.now();
  await o.store.createOAuthState(
    { stateHash: hash, purpose: 'linked-role', nonce: null, expiresAt: now + SESSION_MS },
    now,
  );
  setCookie(
    reply,
    STATE_COOKIE,
    state,
    cookieOptions(o.oauth.publicUrl, LINKED_ROLE_CALLBACK_PATH, SESSION_MS / 1_000),
  );
  return redirect(
    reply,
    authorizeUrl(o.oauth, {
      scopes: ['identify', 'role_connections.write'],
      state,
      redirectPath: LINKED_ROLE_CALLBACK_PATH,
    }),
  );
}

async function callback(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const query = new URL(request.url, 'http://callback.invalid').searchParams;
  const state = query.get('state') ?? '';
  const browserState = request.cookies[STATE_COOKIE];
  const locale = requestLocale(request);
  if (!isOAuthState(state) || !browserState || !safeEqual(browserState, state)) {
    o.logger.warn(
      { route: LINKED_ROLE_CALLBACK_PATH },
      'linked role sign-in refused: state not from this browser',
    );
    return failed(o.oauth.publicUrl, reply, 400, 'bad_state', locale);
  }
  const now = o.now();
  const issued = await o.store.consumeOAuthState(hashOAuthState(state), now);
  setCookie(reply, STATE_COOKIE, '', cookieOptions(o.oauth.publicUrl, LINKED_ROLE_CALLBACK_PATH, 0));
  if (issued?.purpose !== 'linked-role') {
    o.logger.warn(
      { route: LINKED_ROLE_CALLBACK_PATH },
      'linked role sign-in refused: unknown, used or expired state',
    );
    return failed(o.oauth.publicUrl, reply, 400, 'bad_state', locale);
  }
  if (query.get('error') !== null) {
    const denied = query.get('error') === 'access_denied';
    return failed(o.oauth.publicUrl, reply, denied ? 200 : 502, denied ? 'denied' : 'failed', locale);
  }
  const code = query.get('code') ?? '';
  if (code === '' || code.length > MAX_CODE_LENGTH)
    return failed(o.oauth.publicUrl, reply, 400, 'failed', locale);
  let session: LinkedRoleSession;
  try {
    const grant = await exchangeCode(o.oauth, {
      code,
      redirectPath: LINKED_ROLE_CALLBACK_PATH,
      needs: ['identify', 'role_connections.write'],
    });
    const user = await fetchCurrentUser(o.oauth, grant.accessToken);
    session = {
      userId: user.id,
      username: user.username,
      ...(user.locale ? { locale: user.locale } : {}),
      grant,
      until: now + SESSION_MS,
    };
  } catch (error) {
    o.logger.warn({ err: oauthErrorSummary(error) }, 'linked role sign-in failed');
    return failed(o.oauth.publicUrl, reply, 502, 'failed', locale);
  }
  writeSession(o, reply, session);
  return provePage(o, request, reply, 200, session);
}

async function prove(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const session = readSession(o, request);
  const locale = sessionLocale(request, session);
  if (!session) return failed(o.oauth.publicUrl, reply, 401, 'expired', locale);
  const wait = await o.limits.proves(request, session.userId);
  if (wait !== undefined) {
    reply.header('retry-after', String(wait));
    return provePage(o, request, reply, 429, session, {
      problem: 'slow_down',
      identity: '',
      waitSeconds: wait,
    });
  }
  const form = formOf(request.body);
  const input = form.identity?.trim() ?? '';
  let parsed: ParsedIdentity;
  try {
    parsed = parseIdentity(input);
  } catch (error) {
    if (!(error instanceof InvalidIdentityError)) throw error;
    return provePage(o, request, reply, 400, session, { problem: 'invalid', identity: input.slice(0, 200) });
  }
  if (form.proof === 'farcaster' && o.farcaster) {
    const problem = await startFarcaster(o, o.farcaster, request, reply, session, parsed);
    if (problem === undefined) return reply;
    return provePage(o, request, reply, PROBLEM_STATUS[problem], session, {
      problem,
      identity: parsed.identity,
    });
  }
  if (form.proof === 'signature') {
    const problem = await startSigning(o, request, reply, session, parsed);
    if (problem === undefined) return reply;
    return provePage(o, request, reply, PROBLEM_STATUS[problem], session, {
      problem,
      identity: parsed.identity,
    });
  }
  const retry = (problem: ProveProblem) =>
    provePage(o, request, reply, PROBLEM_STATUS[problem], session, { problem, identity: parsed.identity });
  const read = await o.evaluator.readRecord(parsed, await proofFreshness(o, request, session.userId));
  if (read.failed) return retry('lookup_failed');
  if (!recordNamesDiscordUser(read, { username: session.username })) {
    o.logger.info({ userId: session.userId }, 'linked role: the record does not name the member');
    return retry('not_named');
  }
  let outcome: ConnectOutcome;
  try {
    // A Farcaster name's record claims its FID too: one Farcaster account, one Discord account.
    const fid =
      parsed.kind === 'farcaster' || parsed.kind === 'farcaster-fid'
        ? fidOf(read.profiles.find((p) => p.platform === 'farcaster')?.social?.uid)
        : null;
    outcome = await o.service.connect(session.userId, session.grant, {
      identity: parsed.identity,
      platform: String(parsed.platform),
      address: resolvedAddressOf(read),
      proofMethod: 'record',
      ...(fid === null ? {} : { aliases: [fidIdentity(fid)] }),
    });
  } catch (error) {
    o.logger.warn({ userId: session.userId, err: oauthErrorSummary(error) }, 'linked role write failed');
    return failed(o.oauth.publicUrl, reply, 502, 'failed', locale);
  }
  if (outcome.kind === 'lookup_failed') return retry('lookup_failed');
  if (outcome.kind === 'refused') return retry(outcome.refusal.code);
  // With credentials that do not count, the session stays so the page's "sign with that wallet" works.
  if (outcome.kind === 'pending' || outcome.uncounted.length === 0) clearSession(o, reply);
  if (outcome.kind === 'pending') return failed(o.oauth.publicUrl, reply, 202, 'write_pending', locale);
  return sendLinkedRolePage(
    reply,
    200,
    {
      kind: 'connected',
      identity: parsed.identity,
      proof: 'record',
      metadata: outcome.connection.metadata,
      uncounted: outcome.uncounted,
    },
    locale,
  );
}

/** After a signature: what Discord now holds for the member (once; the session ends here). */
async function done(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const session = readSession(o, request);
  const locale = sessionLocale(request, session);
  const status = session?.connected ? await o.service.status(session.userId) : undefined;
  if (!session?.connected || !status || status.identity !== session.connected.identity)
    return failed(o.oauth.publicUrl, reply, 401, 'expired', locale);
  clearSession(o, reply);
  return sendLinkedRolePage(
    reply,
    200,
    {
      kind: 'connected',
      identity: status.identity,
      proof: session.connected.proof,
      metadata: status.metadata ?? {},
    },
    locale,
  );
}

const PROBLEM_STATUS: Record<ProveProblem, number> = {
  not_named: 403,
  lookup_failed: 502,
  invalid: 400,
  not_found: 404,
  no_address: 422,
  address_taken: 409,
  raced: 409,
  fid_taken: 409,
  slow_down: 429,
  not_farcaster: 422,
};

/** The page where the member chooses a proof, with their connection now (a stale one says so). */
async function provePage(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  session: LinkedRoleSession,
  retry: { problem: ProveProblem; identity: string; waitSeconds?: number } | Record<string, never> = {},
): Promise<FastifyReply> {
  const current = await o.service.status(session.userId);
  const page: LinkedRolePage = {
    kind: 'prove',
    username: session.username,
    ...(o.farcaster ? { farcaster: true } : {}),
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
  };
  return sendLinkedRolePage(reply, status, page, sessionLocale(request, session));
}

/** The form's fields (`identity`, `proof`) as text; anything else the body holds is ignored. */
function formOf(body: unknown): { identity?: string; proof?: string } {
  if (typeof body !== 'object' || body === null) return {};
  const { identity, proof } = body as Record<string, unknown>;
  return {
    ...(typeof identity === 'string' ? { identity } : {}),
    ...(typeof proof === 'string' ? { proof } : {}),
  };
}
