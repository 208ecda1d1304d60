/**
 * Discord OAuth2 (authorization-code grant) for the bot's own pages: the authorize URL, the code
 * exchange, the signed-in user, and the small HMAC and state helpers the pages bind to a browser.
 * Access tokens are returned to the caller and never kept here.
 * @see https://discord.com/developers/docs/topics/oauth2#authorization-code-grant
 */
import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';

/** Discord's REST base when DISCORD_API_URL is unset (no version: `/v10` is appended, as discord.js does). */
export const DEFAULT_DISCORD_API_URL = 'https://discord.com/api';
const API_VERSION = 'v10';
const DEFAULT_TIMEOUT_MS = 10_000;
const MAX_ERROR_CODE_LENGTH = 64;

export interface DiscordOAuthConfig {
  /** The application id (DISCORD_APPLICATION_ID). */
  clientId: string;
  /** DISCORD_CLIENT_SECRET: sent to Discord's token endpoint only, never logged or shown. */
  clientSecret: string;
  /** DISCORD_API_URL (REST base including `/api`), or DEFAULT_DISCORD_API_URL. */
  apiUrl: string;
  /**
   * DISCORD_WEB_URL: where members' browsers open Discord's pages (only its origin counts). Unset: the
   * origin of `apiUrl`, which is not Discord's when the REST goes through the bot's REST proxy.
   */
  webUrl?: string;
  /** PUBLIC_URL: the redirect URIs live below it. */
  publicUrl: string;
  /**
   * DISCORD_PUBLIC_KEY (hex): Discord signs the app's webhook events with the matching private key. It
   * travels with the app's other credentials so every server of Linked Roles pages can check them.
   */
  publicKey?: string;
  timeoutMs?: number;
}

export type OAuthScope = 'identify' | 'guilds' | 'role_connections.write';

/** What Discord answered to a code (or refresh) exchange. */
export interface TokenGrant {
  accessToken: string;
  refreshToken: string | null;
  /** Seconds from the exchange. */
  expiresIn: number;
  scopes: string[];
}

export interface DiscordOAuthUser {
  id: string;
  username: string;
  globalName: string | null;
  /** The account's chosen language (a Discord locale code such as `de` or `pt-BR`), when Discord says. */
  locale?: string;
}

export type DiscordOAuthErrorKind =
  /** Discord refused the code or refresh token (`invalid_grant`): used, expired or for another redirect. */
  | 'invalid_grant'
  /** Discord refused the client id or secret. */
  | 'invalid_client'
  /** The grant lacks a scope this flow needs. */
  | 'scope'
  /** Any other HTTP error answer. */
  | 'http'
  | 'network'
  | 'timeout'
  /** The request worked, the answer did not have the expected shape. */
  | 'schema';

/** A failed OAuth2 call. The message names the endpoint and Discord's error code, never a token or secret. */
export class DiscordOAuthError extends Error {
  readonly kind: DiscordOAuthErrorKind;
  readonly status: number | null;
  constructor(kind: DiscordOAuthErrorKind, message: string, status: number | null = null, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'DiscordOAuthError';
    this.kind = kind;
    this.status = status;
  }
}

/** A failed OAuth2 call as a log field: kind, status and Discord's error code, never a token or secret. */
export function oauthErrorSummary(error: unknown): object {
  return error instanceof DiscordOAuthError
    ? { kind: error.kind, status: error.status, message: error.message }
    : { kind: 'unexpected', message: error instanceof Error ? error.name : 'unknown' };
}

const RawTokenGrant = z.object({
  access_token: z.string().min(1),
  token_type: z.string(),
  expires_in: z.number().int().positive(),
  refresh_token: z.string().min(1).optional(),
  scope: z.string(),
});

const RawUser = z.object({
  id: z.string().regex(/^\d{1,20}$/),
  username: z.string(),
  global_name: z.string().nullish(),
  locale: z.string().max(35).optional().catch(undefined),
});

const RawOAuthError = z.object({ error: z.string() });

const RawPartialGuild = z.object({
  id: z.string().regex(/^\d{1,20}$/),
  name: z.string(),
  icon: z.string().nullish(),
  owner: z.boolean().optional().catch(undefined),
  permissions: z.string().regex(/^\d{1,40}$/),
});

/** A server the signed-in account is in, as `GET /users/@me/guilds` lists it. */
export interface DiscordOAuthGuild {
  id: string;
  name: string;
  icon: string | null;
  owner: boolean;
  /** The account's permissions at server level (from its roles; every one for the owner), no channel's. */
  permissions: bigint;
}

/** Discord lists at most this many servers a page. */
const GUILDS_PAGE = 200;
/** Pages read at most: an account is in 200 servers at most today (Nitro), so one page usually does. */
const MAX_GUILD_PAGES = 5;

/** Where a redirect path (`/oauth/callback`, `/linked-role/callback`) sits below PUBLIC_URL. */
export function redirectUri(cfg: Pick<DiscordOAuthConfig, 'publicUrl'>, path: string): string {
  return `${cfg.publicUrl.replace(/\/+$/, '')}${path}`;
}

/**
 * The authorize page: the origin of the web URL (else of the API URL) plus `/oauth2/authorize`
 * (https://discord.com/oauth2/authorize).
 */
export function authorizeUrl(
  cfg: Pick<DiscordOAuthConfig, 'clientId' | 'apiUrl' | 'webUrl' | 'publicUrl'>,
  input: { scopes: OAuthScope[]; state: string; redirectPath: string },
): string {
  const url = new URL('/oauth2/authorize', new URL(cfg.webUrl ?? cfg.apiUrl).origin);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', cfg.clientId);
  url.searchParams.set('scope', input.scopes.join(' '));
  url.searchParams.set('state', input.state);
  url.searchParams.set('redirect_uri', redirectUri(cfg, input.redirectPath));
  return url.toString();
}

/**
 * Exchanges an authorization code for tokens; refuses a grant without every scope in `needs`.
 * @see https://discord.com/developers/docs/topics/oauth2#authorization-code-grant-access-token-exchange-example
 */
export async function exchangeCode(
  cfg: DiscordOAuthConfig,
  input: { code: string; redirectPath: string; needs: OAuthScope[] },
): Promise<TokenGrant> {
  return tokenRequest(
    cfg,
    {
      grant_type: 'authorization_code',
      code: input.code,
      redirect_uri: redirectUri(cfg, input.redirectPath),
    },
    input.needs,
  );
}

/** Trades a refresh token for a new grant (Discord rotates the refresh token). */
export async function refreshGrant(
  cfg: DiscordOAuthConfig,
  input: { refreshToken: string; needs: OAuthScope[] },
): Promise<TokenGrant> {
  return tokenRequest(cfg, { grant_type: 'refresh_token', refresh_token: input.refreshToken }, input.needs);
}

/**
 * The user an access token belongs to (needs `identify`).
 * @see https://discord.com/developers/docs/resources/user#get-current-user
 */
export async function fetchCurrentUser(
  cfg: DiscordOAuthConfig,
  accessToken: string,
): Promise<DiscordOAuthUser> {
  const response = await call(cfg, '/users/@me', {
    method: 'GET',
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
  });
  const body = await readJson(response, '/users/@me');
  if (!response.ok) throw httpError('/users/@me', response.status, body);
  const user = RawUser.safeParse(body);
  if (!user.success) throw new DiscordOAuthError('schema', 'GET /users/@me answered an unexpected shape');
  const { id, username, global_name, locale } = user.data;
  return { id, username, globalName: global_name ?? null, ...(locale ? { locale } : {}) };
}

/**
 * The servers the account is in, with its server-level permissions in each (needs `guilds`).
 * @see https://discord.com/developers/docs/resources/user#get-current-user-guilds
 */
export async function fetchCurrentUserGuilds(
  cfg: DiscordOAuthConfig,
  accessToken: string,
): Promise<DiscordOAuthGuild[]> {
  const guilds: DiscordOAuthGuild[] = [];
  let after = '0';
  for (let page = 0; page < MAX_GUILD_PAGES; page++) {
    const route = `/users/@me/guilds?limit=${GUILDS_PAGE}&after=${after}`;
    const body = await callAsUser(cfg, { method: 'GET', route, accessToken });
    const parsed = z.array(RawPartialGuild).safeParse(body);
    if (!parsed.success)
      throw new DiscordOAuthError('schema', 'GET /users/@me/guilds answered an unexpected shape');
    for (const g of parsed.data) {
      guilds.push({
        id: g.id,
        name: g.name,
        icon: g.icon ?? null,
        owner: g.owner === true,
        permissions: BigInt(g.permissions),
      });
    }
    const last = parsed.data.at(-1);
    if (parsed.data.length < GUILDS_PAGE || !last) break;
    after = last.id;
  }
  return guilds;
}

/** A JSON call as the member (bearer token) below `/v10`; throws DiscordOAuthError on a non-2xx answer. */
export async function callAsUser(
  cfg: DiscordOAuthConfig,
  input: { method: 'GET' | 'PUT'; route: string; accessToken: string; body?: unknown },
): Promise<unknown> {
  const response = await call(cfg, input.route, {
    method: input.method,
    headers: {
      authorization: `Bearer ${input.accessToken}`,
      accept: 'application/json',
      ...(input.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(input.body === undefined ? {} : { body: JSON.stringify(input.body) }),
  });
  const body = await readJson(response, input.route);
  if (!response.ok) throw httpError(input.route, response.status, body);
  return body;
}

/** A form POST to a token endpoint, the app authenticated by its client id and secret. */
function clientPost(cfg: DiscordOAuthConfig, route: string, form: Record<string, string>): Promise<Response> {
  const basic = Buffer.from(
    `${encodeURIComponent(cfg.clientId)}:${encodeURIComponent(cfg.clientSecret)}`,
  ).toString('base64');
  return call(cfg, route, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams(form).toString(),
  });
}

/**
 * Revokes an access token (a sign-out): Discord no longer accepts it, whoever holds a copy.
 * @see https://discord.com/developers/docs/topics/oauth2#authorization-code-grant-token-revocation-example
 */
export async function revokeToken(cfg: DiscordOAuthConfig, accessToken: string): Promise<void> {
  const route = '/oauth2/token/revoke';
  const response = await clientPost(cfg, route, { token: accessToken, token_type_hint: 'access_token' });
  const body = await readJson(response, route);
  if (!response.ok) throw httpError(route, response.status, body);
}

async function tokenRequest(
  cfg: DiscordOAuthConfig,
  form: Record<string, string>,
  needs: OAuthScope[],
): Promise<TokenGrant> {
  const response = await clientPost(cfg, '/oauth2/token', form);
  const body = await readJson(response, '/oauth2/token');
  if (!response.ok) throw httpError('/oauth2/token', response.status, body);
  const grant = RawTokenGrant.safeParse(body);
  if (!grant.success || grant.data.token_type.toLowerCase() !== 'bearer') {
    throw new DiscordOAuthError('schema', 'POST /oauth2/token answered an unexpected shape');
  }
  const scopes = grant.data.scope.split(/\s+/).filter(Boolean);
  const missing = needs.filter((scope) => !scopes.includes(scope));
  if (missing.length > 0) {
    throw new DiscordOAuthError('scope', `the grant lacks the scope(s) ${missing.join(', ')}`);
  }
  return {
    accessToken: grant.data.access_token,
    refreshToken: grant.data.refresh_token ?? null,
    expiresIn: grant.data.expires_in,
    scopes,
  };
}

async function call(cfg: DiscordOAuthConfig, route: string, init: RequestInit): Promise<Response> {
  const url = `${cfg.apiUrl.replace(/\/+$/, '')}/${API_VERSION}${route}`;
  try {
    return await fetch(url, {
      ...init,
      redirect: 'error',
      signal: AbortSignal.timeout(cfg.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    });
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    throw new DiscordOAuthError(
      timedOut ? 'timeout' : 'network',
      `${init.method} ${route} ${timedOut ? 'timed out' : 'failed to connect'}`,
      null,
      error instanceof Error ? { name: error.name } : undefined,
    );
  }
}

async function readJson(response: Response, route: string): Promise<unknown> {
  const text = await response.text().catch(() => '');
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    if (response.ok) throw new DiscordOAuthError('schema', `${route} answered something that is not JSON`);
    return null;
  }
}

function httpError(route: string, status: number, body: unknown): DiscordOAuthError {
  const parsed = RawOAuthError.safeParse(body);
  const code = parsed.success
    ? parsed.data.error.replace(/[^\w.-]/g, '').slice(0, MAX_ERROR_CODE_LENGTH)
    : '';
  const kind: DiscordOAuthErrorKind =
    code === 'invalid_grant' ? 'invalid_grant' : code === 'invalid_client' ? 'invalid_client' : 'http';
  return new DiscordOAuthError(kind, `${route} answered ${status}${code ? ` (${code})` : ''}`, status);
}

/** A fresh OAuth2 `state` (256 random bits, URL-safe) and the hash the store keeps of it. */
export function newOAuthState(): { state: string; hash: string } {
  const state = randomBytes(32).toString('base64url');
  return { state, hash: hashOAuthState(state) };
}

/** True when `value` has the shape of a state `newOAuthState` issues. */
export function isOAuthState(value: string): boolean {
  return /^[A-Za-z0-9_-]{43}$/.test(value);
}

export function hashOAuthState(state: string): string {
  return createHash('sha256').update(state).digest('hex');
}

/** A key for the pages' HMACs, derived from the client secret so every process of one bot agrees. */
function pageKey(cfg: Pick<DiscordOAuthConfig, 'clientSecret'>, purpose: string): Buffer {
  return Buffer.from(hkdfSync('sha256', cfg.clientSecret, 'web3bio-discord-bot', `page-hmac:${purpose}`, 32));
}

/**
 * A value only this bot can make, proving a browser signed in with Discord as `userId` for `subject`
 * (a signing challenge's nonce). It is the session cookie of one challenge.
 */
export function signInProof(
  cfg: Pick<DiscordOAuthConfig, 'clientSecret'>,
  subject: string,
  userId: string,
): string {
  return createHmac('sha256', pageKey(cfg, 'sign-in')).update(`${subject}\n${userId}`).digest('base64url');
}

/** Constant-time check of a `signInProof`. */
export function isSignInProof(
  cfg: Pick<DiscordOAuthConfig, 'clientSecret'>,
  subject: string,
  userId: string,
  value: string | undefined,
): boolean {
  if (value === undefined) return false;
  return safeEqual(value, signInProof(cfg, subject, userId));
}

/** Constant-time string comparison (false for different lengths). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
