/**
 * The wallet-signature proof on the Linked Roles page. The member types an identity (or an address),
 * the page makes a one-time challenge for its signer (a Sign-In with Ethereum or Solana message naming
 * the Discord account, for Linked Roles in every server) and opens the signing page on it: the same
 * page, script, message endpoint and verification as `/verify`'s. The challenge is bound to this
 * page's session: only the browser that asked for it, signed in as the account it names, can see or
 * sign it. A valid signature writes the metadata exactly as a record proof does.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DEFAULT_CHALLENGE_TTL_MS, LINKED_ROLES_SCOPE } from '../../gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord, signedIdentity } from '../../gating/proofs/siwe.ts';
import { signerAddressOf } from '../../gating/rules/recordReads.ts';
import { t } from '../../i18n/index.ts';
import type { ParsedIdentity } from '../../web3bio/identity.ts';
import { failed, type ProveProblem, startPath } from '../pages/linkedRolePage.ts';
import { renderVerifyPage } from '../pages/verifyPage.ts';
import { redirect, sendHtml } from '../responses.ts';
import {
  type JsonAnswer,
  openChallenge,
  receiveSignature,
  type SignatureRoutesOptions,
  sendChallengeMessage,
} from '../signing/challengeRoutes.ts';
import { type LinkedRolePagesOptions, proofFreshness } from './options.ts';
import { type LinkedRoleSession, readSession, sessionLocale, writeSession } from './session.ts';

function otherAccount(locale: string): JsonAnswer {
  return {
    status: 403,
    body: { ok: false, reason: 'other_account', message: t(locale, 'web.linkedRole.sign.otherAccount') },
  };
}

/**
 * After "Sign with its wallet": a challenge for the identity's signer, kept in the session, and the
 * browser sent to its signing page. Returns the problem instead when there is nothing to sign with.
 */
export async function startSigning(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: LinkedRoleSession,
  parsed: ParsedIdentity,
): Promise<ProveProblem | undefined> {
  let address: string | null = parsed.identity;
  if (parsed.kind !== 'evm-address' && parsed.kind !== 'solana-address') {
    const read = await o.evaluator.readRecord(parsed, await proofFreshness(o, request, session.userId));
    if (read.failed) return 'lookup_failed';
    if (read.profiles.length === 0 && read.domain === null) return 'not_found';
    address = signerAddressOf(read);
  }
  if (address === null) return 'no_address';
  const challenge = await createChallenge(o.store, o.siwe, {
    guildId: LINKED_ROLES_SCOPE,
    userId: session.userId,
    userName: session.username,
    guildName: null,
    identity: parsed.identity,
    address,
  });
  // The session lasts at least as long as its challenge, so only another browser lacks it.
  writeSession(o, reply, {
    ...session,
    nonce: challenge.nonce,
    until: Math.max(session.until, challenge.expiresAt),
  });
  o.logger.info(
    { userId: session.userId, nonce: challenge.nonce.slice(0, 8) },
    'linked role: signing link made',
  );
  redirect(reply, `${startPath(o.oauth.publicUrl)}/sign/${challenge.nonce}`);
  return undefined;
}

interface NonceParams {
  nonce: string;
}

/** The signing routes below /linked-role/sign/: the page, its message and the signature. */
export function registerLinkedRoleSigning(app: FastifyInstance, o: LinkedRolePagesOptions): void {
  const challengeRoutes = routes(o);
  app.get<{ Params: NonceParams }>('/linked-role/sign/:nonce/message', (request, reply) =>
    sendChallengeMessage(challengeRoutes, request, reply, request.params.nonce),
  );
  app.get<{ Params: NonceParams }>('/linked-role/sign/:nonce', (request, reply) =>
    signingPage(o, request, reply, request.params.nonce),
  );
  app.post<{ Params: NonceParams }>(
    '/linked-role/sign/:nonce',
    { onRequest: o.limits.signatures, bodyLimit: o.limits.signatureBodyBytes },
    (request, reply) =>
      receiveSignature(challengeRoutes, request, reply, request.params.nonce, (result) =>
        complete(o, request, reply, result),
      ),
  );
}

async function signingPage(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const challenge = await openChallenge({ ...o, linkedRoles: true }, nonce);
  const locale = sessionLocale(request, readSession(o, request));
  if ('refusal' in challenge) {
    const reason =
      challenge.refusal === 'unknown_nonce' ? 'link_unknown' : (`link_${challenge.refusal}` as const);
    const status = challenge.refusal === 'unknown_nonce' ? 404 : 410;
    return failed(o.oauth.publicUrl, reply, status, reason, locale);
  }
  if (refusal(o, request, challenge.record)) {
    o.logger.warn(
      {
        nonce: nonce.slice(0, 8),
        linkUserId: challenge.record.userId,
        signedInUserId: readSession(o, request)?.userId ?? null,
      },
      'linked role signing link opened by another browser or account: refused',
    );
    return failed(o.oauth.publicUrl, reply, 403, 'other_account', locale);
  }
  return sendHtml(
    reply,
    200,
    (cspNonce) => renderVerifyPage({ kind: 'ready', record: challenge.record }, cspNonce, locale),
    { locale },
  );
}

function routes(o: LinkedRolePagesOptions): SignatureRoutesOptions {
  return {
    store: o.store,
    siwe: o.siwe,
    log: o.logger,
    limits: o.limits,
    maxFailuresPerChallenge: o.maxFailuresPerChallenge,
    linkedRoles: true,
    localeOf: (request) => sessionLocale(request, readSession(o, request)),
    refuse: (request, record) => refusal(o, request, record),
  };
}

/** Only the session that made the challenge, signed in as the account it names, may use it. */
function refusal(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  record: NonceRecord,
): JsonAnswer | undefined {
  const session = readSession(o, request);
  return session?.nonce === record.nonce && session.userId === record.userId
    ? undefined
    : otherAccount(sessionLocale(request, session));
}

/** A valid signature: write the metadata for the signed identity, then show it on the done page. */
async function complete(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  result: { record: NonceRecord; address: string },
): Promise<JsonAnswer> {
  const session = readSession(o, request);
  const locale = sessionLocale(request, session);
  if (!session || session.userId !== result.record.userId) return otherAccount(locale);
  const proven = { ...signedIdentity(result.record, result.address), proofMethod: 'signature' as const };
  // When the challenge was made: a holding another account signed for after that is not taken over.
  const challengeIssuedAt = result.record.expiresAt - (o.siwe.ttlMs ?? DEFAULT_CHALLENGE_TTL_MS);
  const outcome = await o.service.connect(session.userId, session.grant, proven, { challengeIssuedAt });
  if (outcome.kind === 'lookup_failed') {
    return {
      status: 502,
      body: {
        ok: false,
        reason: 'lookup_failed',
        message: t(locale, 'web.linkedRole.sign.lookupFailed'),
      },
    };
  }
  if (outcome.kind === 'refused') {
    return {
      status: 409,
      body: {
        ok: false,
        reason: outcome.refusal.code,
        message: t(
          locale,
          outcome.refusal.code === 'raced' ? 'web.linkedRole.sign.raced' : 'web.linkedRole.sign.addressTaken',
        ),
      },
    };
  }
  if (outcome.kind === 'pending') {
    o.logger.warn({ userId: session.userId, why: outcome.why }, 'linked role write waits for a re-check');
    return {
      status: 502,
      body: {
        ok: false,
        reason: 'write_pending',
        message: t(locale, 'web.linkedRole.sign.writePending'),
      },
    };
  }
  const { nonce: _spent, ...rest } = session;
  writeSession(o, reply, { ...rest, connected: { identity: proven.identity, proof: 'signature' } });
  return {
    status: 200,
    body: {
      ok: true,
      message: t(locale, 'web.linkedRole.sign.connected', { identity: proven.identity }),
      next: `${startPath(o.oauth.publicUrl)}/done`,
    },
  };
}
