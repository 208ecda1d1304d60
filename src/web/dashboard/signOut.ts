/**
 * Signing out of the dashboard, whatever Discord answers. The session is a sealed cookie, so a sign-out
 * is recorded in the shared store (by the hash of the session's id, until the session would have ended)
 * and every dashboard request asks it first: a copy of the cookie taken before opens nothing on any
 * replica, even while the account's server list in it is still fresh. The browser's cookie is cleared,
 * and the token is revoked at Discord once; Discord down, that is logged and not retried: the token is
 * sealed inside the cookie, which only this bot can open and which it now refuses, and it expires at
 * Discord on its own.
 */
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DiscordOAuthConfig, oauthErrorSummary, revokeToken } from '../../discord/oauth.ts';
import type { DashboardSignOutStore } from '../../store/types.ts';
import type { WebLogger } from '../responses.ts';
import { currentViewer, type RightsOptions, type Viewer } from './rights.ts';
import { clearSession, type DashboardSession, readSession } from './session.ts';

export interface SignOutOptions {
  rights: RightsOptions;
  oauth: DiscordOAuthConfig;
  store: DashboardSignOutStore;
  logger: WebLogger;
}

/** What a sign-out came to at Discord: the token revoked, or Discord could not be asked or refused. */
export type SignOutOutcome = 'revoked' | 'not_revoked';

/** The key a sign-out is recorded under: the session id's SHA-256 (the id itself stays in the cookie). */
function signOutKey(session: Pick<DashboardSession, 'sid'>): string {
  return createHash('sha256').update(`dashboard-session:${session.sid}`).digest('hex');
}

/**
 * The viewer as `currentViewer` sees it, except that a session signed out (here or on another replica)
 * is signed out: its cookie is cleared and Discord is not asked anything with its token.
 */
export async function liveViewer(
  o: SignOutOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Viewer> {
  const session = readSession(o.rights, request);
  if (session && (await o.store.isDashboardSignedOut(signOutKey(session), o.rights.now()))) {
    clearSession(o.rights, reply);
    return { kind: 'signed_out' };
  }
  return currentViewer(o.rights, request, reply);
}

/**
 * Ends `session` (read from the cookie alone: signing out needs nothing from Discord): the cookie
 * cleared, the sign-out recorded, the token revoked at Discord if it answers.
 */
export async function signOut(
  o: SignOutOptions,
  session: DashboardSession,
  reply: FastifyReply,
): Promise<SignOutOutcome> {
  clearSession(o.rights, reply);
  try {
    await o.store.recordDashboardSignOut(signOutKey(session), session.until, o.rights.now());
  } catch (error) {
    o.logger.error(
      { err: error, userId: session.userId },
      'dashboard sign-out: could not record it in the store; its token is still revoked at Discord',
    );
  }
  try {
    await revokeToken(o.oauth, session.token);
    return 'revoked';
  } catch (error) {
    o.logger.warn(
      { err: oauthErrorSummary(error), userId: session.userId },
      'dashboard sign-out: Discord did not revoke the token; the session is signed out here all the same',
    );
    return 'not_revoked';
  }
}
