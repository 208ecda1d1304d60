/**
 * Linked Roles end to end through the stand-ins: the verification URL signs in with Discord
 * (`identify role_connections.write`), the member proves an identity by its record, the metadata is
 * written to the stand-in Discord; re-checks follow the credentials (never worse on a failed lookup),
 * refresh the token before it expires, mark the connection stale when Discord refuses the refresh;
 * clearing empties the metadata. No guild, no gateway, no Manage Roles anywhere.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DiscordOAuthConfig } from '../../src/gating/discordOAuth.ts';
import { Evaluator } from '../../src/gating/evaluation.ts';
import { LinkedRoleService, REFRESH_MARGIN_MS } from '../../src/gating/linkedRoleService.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles.ts';
import { startVerifyServer, type VerifyServer } from '../../src/gating/verifyServer.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { Web3BioClient } from '../../src/web3bio/client.ts';
import { type FakeDiscord, startFakeDiscord } from '../fakes/discord/server.ts';
import { ensProfile, gatingCredentials, nextAddress } from '../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { TestBrowser } from './signInBrowser.ts';

const ALICE = '222222222222222222';
const CLIENT_SECRET = 'client-secret-never-shown-0123456789';
const BOT_TOKEN = 'bot-token-linked-roles-0123';
const KEY = Buffer.alloc(32, 7);

let discord: FakeDiscord;
let web3: FakeWeb3Bio;
let web3bio: Web3BioClient;
let store: GatingStore;
let server: VerifyServer;
let service: LinkedRoleService;
let clock: { t: number };
let logs: string[];

beforeEach(async () => {
  discord = await startFakeDiscord({ clientSecret: CLIENT_SECRET, token: BOT_TOKEN });
  discord.addUser({ id: ALICE, username: 'alice' });
  web3 = await startFakeWeb3Bio({ seed: false });
  web3bio = new Web3BioClient({
    baseUrl: web3.url,
    rateLimit: null,
    retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 },
    timeoutMs: 2_000,
  });
  clock = { t: Date.now() };
  const now = () => clock.t;
  store = await openSqliteStore(':memory:', { now });
  logs = [];
  const capture = (obj: object, msg?: string) => logs.push(JSON.stringify({ ...obj, msg }));
  const logger = { info: capture, warn: capture, error: capture };
  const oauth: DiscordOAuthConfig = {
    clientId: discord.applicationId,
    clientSecret: CLIENT_SECRET,
    apiUrl: discord.apiUrl,
    publicUrl: 'http://placeholder.invalid',
  };
  const evaluator = new Evaluator({ web3bio, store, logger: pino({ level: 'silent' }), now });
  service = new LinkedRoleService({ store, oauth, key: KEY, evaluator, logger, now });
  server = await startVerifyServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe: { publicUrl: 'http://placeholder.invalid', now },
    logger,
    onVerified: async () => ({ ok: true }),
    linkedRoles: { oauth, key: KEY, evaluator, service },
    maxSignInsPerClient: 5,
  });
  oauth.publicUrl = server.url;
  discord.oauth.allowRedirect(`${server.url}/linked-role/callback`);
  const registered = await fetch(
    `${discord.apiUrl}/v10/applications/${discord.applicationId}/role-connections/metadata`,
    {
      method: 'PUT',
      headers: { authorization: `Bot ${BOT_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(ROLE_CONNECTION_METADATA),
    },
  );
  expect(registered.status).toBe(200);
});

afterEach(async () => {
  await server.close();
  await store.close();
  await web3bio.close();
  await Promise.all([discord.close(), web3.close()]);
});

let seed = 0;
function identity(opts: { handle?: string; human?: boolean; spam?: boolean } = {}): string {
  seed += 1;
  const name = `linked${seed}x${Date.now().toString(36)}.eth`;
  web3.world.addProfile(ensProfile(name, nextAddress(), opts.handle ?? 'alice'));
  web3.world.setCredentials(name, gatingCredentials(name, opts));
  return name;
}

async function connect(name: string) {
  discord.oauth.signInAs(ALICE);
  const browser = new TestBrowser();
  const form = await browser.open(`${server.url}/linked-role`);
  const proved = await browser.open(`${server.url}/linked-role/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ identity: name }).toString(),
  });
  return { browser, form, proved };
}

function noTokensIn(text: string): void {
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toMatch(/fake-access\.|fake-refresh\./);
}

describe('PUBLIC_URL/linked-role', () => {
  it('signs in with identify role_connections.write, proves the record, and writes the metadata', async () => {
    const name = identity({ human: true });
    const { form, proved } = await connect(name);
    const authorize = new URL(form.hops[1] ?? '');
    expect(authorize.pathname).toBe('/oauth2/authorize');
    expect(authorize.searchParams.get('scope')).toBe('identify role_connections.write');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${server.url}/linked-role/callback`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('@alice');
    expect(proved.status).toBe(200);
    expect(proved.text).toContain('Connected');

    expect(discord.oauth.roleConnections.get(ALICE)).toEqual({
      platform_name: 'Web3.bio',
      platform_username: name,
      metadata: expect.objectContaining({ likely_human: '1', not_spam: '1', not_risky: '1' }),
    });
    const record = await store.getRoleConnection(ALICE);
    expect(record).toMatchObject({ identity: name, staleSince: null, writtenAt: clock.t });
    noTokensIn(JSON.stringify(record));
    noTokensIn(logs.join('\n'));
  });

  it('refuses an identity whose record names someone else, and writes nothing', async () => {
    const name = identity({ handle: 'mallory', human: true });
    const { proved } = await connect(name);
    expect(proved.status).toBe(403);
    expect(proved.text).toContain('does not name your Discord username');
    expect(discord.oauth.roleConnections.has(ALICE)).toBe(false);
    expect(await store.getRoleConnection(ALICE)).toBeUndefined();
  });

  it('refuses a proof without the sign-in and a replayed callback', async () => {
    const name = identity();
    const direct = await fetch(`${server.url}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `identity=${name}`,
    });
    expect(direct.status).toBe(401);
    const { browser, form } = await connect(name);
    const replay = await browser.open(form.hops[2] ?? '');
    expect(replay.status).toBe(400);
    expect(discord.oauth.roleConnections.get(ALICE)?.platform_username).toBe(name);
  });

  it('limits sign-ins per client address, since each one stores a state', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const started = await fetch(`${server.url}/linked-role`, { redirect: 'manual' });
      await started.arrayBuffer();
      statuses.push(started.status);
    }
    expect(statuses).toEqual([303, 303, 303, 303, 303, 429]);
  });
});

describe('Linked Roles re-checks', () => {
  it('follow the credentials (flags at once, losses confirmed), never write worse metadata on a failed lookup, and clear', async () => {
    const name = identity({ human: true });
    await connect(name);
    expect(await service.recheckAll()).toMatchObject({ unchanged: 1 });

    web3.world.setCredentials(name, gatingCredentials(name, { human: true, spam: true }));
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ not_spam: '0' });

    web3.world.setCredentials(name, gatingCredentials(name, { human: false }));
    web3.addFault({ match: 'credential', action: { kind: 'status', status: 503 } });
    expect(await service.recheckAll()).toMatchObject({ lookup_failed: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '1',
      not_spam: '0',
    });
    web3.clearFaults();
    // The flag clears at once; the lost humanity waits to be seen again an hour (confirmMs) later.
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '1',
      not_spam: '1',
    });
    const firstSeen = (await store.getRoleConnection(ALICE))?.lossSeenAt;
    expect(firstSeen).toBe(clock.t);
    clock.t += 30 * 60_000;
    expect(await service.recheckAll()).toMatchObject({ loss_pending: 1 });
    expect((await store.getRoleConnection(ALICE))?.lossSeenAt).toBe(firstSeen);
    clock.t += 30 * 60_000;
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '0',
      not_spam: '1',
    });
    expect((await store.getRoleConnection(ALICE))?.lossSeenAt).toBeNull();

    expect(await service.clear(ALICE)).toBe(true);
    expect(discord.oauth.roleConnections.get(ALICE)).toEqual({
      platform_name: null,
      platform_username: null,
      metadata: {},
    });
    expect(await store.getRoleConnection(ALICE)).toBeUndefined();
    expect(await service.clear(ALICE)).toBe(false);
  });

  it('refresh the token before it expires, and mark the connection stale when Discord refuses', async () => {
    const name = identity({ human: true });
    await connect(name);
    const first = await store.getRoleConnection(ALICE);
    if (!first) throw new Error('no connection');
    clock.t = first.accessExpiresAt - REFRESH_MARGIN_MS + 1_000;
    expect(await service.recheckAll()).toMatchObject({ unchanged: 1 });
    const refreshed = await store.getRoleConnection(ALICE);
    expect(refreshed?.accessExpiresAt).toBeGreaterThan(first.accessExpiresAt);
    expect(refreshed?.sealedRefreshToken).not.toBe(first.sealedRefreshToken);

    discord.oauth.revokeUser(ALICE);
    clock.t = (refreshed?.accessExpiresAt ?? 0) - REFRESH_MARGIN_MS + 1_000;
    expect(await service.recheckAll()).toMatchObject({ stale: 1 });
    expect(await service.status(ALICE)).toMatchObject({ identity: name, stale: true });
    expect(await store.getRoleConnection(ALICE)).toMatchObject({
      sealedAccessToken: null,
      sealedRefreshToken: null,
    });
    // A stale connection is left out of later passes until the member connects again.
    expect(await service.recheckAll()).toMatchObject({ stale: 0, written: 0, unchanged: 0 });
    await connect(name);
    expect(await service.status(ALICE)).toMatchObject({ identity: name, stale: false });
    noTokensIn(logs.join('\n'));
  });
});
