/**
 * "Sign in with Discord" in front of the signing page and the Sign in with Farcaster page
 * (DISCORD_CLIENT_SECRET set): a link only works in a browser that signed in as the Discord account its
 * challenge or flow was made for.
 *
 * The OAuth2 `state` is single-use, expires with the link and is tied to the browser that started the
 * sign-in by a cookie, so a callback URL forwarded to someone else does nothing. After the callback, the
 * browser holds a cookie (an HMAC over the link and the account) scoped to that one page. The access
 * token is used once, to read the account, and then dropped.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  type DiscordOAuthUser,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  isSignInProof,
  newOAuthState,
  oauthErrorSummary,
  safeEqual,
  signInProof,
} from '../../discord/oauth.ts';
import { accountName } from '../../gating/proofs/challengeMessage.ts';
import type { GatingStore } from '../../store/types.ts';
import type { WebLimiters } from '../limits.ts';
import { requestLocale } from '../locale.ts';
import { renderVerifyPage, type SignInFailure, type VerifyPageState } from '../pages/verifyPage.ts';
import { cookieOptions, publicPath, redirect, sendHtml, setCookie, type WebLogger } from '../responses.ts';

/** A page behind the sign-in: a signing challenge's (`/verify/…`) or a Farcaster sign-in's (`/farcaster/…`). */
export interface SignInTarget {
  purpose: 'verify' | 'farcaster';
  nonce: string;
  userId: string;
  userName: string | null;
  expiresAt: number;
}

/** The page of a target, below PUBLIC_URL. */
export function targetPath(target: Pick<SignInTarget, 'purpose' | 'nonce'>): string {
  return target.purpose === 'farcaster' ? `/farcaster/${target.nonce}` : `/verify/${target.nonce}`;
}

/** What the browser's proof cookie is an HMAC of, with the account: one page, never another kind's. */
function subjectOf(target: Pick<SignInTarget, 'purpose' | 'nonce'>): string {
  return target.purpose === 'farcaster' ? `farcaster:${target.nonce}` : target.nonce;
}

export const SIGN_IN_CALLBACK_PATH = '/oauth/callback';
const STATE_COOKIE = 'discord_oauth_state';
const SESSION_COOKIE = 'verify_session';
const MAX_CODE_LENGTH = 512;

export interface VerifySignInOptions {
  oauth: DiscordOAuthConfig;
  store: Pick<
    GatingStore,
    'createOAuthState' | 'consumeOAuthState' | 'getNonce' | 'countFailedAttempt' | 'getFarcasterFlow'
  >;
  now: () => number;
  logger: WebLogger;
  maxFailuresPerChallenge: number;
}

/** True when this browser signed in with Discord as the account `target` was made for. */
export function hasSignedIn(
  opts: VerifySignInOptions,
  request: FastifyRequest,
  target: Pick<SignInTarget, 'purpose' | 'nonce' | 'userId'>,
): boolean {
  return isSignInProof(opts.oauth, subjectOf(target), target.userId, request.cookies[SESSION_COOKIE]);
}

/**
 * A browser that has not signed in as the page's account: sent to Discord's sign-in, unless this client
 * started too many lately (each sign-in stores a state), then a 429 page saying so.
 */
export async function signInFirst(
  opts: VerifySignInOptions,
  limits: Pick<WebLimiters, 'signIns'>,
  request: FastifyRequest,
  reply: FastifyReply,
  target: SignInTarget,
): Promise<FastifyReply> {
  const wait = await limits.signIns(request);
  if (wait === undefined) return startSignIn(opts, reply, target);
  const locale = requestLocale(request);
  reply.header('retry-after', String(wait));
  return sendHtml(
    reply,
    429,
    (cspNonce) =>
      renderVerifyPage({ kind: 'sign_in_failed', reason: 'too_many', retryUrl: null }, cspNonce, locale),
    { locale },
  );
}

/** Sends the browser to Discord's authorize page with a fresh state for this page. */
export async function startSignIn(
  opts: VerifySignInOptions,
  reply: FastifyReply,
  record: SignInTarget,
): Promise<FastifyReply> {
  const { state, hash } = newOAuthState();
  const now = opts.now();
  await opts.store.createOAuthState(
    { stateHash: hash, purpose: record.purpose, nonce: record.nonce, expiresAt: record.expiresAt },
    now,
  );
  const publicUrl = opts.oauth.publicUrl;
  setCookie(
    reply,
    STATE_COOKIE,
    state,
    cookieOptions(publicUrl, SIGN_IN_CALLBACK_PATH, (record.expiresAt - now) / 1000),
  );
  return redirect(
    reply,
    authorizeUrl(opts.oauth, { scopes: ['identify'], state, redirectPath: SIGN_IN_CALLBACK_PATH }),
  );
}

/** `GET /oauth/callback`: checks the state, reads the account, and lets the right one through. */
export async function finishSignIn(
  opts: VerifySignInOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const query = new URL(request.url, 'http://callback.invalid').searchParams;
  const state = query.get('state') ?? '';
  const log = opts.logger;
  const publicUrl = opts.oauth.publicUrl;
  let locale = requestLocale(request);
  const failed = (status: number, reason: SignInFailure, retryUrl: string | null) =>
    sendHtml(
      reply,
      status,
      (cspNonce) => renderVerifyPage({ kind: 'sign_in_failed', reason, retryUrl }, cspNonce, locale),
      { locale },
    );
  if (!isOAuthState(state)) return failed(400, 'bad_state', null);

  const browserState = request.cookies[STATE_COOKIE];
  if (browserState === undefined || !safeEqual(browserState, state)) {
    log.warn(
      { route: SIGN_IN_CALLBACK_PATH },
      'discord sign-in refused: the state was not started in this browser',
    );
    return failed(400, 'other_browser', null);
  }
  const now = opts.now();
  const issued = await opts.store.consumeOAuthState(hashOAuthState(state), now);
  // The state is spent either way: clear its cookie.
  setCookie(reply, STATE_COOKIE, '', cookieOptions(publicUrl, SIGN_IN_CALLBACK_PATH, 0));
  if ((issued?.purpose !== 'verify' && issued?.purpose !== 'farcaster') || issued.nonce === null) {
    log.warn({ route: SIGN_IN_CALLBACK_PATH }, 'discord sign-in refused: unknown, used or expired state');
    return failed(400, 'bad_state', null);
  }
  const nonce = issued.nonce;
  const purpose = issued.purpose;
  const linkUrl = publicPath(publicUrl, targetPath({ purpose, nonce }), true);
  const logFields = { nonce: nonce.slice(0, 8), purpose };

  const error = query.get('error');
  if (error !== null) {
    const denied = error === 'access_denied';
    log.info(
      { ...logFields, oauthError: error.replace(/[^\w.-]/g, '').slice(0, 40) },
      'discord sign-in not completed',
    );
    return failed(denied ? 200 : 502, denied ? 'denied' : 'failed', linkUrl);
  }
  const code = query.get('code') ?? '';
  if (code === '' || code.length > MAX_CODE_LENGTH) return failed(400, 'failed', linkUrl);

  let user: DiscordOAuthUser;
  try {
    const grant = await exchangeCode(opts.oauth, {
      code,
      redirectPath: SIGN_IN_CALLBACK_PATH,
      needs: ['identify'],
    });
    user = await fetchCurrentUser(opts.oauth, grant.accessToken);
    locale = requestLocale(request, user.locale);
  } catch (err) {
    log.warn({ ...logFields, err: oauthErrorSummary(err) }, 'discord sign-in failed');
    return failed(502, 'failed', linkUrl);
  }

  const record = await targetOf(opts, purpose, nonce);
  if (!record || record.used || record.expiresAt <= now) {
    const page: VerifyPageState = { kind: record?.used ? 'used' : 'expired' };
    return sendHtml(reply, 410, (cspNonce) => renderVerifyPage(page, cspNonce, locale), { locale });
  }
  if (user.id !== record.userId) {
    log.warn(
      { ...logFields, guildId: record.guildId, linkUserId: record.userId, signedInUserId: user.id },
      'signing link opened by another Discord account: refused',
    );
    if (purpose === 'verify') await opts.store.countFailedAttempt(nonce, opts.maxFailuresPerChallenge, now);
    const page: VerifyPageState = {
      kind: 'wrong_account',
      expected: accountName(record),
      actual: accountName({ userId: user.id, userName: user.username || null }),
      ...(purpose === 'farcaster' ? { farcaster: true } : {}),
    };
    return sendHtml(reply, 403, (cspNonce) => renderVerifyPage(page, cspNonce, locale), { locale });
  }
  log.info(
    { ...logFields, guildId: record.guildId, userId: user.id },
    'discord sign-in matched the signing link',
  );
  setCookie(
    reply,
    SESSION_COOKIE,
    signInProof(opts.oauth, subjectOf(record), user.id),
    cookieOptions(publicUrl, targetPath(record), (record.expiresAt - now) / 1000),
  );
  return redirect(reply, linkUrl);
}

/** The challenge or flow a sign-in state was made for, as the sign-in needs it. */
async function targetOf(
  opts: VerifySignInOptions,
  purpose: SignInTarget['purpose'],
  nonce: string,
): Promise<(SignInTarget & { guildId: string; used: boolean }) | undefined> {
  if (purpose === 'farcaster') {
    const flow = await opts.store.getFarcasterFlow(nonce);
    return flow && { ...flow, purpose, used: flow.state === 'done' };
  }
  const record = await opts.store.getNonce(nonce);
  return record && { ...record, purpose, used: record.usedAt !== null };
}
