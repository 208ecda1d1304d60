/**
 * The Linked Roles page's session: between the Discord sign-in and the proof, the browser holds the
 * grant sealed with TOKEN_ENCRYPTION_KEY in an HttpOnly cookie scoped to these pages. It also carries
 * the one signing challenge made in it, so a challenge can only be signed in the browser (and by the
 * Discord account) that asked for it. Nothing is stored on the server before a proof, except that a Sign
 * in with Farcaster flow keeps the grant sealed with it, for the server to write once it is approved.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { DiscordOAuthConfig, TokenGrant } from '../../discord/oauth.ts';
import { openToken, sealToken } from '../../gating/linkedRoles/linkedRoles.ts';
import { requestLocale } from '../locale.ts';
import { cookieOptions, setCookie } from '../responses.ts';

export const LINKED_ROLE_PATH = '/linked-role';
export const SESSION_MS = 10 * 60_000;
const SESSION_COOKIE = 'linked_role_session';
const SESSION_CONTEXT = 'linked-role-session';

export interface LinkedRoleSession {
  userId: string;
  username: string;
  /** The account's Discord locale when Discord said it: the pages speak it. */
  locale?: string;
  grant: TokenGrant;
  until: number;
  /** The signing challenge made in this session, if any. */
  nonce?: string;
  /** The Sign in with Farcaster flow made in this session, if any. */
  farcaster?: string;
  /** Set once the connection was written: the next page shows it. */
  connected?: { identity: string; proof: 'record' | 'signature' };
}

export interface SessionKeys {
  oauth: Pick<DiscordOAuthConfig, 'publicUrl'>;
  key: Buffer;
  now: () => number;
}

/** The browser's session, or undefined when it has none, it was forged, or it expired. */
export function readSession(o: SessionKeys, request: FastifyRequest): LinkedRoleSession | undefined {
  const sealed = request.cookies[SESSION_COOKIE];
  if (!sealed) return undefined;
  const text = openToken(o.key, sealed, SESSION_CONTEXT);
  if (text === undefined) return undefined;
  const session = JSON.parse(text) as LinkedRoleSession;
  return session.until > o.now() ? session : undefined;
}

/** Seals `session` into the browser's cookie (until the session's own end). */
export function writeSession(o: SessionKeys, reply: FastifyReply, session: LinkedRoleSession): void {
  setCookie(
    reply,
    SESSION_COOKIE,
    sealToken(o.key, JSON.stringify(session), SESSION_CONTEXT),
    cookieOptions(o.oauth.publicUrl, LINKED_ROLE_PATH, (session.until - o.now()) / 1_000),
  );
}

export function clearSession(o: SessionKeys, reply: FastifyReply): void {
  setCookie(reply, SESSION_COOKIE, '', cookieOptions(o.oauth.publicUrl, LINKED_ROLE_PATH, 0));
}

/** The language of these pages: the signed-in account's when known, else the browser's. */
export function sessionLocale(request: FastifyRequest, session: LinkedRoleSession | undefined): string {
  return requestLocale(request, session?.locale);
}
