/**
 * The Linked Roles page's session: between the Discord sign-in and the proof, the browser holds the
 * grant sealed with TOKEN_ENCRYPTION_KEY in an HttpOnly cookie scoped to these pages. It also carries
 * the one signing challenge made in it, so a challenge can only be signed in the browser (and by the
 * Discord account) that asked for it. Nothing is stored on the server before a proof.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { DiscordOAuthConfig, TokenGrant } from '../../discord/oauth.ts';
import { openToken, sealToken } from '../../gating/linkedRoles/linkedRoles.ts';
import { readCookie, setCookie } from '../responses.ts';

export const LINKED_ROLE_PATH = '/linked-role';
export const SESSION_MS = 10 * 60_000;
const SESSION_COOKIE = 'linked_role_session';
const SESSION_CONTEXT = 'linked-role-session';

export interface LinkedRoleSession {
  userId: string;
  username: string;
  grant: TokenGrant;
  until: number;
  /** The signing challenge made in this session, if any. */
  nonce?: string;
  /** Set once the connection was written: the next page shows it. */
  connected?: { identity: string; proof: 'record' | 'signature' };
}

export interface SessionKeys {
  oauth: Pick<DiscordOAuthConfig, 'publicUrl'>;
  key: Buffer;
  now: () => number;
}

/** The browser's session, or undefined when it has none, it was forged, or it expired. */
export function readSession(o: SessionKeys, req: IncomingMessage): LinkedRoleSession | undefined {
  const sealed = readCookie(req, SESSION_COOKIE);
  if (sealed === undefined) return undefined;
  const text = openToken(o.key, sealed, SESSION_CONTEXT);
  if (text === undefined) return undefined;
  const session = JSON.parse(text) as LinkedRoleSession;
  return session.until > o.now() ? session : undefined;
}

/** Seals `session` into the browser's cookie (until the session's own end). */
export function writeSession(o: SessionKeys, res: ServerResponse, session: LinkedRoleSession): void {
  setCookie(
    res,
    SESSION_COOKIE,
    sealToken(o.key, JSON.stringify(session), SESSION_CONTEXT),
    cookieOptions(o, LINKED_ROLE_PATH, (session.until - o.now()) / 1_000),
  );
}

export function clearSession(o: SessionKeys, res: ServerResponse): void {
  setCookie(res, SESSION_COOKIE, '', cookieOptions(o, LINKED_ROLE_PATH, 0));
}

/** A cookie for `path` below PUBLIC_URL (which may sit below a prefix on a reverse proxy). */
export function cookieOptions(o: Pick<SessionKeys, 'oauth'>, path: string, maxAgeSeconds: number) {
  const base = new URL(o.oauth.publicUrl);
  return {
    path: `${base.pathname.replace(/\/+$/, '')}${path}`,
    maxAgeSeconds,
    secure: base.protocol === 'https:',
  };
}
