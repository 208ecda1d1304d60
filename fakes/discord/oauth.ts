/**
 * The stand-in for Discord's OAuth2: the authorize page (it answers at once, as the user the test
 * chose, with a redirect), the token endpoint (authorization code and refresh token grants),
 * `GET /users/@me` and, with the `guilds` scope, `GET /users/@me/guilds` with a bearer token. It makes Discord's checks: the client id and secret, a
 * registered redirect URI that must match again at the exchange, a code that works once and expires,
 * known scopes, and a token that only reaches what its scopes allow.
 */
import { randomBytes } from 'node:crypto';
import type {
  APIApplicationRoleConnectionMetadata,
  APIUser,
  RESTAPIPartialCurrentUserGuild,
} from 'discord-api-types/v10';
import { type Answer, apiError, type ParsedRequest } from './http.ts';

const KNOWN_SCOPES = new Set(['identify', 'email', 'guilds', 'connections', 'role_connections.write']);
const CODE_TTL_MS = 10 * 60_000;
const ACCESS_TOKEN_TTL_S = 604_800;
/** `GET /users/@me/guilds` answers at most this many a page (Discord's default and maximum). */
const GUILDS_PAGE_MAX = 200;

interface Grant {
  userId: string;
  scopes: string[];
}

/** What the test sets and reads of the fake OAuth2 provider. */
export interface FakeOAuth {
  /** The application's client secret the token endpoint accepts. */
  readonly clientSecret: string;
  /** Registers a redirect URI, as in the Developer Portal's OAuth2 > Redirects. */
  allowRedirect(uri: string): void;
  /** Who the authorize page signs in as from now on; `null` plays the user pressing Cancel. */
  signInAs(userId: string | null): void;
  /** Every `state` the authorize page saw, in order. */
  readonly authorizeStates: string[];
  /** Every code issued (the test may replay one). */
  readonly issuedCodes: string[];
  /** Tokens revoked through `POST /oauth2/token/revoke`, oldest first. */
  readonly revokedTokens: string[];
  /** Access tokens issued and still valid. */
  activeAccessTokens(): number;
  /** Makes every refresh token of a user invalid, as when they deauthorize the app. */
  revokeUser(userId: string): void;
  /**
   * Makes a user's access tokens invalid while their refresh tokens keep working, as when Discord
   * revokes an access token early (a password reset, a token rotation on its side).
   */
  revokeAccessTokens(userId: string): void;
  /** The role-connection metadata the app registered (`PUT /applications/{id}/role-connections/metadata`). */
  readonly roleConnectionMetadata: APIApplicationRoleConnectionMetadata[];
  /** Each user's role connection to the app, as written with their token. */
  readonly roleConnections: Map<
    string,
    { platform_name: string | null; platform_username: string | null; metadata: Record<string, string> }
  >;
}

export class FakeOAuthProvider implements FakeOAuth {
  readonly clientSecret: string;
  readonly authorizeStates: string[] = [];
  readonly issuedCodes: string[] = [];
  /** Tokens revoked through `POST /oauth2/token/revoke`, oldest first. */
  readonly revokedTokens: string[] = [];
  roleConnectionMetadata: APIApplicationRoleConnectionMetadata[] = [];
  readonly roleConnections: FakeOAuth['roleConnections'] = new Map();
  readonly #applicationId: string;
  readonly #botToken: string;
  readonly #users: Map<string, APIUser>;
  readonly #guildsOf: (userId: string) => RESTAPIPartialCurrentUserGuild[];
  readonly #redirects = new Set<string>();
  readonly #codes = new Map<string, Grant & { redirectUri: string; expiresAt: number; used: boolean }>();
  readonly #accessTokens = new Map<string, Grant & { expiresAt: number }>();
  readonly #refreshTokens = new Map<string, Grant>();
  #actingUserId: string | null = null;

  constructor(input: {
    applicationId: string;
    clientSecret: string;
    botToken: string;
    users: Map<string, APIUser>;
    /** The guilds a user is in, as `GET /users/@me/guilds` lists them (permissions as Discord computes them). */
    guildsOf?: (userId: string) => RESTAPIPartialCurrentUserGuild[];
  }) {
    this.#guildsOf = input.guildsOf ?? (() => []);
    this.#applicationId = input.applicationId;
    this.#botToken = input.botToken;
    this.clientSecret = input.clientSecret;
    this.#users = input.users;
  }

  allowRedirect(uri: string): void {
    this.#redirects.add(uri);
  }

  signInAs(userId: string | null): void {
    this.#actingUserId = userId;
  }

  activeAccessTokens(): number {
    const now = Date.now();
    return [...this.#accessTokens.values()].filter((t) => t.expiresAt > now).length;
  }

  revokeUser(userId: string): void {
    for (const [token, grant] of this.#refreshTokens)
      if (grant.userId === userId) this.#refreshTokens.delete(token);
    for (const [token, grant] of this.#accessTokens)
      if (grant.userId === userId) this.#accessTokens.delete(token);
  }

  revokeAccessTokens(userId: string): void {
    for (const [token, grant] of this.#accessTokens)
      if (grant.userId === userId) this.#accessTokens.delete(token);
  }

  /** The user and scopes behind `Authorization: Bearer …`, or undefined. */
  bearer(req: ParsedRequest): Grant | undefined {
    const match = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '');
    const grant = match?.[1] ? this.#accessTokens.get(match[1]) : undefined;
    return grant && grant.expiresAt > Date.now() ? grant : undefined;
  }

  /** `GET /oauth2/authorize` on Discord's origin (not under /api). */
  authorize(query: URLSearchParams): Answer {
    const redirectUri = query.get('redirect_uri') ?? '';
    if (query.get('client_id') !== this.#applicationId) return page(400, 'Unknown application');
    if (!this.#redirects.has(redirectUri)) return page(400, 'Invalid OAuth2 redirect_uri');
    const state = query.get('state');
    if (state !== null) this.authorizeStates.push(state);
    const back = new URL(redirectUri);
    if (state !== null) back.searchParams.set('state', state);
    const scopes = (query.get('scope') ?? '').split(/\s+/).filter(Boolean);
    if (query.get('response_type') !== 'code') {
      back.searchParams.set('error', 'unsupported_response_type');
      return found(back);
    }
    if (scopes.length === 0 || scopes.some((s) => !KNOWN_SCOPES.has(s))) {
      back.searchParams.set('error', 'invalid_scope');
      return found(back);
    }
    const userId = this.#actingUserId;
    if (userId === null || !this.#users.has(userId)) {
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set(
        'error_description',
        'The resource owner or authorization server denied the request',
      );
      return found(back);
    }
    const code = randomBytes(15).toString('base64url');
    this.#codes.set(code, { userId, scopes, redirectUri, expiresAt: Date.now() + CODE_TTL_MS, used: false });
    this.issuedCodes.push(code);
    back.searchParams.set('code', code);
    return found(back);
  }

  /** REST routes of OAuth2, or null when the request is not one of them. */
  handle(req: ParsedRequest): Answer | null {
    if (req.method === 'POST' && req.path === '/oauth2/token') return this.#token(req);
    if (req.method === 'POST' && req.path === '/oauth2/token/revoke') return this.#revoke(req);
    if (
      req.method === 'GET' &&
      req.path === '/users/@me' &&
      /^Bearer /.test(req.headers.authorization ?? '')
    ) {
      const grant = this.bearer(req);
      if (!grant?.scopes.includes('identify')) return apiError(401, 0, '401: Unauthorized');
      const user = this.#users.get(grant.userId);
      return user ? { status: 200, body: user } : apiError(404, 10_013, 'Unknown User');
    }
    if (
      req.method === 'GET' &&
      req.path === '/users/@me/guilds' &&
      /^Bearer /.test(req.headers.authorization ?? '')
    )
      return this.#guilds(req);
    const metadataRoute = /^\/applications\/([^/]+)\/role-connections\/metadata$/.exec(req.path);
    if (metadataRoute) return this.#metadata(req, metadataRoute[1] ?? '');
    const connectionRoute = /^\/users\/@me\/applications\/([^/]+)\/role-connection$/.exec(req.path);
    if (connectionRoute) return this.#roleConnection(req, connectionRoute[1] ?? '');
    return null;
  }

  /** The user's guilds by id, `limit` (1–200) a page after `after`, as Discord answers them. */
  #guilds(req: ParsedRequest): Answer {
    const grant = this.bearer(req);
    if (!grant) return apiError(401, 0, '401: Unauthorized');
    if (!grant.scopes.includes('guilds')) return apiError(403, 50_001, 'Missing Access');
    const limit = Number(req.query.get('limit') ?? GUILDS_PAGE_MAX);
    if (!Number.isInteger(limit) || limit < 1 || limit > GUILDS_PAGE_MAX)
      return apiError(400, 50_035, 'Invalid Form Body');
    const afterText = req.query.get('after') ?? '';
    const after = BigInt(/^\d{1,20}$/.test(afterText) ? afterText : '0');
    const guilds = this.#guildsOf(grant.userId)
      .filter((g) => BigInt(g.id) > after)
      .sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1))
      .slice(0, limit);
    return { status: 200, body: guilds };
  }

  #metadata(req: ParsedRequest, app: string): Answer {
    if (req.headers.authorization !== `Bot ${this.#botToken}`) return apiError(401, 0, '401: Unauthorized');
    if (app !== this.#applicationId) return apiError(404, 10_002, 'Unknown Application');
    if (req.method === 'GET') return { status: 200, body: this.roleConnectionMetadata };
    if (req.method !== 'PUT') return apiError(405, 0, '405: Method Not Allowed');
    const list = req.body;
    const valid =
      Array.isArray(list) &&
      list.length <= 5 &&
      new Set(list.map((m) => (m as { key?: unknown }).key)).size === list.length &&
      list.every((m: Partial<APIApplicationRoleConnectionMetadata>) => {
        return (
          typeof m.key === 'string' &&
          /^[a-z0-9_]{1,50}$/.test(m.key) &&
          typeof m.name === 'string' &&
          m.name.length >= 1 &&
          m.name.length <= 100 &&
          typeof m.description === 'string' &&
          m.description.length >= 1 &&
          m.description.length <= 200 &&
          localizationsWithin(m.name_localizations, 100) &&
          localizationsWithin(m.description_localizations, 200) &&
          Number.isInteger(m.type) &&
          Number(m.type) >= 1 &&
          Number(m.type) <= 8
        );
      });
    if (!valid) return apiError(400, 50_035, 'Invalid Form Body');
    this.roleConnectionMetadata = list as APIApplicationRoleConnectionMetadata[];
    return { status: 200, body: this.roleConnectionMetadata };
  }

  #roleConnection(req: ParsedRequest, app: string): Answer {
    const grant = this.bearer(req);
    if (!grant) return apiError(401, 0, '401: Unauthorized');
    if (!grant.scopes.includes('role_connections.write')) return apiError(403, 50_001, 'Missing Access');
    if (app !== this.#applicationId) return apiError(404, 10_002, 'Unknown Application');
    const empty = { platform_name: null, platform_username: null, metadata: {} };
    if (req.method === 'GET') return { status: 200, body: this.roleConnections.get(grant.userId) ?? empty };
    if (req.method !== 'PUT') return apiError(405, 0, '405: Method Not Allowed');
    const body = (req.body ?? {}) as Record<string, unknown>;
    const name = body.platform_name ?? null;
    const username = body.platform_username ?? null;
    const metadata = (body.metadata ?? {}) as Record<string, unknown>;
    const types = new Map(this.roleConnectionMetadata.map((m) => [m.key, m.type]));
    const valueOk = (key: string, value: unknown) => {
      const type = types.get(key);
      if (type === undefined || typeof value !== 'string' || value.length > 100) return false;
      if (type <= 4) return /^-?\d+$/.test(value);
      if (type <= 6) return !Number.isNaN(Date.parse(value));
      return value === '0' || value === '1';
    };
    if (
      (name !== null && (typeof name !== 'string' || name.length > 50)) ||
      (username !== null && (typeof username !== 'string' || username.length > 100)) ||
      typeof metadata !== 'object' ||
      !Object.entries(metadata).every(([key, value]) => valueOk(key, value))
    ) {
      return apiError(400, 50_035, 'Invalid Form Body');
    }
    const stored = {
      platform_name: name as string | null,
      platform_username: username as string | null,
      metadata: metadata as Record<string, string>,
    };
    this.roleConnections.set(grant.userId, stored);
    return { status: 200, body: stored };
  }

  /** The form of a token endpoint's request, or the error when it is not form-encoded from this client. */
  #clientForm(req: ParsedRequest): Record<string, string> | Answer {
    if (!req.headers['content-type']?.startsWith('application/x-www-form-urlencoded')) {
      return oauthError(400, 'invalid_request', 'The body must be form-encoded');
    }
    const form = (req.body ?? {}) as Record<string, string>;
    const basic = /^Basic (\S+)$/.exec(req.headers.authorization ?? '')?.[1];
    const [basicId, basicSecret] = basic
      ? Buffer.from(basic, 'base64').toString('utf8').split(':').map(decodeURIComponent)
      : [form.client_id, form.client_secret];
    if (basicId !== this.#applicationId || basicSecret !== this.clientSecret) {
      return oauthError(401, 'invalid_client', 'Invalid client credentials');
    }
    return form;
  }

  /** `POST /oauth2/token/revoke`: the access or refresh token named stops working; 200 either way. */
  #revoke(req: ParsedRequest): Answer {
    const form = this.#clientForm(req);
    if ('status' in form) return form as Answer;
    const token = form.token ?? '';
    if (!token) return oauthError(400, 'invalid_request', 'Missing "token" in request.');
    this.#accessTokens.delete(token);
    this.#refreshTokens.delete(token);
    this.revokedTokens.push(token);
    return { status: 200, body: {} };
  }

  #token(req: ParsedRequest): Answer {
    const form = this.#clientForm(req);
    if ('status' in form) return form as Answer;
    if (form.grant_type === 'authorization_code') {
      const code = this.#codes.get(form.code ?? '');
      if (!code || code.used || code.expiresAt <= Date.now()) {
        if (code) code.used = true;
        return oauthError(400, 'invalid_grant', 'Invalid "code" in request.');
      }
      code.used = true;
      if (form.redirect_uri !== code.redirectUri) {
        return oauthError(400, 'invalid_grant', 'Invalid "redirect_uri" in request.');
      }
      return this.#issue(code);
    }
    if (form.grant_type === 'refresh_token') {
      const grant = this.#refreshTokens.get(form.refresh_token ?? '');
      if (!grant) return oauthError(400, 'invalid_grant', 'Invalid "refresh_token" in request.');
      this.#refreshTokens.delete(form.refresh_token ?? '');
      return this.#issue(grant);
    }
    return oauthError(400, 'unsupported_grant_type', 'Unsupported grant type');
  }

  #issue(grant: Grant): Answer {
    const accessToken = `fake-access.${randomBytes(18).toString('base64url')}`;
    const refreshToken = `fake-refresh.${randomBytes(18).toString('base64url')}`;
    this.#accessTokens.set(accessToken, {
      userId: grant.userId,
      scopes: grant.scopes,
      expiresAt: Date.now() + ACCESS_TOKEN_TTL_S * 1000,
    });
    this.#refreshTokens.set(refreshToken, { userId: grant.userId, scopes: grant.scopes });
    return {
      status: 200,
      body: {
        access_token: accessToken,
        token_type: 'Bearer',
        expires_in: ACCESS_TOKEN_TTL_S,
        refresh_token: refreshToken,
        scope: grant.scopes.join(' '),
      },
    };
  }
}

function found(location: URL): Answer {
  return { status: 302, headers: { Location: location.toString() } };
}

function page(status: number, text: string): Answer {
  return { status, body: { message: text, code: 0 } };
}

function oauthError(status: number, error: string, description: string): Answer {
  return { status, body: { error, error_description: description } };
}

/** A localization map as Discord takes it: locale -> text of 1..`max` characters (or none at all). */
function localizationsWithin(map: unknown, max: number): boolean {
  if (map === undefined || map === null) return true;
  if (typeof map !== 'object') return false;
  return Object.values(map).every(
    (text) => typeof text === 'string' && text.length >= 1 && text.length <= max,
  );
}
