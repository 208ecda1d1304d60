import { PermissionFlagsBits } from 'discord-api-types/v10';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { ALL_PERMISSIONS } from '../../fakes/discord/state.ts';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  DiscordOAuthError,
  exchangeCode,
  fetchCurrentUser,
  fetchCurrentUserGuilds,
  isSignInProof,
  newOAuthState,
  type OAuthScope,
  signInProof,
} from '../../src/discord/oauth.ts';

const USER = '444444444444444444';
const SECRET = 'oauth-client-secret-abcdef';
const PUBLIC = 'https://bot.example.org/prefix';
let discord: FakeDiscord;
let cfg: DiscordOAuthConfig;

beforeEach(async () => {
  discord = await startFakeDiscord({ clientSecret: SECRET });
  discord.addUser({ id: USER, username: 'alice', global_name: 'Alice' });
  discord.oauth.allowRedirect(`${PUBLIC}/oauth/callback`);
  cfg = { clientId: discord.applicationId, clientSecret: SECRET, apiUrl: discord.apiUrl, publicUrl: PUBLIC };
});
afterEach(async () => {
  await discord.close();
});

/** Plays the browser on Discord's authorize page; returns the redirect back. */
async function authorize(scopes: OAuthScope[], redirectPath = '/oauth/callback') {
  const url = authorizeUrl(cfg, { scopes, state: newOAuthState().state, redirectPath });
  const res = await fetch(url, { redirect: 'manual' });
  return { status: res.status, location: res.headers.get('location') };
}

async function codeFor(scopes: OAuthScope[]) {
  discord.oauth.signInAs(USER);
  const back = await authorize(scopes);
  return new URL(back.location ?? '').searchParams.get('code') ?? '';
}

async function failure(promise: Promise<unknown>): Promise<DiscordOAuthError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(error instanceof DiscordOAuthError))
    throw new Error(`expected a DiscordOAuthError, got ${String(error)}`);
  return error;
}

describe('Discord OAuth2 client against the stand-in', () => {
  it('builds the authorize URL on the API origin with the redirect below PUBLIC_URL', () => {
    const url = new URL(
      authorizeUrl(
        { ...cfg, apiUrl: 'https://discord.com/api' },
        { scopes: ['identify'], state: 's', redirectPath: '/oauth/callback' },
      ),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://discord.com/oauth2/authorize');
    expect(url.searchParams.get('redirect_uri')).toBe('https://bot.example.org/prefix/oauth/callback');
    expect(url.searchParams.get('response_type')).toBe('code');
  });

  it("builds it on DISCORD_WEB_URL's origin when set: browsers never open the bot's REST proxy", () => {
    const url = new URL(
      authorizeUrl(
        { ...cfg, apiUrl: 'http://rest-proxy:8080/api', webUrl: 'https://discord.com/api' },
        { scopes: ['identify'], state: 's', redirectPath: '/oauth/callback' },
      ),
    );
    expect(`${url.origin}${url.pathname}`).toBe('https://discord.com/oauth2/authorize');
  });

  it('exchanges a code once and reads the user with the token', async () => {
    const code = await codeFor(['identify']);
    const grant = await exchangeCode(cfg, { code, redirectPath: '/oauth/callback', needs: ['identify'] });
    await expect(fetchCurrentUser(cfg, grant.accessToken)).resolves.toEqual({
      id: USER,
      username: 'alice',
      globalName: 'Alice',
    });
    const again = await failure(
      exchangeCode(cfg, { code, redirectPath: '/oauth/callback', needs: ['identify'] }),
    );
    expect(again.kind).toBe('invalid_grant');
  });

  it('refuses an unregistered redirect at the authorize page and a different one at the exchange', async () => {
    discord.oauth.signInAs(USER);
    await expect(authorize(['identify'], '/elsewhere')).resolves.toMatchObject({
      status: 400,
      location: null,
    });
    const code = await codeFor(['identify']);
    const error = await failure(
      exchangeCode(cfg, { code, redirectPath: '/linked-role/callback', needs: ['identify'] }),
    );
    expect(error.kind).toBe('invalid_grant');
  });

  it('enforces scopes: a grant without identify is refused, and its token cannot read the user', async () => {
    const code = await codeFor(['role_connections.write']);
    const error = await failure(
      exchangeCode(cfg, { code, redirectPath: '/oauth/callback', needs: ['identify'] }),
    );
    expect(error.kind).toBe('scope');
    const other = await codeFor(['role_connections.write']);
    const grant = await exchangeCode(cfg, { code: other, redirectPath: '/oauth/callback', needs: [] });
    const read = await failure(fetchCurrentUser(cfg, grant.accessToken));
    expect(read.status).toBe(401);
  });

  it('lists the servers the account is in with its server-level permissions, across pages, with the guilds scope only', async () => {
    const owned = discord.addGuild({ name: 'Owned', ownerId: USER });
    const modded = discord.addGuild({ name: 'Modded' });
    const mod = discord.addRole(modded.id, {
      name: 'Mods',
      permissions: String(PermissionFlagsBits.ManageGuild),
    });
    discord.addMember(modded.id, { id: USER, username: 'alice' }, { roles: [mod.id] });
    const admin = discord.addGuild({ name: 'Admin', botInstalled: false });
    const adminRole = discord.addRole(admin.id, {
      name: 'Admins',
      permissions: String(PermissionFlagsBits.Administrator),
    });
    discord.addMember(admin.id, { id: USER, username: 'alice' }, { roles: [adminRole.id] });
    discord.addGuild({ name: 'Not a member' });
    // Channel overwrites never show: the list carries server-level permissions only.
    discord.setChannelOverwrite(modded.id, modded.textChannelId, {
      id: USER,
      type: 'member',
      allow: PermissionFlagsBits.ManageRoles,
    });
    const code = await codeFor(['identify', 'guilds']);
    const grant = await exchangeCode(cfg, { code, redirectPath: '/oauth/callback', needs: ['guilds'] });
    const guilds = await fetchCurrentUserGuilds(cfg, grant.accessToken);
    const everyone = BigInt(modded.roles.get(modded.everyoneRoleId)?.permissions ?? '0');
    expect(guilds.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { id: admin.id, name: 'Admin', icon: null, owner: false, permissions: ALL_PERMISSIONS },
      {
        id: modded.id,
        name: 'Modded',
        icon: null,
        owner: false,
        permissions: everyone | PermissionFlagsBits.ManageGuild,
      },
      { id: owned.id, name: 'Owned', icon: null, owner: true, permissions: ALL_PERMISSIONS },
    ]);
    // Pages of 200: the client reads on past a full page.
    for (let i = 0; i < 200; i++) discord.addMember(discord.addGuild({}).id, { id: USER, username: 'alice' });
    expect(await fetchCurrentUserGuilds(cfg, grant.accessToken)).toHaveLength(203);
    const pages = discord.requests.filter((r) => r.path === '/users/@me/guilds');
    expect(pages.slice(-2).map((r) => r.query)).toEqual([
      { limit: '200', after: '0' },
      { limit: '200', after: expect.stringMatching(/^\d+$/) },
    ]);
    const identifyOnly = await codeFor(['identify']);
    const narrow = await exchangeCode(cfg, {
      code: identifyOnly,
      redirectPath: '/oauth/callback',
      needs: [],
    });
    expect((await failure(fetchCurrentUserGuilds(cfg, narrow.accessToken))).status).toBe(403);
    expect((await failure(fetchCurrentUserGuilds(cfg, 'not-a-token'))).status).toBe(401);
  });

  it('reports a wrong secret as invalid_client without the secret in the error', async () => {
    const code = await codeFor(['identify']);
    const error = await failure(
      exchangeCode(
        { ...cfg, clientSecret: 'wrong-secret-xyz' },
        { code, redirectPath: '/oauth/callback', needs: ['identify'] },
      ),
    );
    expect(error.kind).toBe('invalid_client');
    expect(`${error.message} ${JSON.stringify(error)}`).not.toMatch(/wrong-secret-xyz|oauth-client-secret/);
  });

  it('reports an unreachable Discord as a network error', async () => {
    const error = await failure(fetchCurrentUser({ ...cfg, apiUrl: 'http://127.0.0.1:9/api' }, 'token'));
    expect(error.kind).toBe('network');
  });

  it('makes sign-in proofs bound to the link, the account and the secret', () => {
    const proof = signInProof(cfg, 'nonce-1', USER);
    expect(isSignInProof(cfg, 'nonce-1', USER, proof)).toBe(true);
    expect(isSignInProof(cfg, 'nonce-2', USER, proof)).toBe(false);
    expect(isSignInProof(cfg, 'nonce-1', '555555555555555555', proof)).toBe(false);
    expect(isSignInProof({ clientSecret: 'another-secret' }, 'nonce-1', USER, proof)).toBe(false);
    expect(isSignInProof(cfg, 'nonce-1', USER, undefined)).toBe(false);
    expect(isSignInProof(cfg, 'nonce-1', USER, `${proof}x`)).toBe(false);
  });
});
