/**
 * `/verify/{nonce}`: the signing page, the exact message to sign, and the signature; behind the
 * Discord sign-in (`/oauth/callback`) when DISCORD_CLIENT_SECRET is set.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DiscordOAuthConfig } from '../../discord/oauth.ts';
import type { SiweConfig } from '../../gating/proofs/challengeMessage.ts';
import type { NonceRecord, NonceStore } from '../../gating/proofs/siwe.ts';
import type { SignatureLinkResult, VerifyRefusal } from '../../gating/types.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import type { FarcasterFlowStore, GatingStore } from '../../store/types.ts';
import type { WebLimiters } from '../limits.ts';
import { requestLocale } from '../locale.ts';
import { renderVerifyPage, type VerifyPageState } from '../pages/verifyPage.ts';
import { refuseOtherMethods, sendHtml, type WebLogger } from '../responses.ts';
import {
  type JsonAnswer,
  openChallenge,
  receiveSignature,
  type SignatureRoutesOptions,
  sendChallengeMessage,
} from './challengeRoutes.ts';
import {
  finishSignIn,
  hasSignedIn,
  SIGN_IN_CALLBACK_PATH,
  signInFirst,
  type VerifySignInOptions,
} from './signIn.ts';

const LINK_REFUSALS: Record<VerifyRefusal['code'], MessageKey> = {
  too_many_links: 'web.link.tooManyLinks',
  address_taken: 'web.link.addressTaken',
  raced: 'web.link.raced',
  // A signature takes a FID over; only a record proof meets this one.
  fid_taken: 'web.link.cannotLink',
  not_enabled: 'web.link.notEnabled',
  invalid_identity: 'web.link.cannotLink',
  lookup_failed: 'web.link.cannotLink',
  not_found: 'web.link.cannotLink',
  no_address: 'web.link.cannotLink',
};

/** What the signing page needs from the bot. */
export interface SigningPagesSetup {
  /** The OAuth-state methods are used only with `oauth`. */
  store: NonceStore & Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'> & FarcasterFlowStore;
  siwe: SiweConfig;
  /** Called once per successful verification, after the nonce was consumed; may still refuse the link. */
  onVerified: (result: { record: NonceRecord; address: string }) => Promise<SignatureLinkResult>;
  /**
   * With DISCORD_CLIENT_SECRET: a link only opens after signing in with Discord as the account it was
   * made for (`/oauth/callback` below PUBLIC_URL is the redirect URI).
   */
  oauth?: DiscordOAuthConfig;
  /** Refused signatures per challenge before it is burned. Default 10. */
  maxFailuresPerChallenge?: number;
}

interface VerifyRoutesContext extends SigningPagesSetup {
  logger: WebLogger;
  limits: WebLimiters;
}

interface NonceParams {
  nonce: string;
}

export function registerVerifyRoutes(app: FastifyInstance, o: VerifyRoutesContext): void {
  const signIn = signInOptions(o);
  const routes = signatureRoutes(o, signIn);
  if (signIn) {
    app.get(SIGN_IN_CALLBACK_PATH, (request, reply) => finishSignIn(signIn, request, reply));
  }
  app.get<{ Params: NonceParams }>('/verify/:nonce/message', (request, reply) =>
    sendChallengeMessage(routes, request, reply, request.params.nonce),
  );
  app.get<{ Params: NonceParams }>('/verify/:nonce', (request, reply) =>
    sendPage(o, signIn, request, reply, request.params.nonce),
  );
  app.post<{ Params: NonceParams }>(
    '/verify/:nonce',
    { onRequest: o.limits.signatures, bodyLimit: o.limits.signatureBodyBytes },
    (request, reply) =>
      receiveSignature(routes, request, reply, request.params.nonce, (result) =>
        completeLink(o, result, requestLocale(request)),
      ),
  );
  refuseOtherMethods(app, '/verify/:nonce', 'GET, HEAD, POST');
  refuseOtherMethods(app, '/verify/:nonce/message', 'GET, HEAD');
}

function signInOptions(o: VerifyRoutesContext): VerifySignInOptions | null {
  if (!o.oauth) return null;
  return {
    oauth: o.oauth,
    store: o.store,
    now: o.siwe.now ?? Date.now,
    logger: o.logger,
    maxFailuresPerChallenge: maxPerChallenge(o),
  };
}

/** With the Discord sign-in on: the refusal for a browser that has not signed in as the link's account. */
function notSignedIn(
  signIn: VerifySignInOptions | null,
  request: FastifyRequest,
  record: NonceRecord,
): boolean {
  return signIn !== null && !hasSignedIn(signIn, request, { ...record, purpose: 'verify' });
}

async function sendPage(
  o: VerifyRoutesContext,
  signIn: VerifySignInOptions | null,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const challenge = await openChallenge({ ...o, linkedRoles: false }, nonce);
  // The challenge keeps no locale: the page speaks the browser's language.
  const locale = requestLocale(request);
  if (signIn && 'record' in challenge && notSignedIn(signIn, request, challenge.record))
    return signInFirst(signIn, o.limits, request, reply, { ...challenge.record, purpose: 'verify' });
  const state: VerifyPageState =
    'record' in challenge
      ? { kind: 'ready', record: challenge.record }
      : { kind: challenge.refusal === 'used' ? 'used' : 'expired' };
  return sendHtml(reply, 200, (cspNonce) => renderVerifyPage(state, cspNonce, locale), { locale });
}

/** The shared challenge routes, for `/verify` challenges, behind the Discord sign-in when it is on. */
function signatureRoutes(o: VerifyRoutesContext, signIn: VerifySignInOptions | null): SignatureRoutesOptions {
  return {
    store: o.store,
    siwe: o.siwe,
    log: o.logger,
    limits: o.limits,
    maxFailuresPerChallenge: maxPerChallenge(o),
    linkedRoles: false,
    localeOf: (request) => requestLocale(request),
    refuse: (request, record) =>
      notSignedIn(signIn, request, record)
        ? {
            status: 401,
            body: {
              ok: false,
              reason: 'sign_in',
              message: t(requestLocale(request), 'web.link.signInFirst'),
            },
          }
        : undefined,
  };
}

/** After a valid signature: the link, or why it was refused although the signature was valid. */
async function completeLink(
  o: VerifyRoutesContext,
  result: { record: NonceRecord; address: string },
  locale: string,
): Promise<JsonAnswer> {
  const linked = await o.onVerified(result);
  if (!linked.ok) {
    o.logger.info(
      { nonce: result.record.nonce.slice(0, 8), refusal: linked.refusal.code },
      'valid signature, link refused',
    );
    return {
      status: 409,
      body: {
        ok: false,
        reason: linked.refusal.code,
        message: t(locale, LINK_REFUSALS[linked.refusal.code]),
      },
    };
  }
  return {
    status: 200,
    body: {
      ok: true,
      message: t(locale, linked.queued ? 'web.link.queued' : 'web.link.verified'),
    },
  };
}

function maxPerChallenge(o: Pick<SigningPagesSetup, 'maxFailuresPerChallenge'>): number {
  return o.maxFailuresPerChallenge ?? 10;
}
