/**
 * The dashboard's session, with no state in any process: an HttpOnly, SameSite=Lax cookie (Secure on
 * https) on `/dashboard`, sealed with TOKEN_ENCRYPTION_KEY (AES-256-GCM, so nothing in it is readable or
 * changeable in the browser). It carries the account, the Discord access token (only ever sent back to
 * Discord, to read the account's servers again), and the servers the account may see with when they were
 * read: read again once older than the rights' maximum age (60 s at most). The per-session CSRF token is
 * an HMAC of the session's random id; state-changing requests must also come from this site's origin.
 */
import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { safeEqual } from '../../discord/oauth.ts';
import { openToken, sealToken } from '../../gating/linkedRoles/linkedRoles.ts';
import { cookieOptions, setCookie } from '../responses.ts';

export const DASHBOARD_PATH = '/dashboard';
export const DASHBOARD_CALLBACK_PATH = '/dashboard/callback';
const SESSION_COOKIE = 'dashboard_session';
const STATE_COOKIE = 'dashboard_state';
const SESSION_CONTEXT = 'dashboard-session';
/** A sign-in lasts this long at most (Discord's access token lasts a week). */
export const SESSION_MS = 12 * 3_600_000;
/** The OAuth2 state and its browser cookie live this long. */
export const STATE_MS = 10 * 60_000;

export interface DashboardSession {
  /** Random per sign-in: the CSRF token is bound to it. */
  sid: string;
  userId: string;
  username: string;
  locale?: string;
  /** The Discord access token (scopes identify, guilds): read the account's servers again with it. */
  token: string;
  until: number;
  /** Servers where the account has Manage Server or Administrator and the bot is a member, as last read. */
  guilds: string[];
  /** When `guilds` was read from Discord (ms). */
  guildsAt: number;
}

export interface SessionKeys {
  publicUrl: string;
  key: Buffer;
  now: () => number;
}

/** The browser's session, or undefined when it has none, it was forged or tampered with, or it ended. */
export function readSession(o: SessionKeys, request: FastifyRequest): DashboardSession | undefined {
  const sealed = request.cookies[SESSION_COOKIE];
  if (!sealed) return undefined;
  const text = openToken(o.key, sealed, SESSION_CONTEXT);
  if (text === undefined) return undefined;
  let session: DashboardSession;
  try {
    session = JSON.parse(text) as DashboardSession;
  } catch {
    return undefined;
  }
  return typeof session.until === 'number' && session.until > o.now() && Array.isArray(session.guilds)
    ? session
    : undefined;
}

export function writeSession(o: SessionKeys, reply: FastifyReply, session: DashboardSession): void {
  setCookie(
    reply,
    SESSION_COOKIE,
    sealToken(o.key, JSON.stringify(session), SESSION_CONTEXT),
    cookieOptions(o.publicUrl, DASHBOARD_PATH, (session.until - o.now()) / 1_000),
  );
}

export function clearSession(o: SessionKeys, reply: FastifyReply): void {
  setCookie(reply, SESSION_COOKIE, '', cookieOptions(o.publicUrl, DASHBOARD_PATH, 0));
}

/** A fresh session id (128 random bits). */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

/** The OAuth2 state's browser half: the callback accepts the state only in the browser that holds it. */
export function setStateCookie(o: SessionKeys, reply: FastifyReply, state: string): void {
  setCookie(
    reply,
    STATE_COOKIE,
    state,
    cookieOptions(o.publicUrl, DASHBOARD_CALLBACK_PATH, STATE_MS / 1_000),
  );
}

export function stateCookie(request: FastifyRequest): string | undefined {
  return request.cookies[STATE_COOKIE];
}

export function clearStateCookie(o: SessionKeys, reply: FastifyReply): void {
  setCookie(reply, STATE_COOKIE, '', cookieOptions(o.publicUrl, DASHBOARD_CALLBACK_PATH, 0));
}

/** The session's CSRF token: only this bot can make it, and only for this session. */
export function csrfToken(key: Buffer, session: Pick<DashboardSession, 'sid'>): string {
  const derived = Buffer.from(hkdfSync('sha256', key, 'web3bio-discord-bot', 'dashboard-csrf', 32));
  return createHmac('sha256', derived).update(session.sid).digest('base64url');
}

export function isCsrfToken(key: Buffer, session: Pick<DashboardSession, 'sid'>, value: unknown): boolean {
  return typeof value === 'string' && safeEqual(value, csrfToken(key, session));
}

/**
 * Whether a state-changing request comes from this site: `Sec-Fetch-Site` (where the browser sends it)
 * says same-origin, and `Origin` (else `Referer`) is PUBLIC_URL's origin. Neither sent: refused.
 */
export function isSameOrigin(publicUrl: string, request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') return false;
  const expected = new URL(publicUrl).origin;
  const origin = request.headers.origin;
  if (origin !== undefined) return origin === expected;
  const referer = request.headers.referer;
  if (referer === undefined) return false;
  try {
    return new URL(referer).origin === expected;
  } catch {
    return false;
  }
}
