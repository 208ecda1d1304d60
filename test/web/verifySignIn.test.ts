import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import type { DiscordOAuthConfig } from '../../src/discord/oauth.ts';
import { buildSiweMessage, type SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { TestBrowser } from '../testBrowser.ts';

const GUILD = '111111111111111111';
const ALICE = '222222222222222222';
const MALLORY = '333333333333333333';
const CLIENT_SECRET = 'client-secret-never-shown-0123456789';
const wallet = privateKeyToAccount(generatePrivateKey());

let discord: FakeDiscord;
let store: GatingStore;
let server: WebServer;
let siwe: SiweConfig;
let oauth: DiscordOAuthConfig;
let verified: { record: NonceRecord; address: string }[];
let logs: string[];

beforeEach(async () => {
  discord = await startFakeDiscord({ clientSecret: CLIENT_SECRET });
  discord.addUser({ id: ALICE, username: 'alice' });
  discord.addUser({ id: MALLORY, username: '<b>mallory</b>' });
  store = await openSqliteStore(':memory:');
  siwe = { publicUrl: 'http://placeholder.invalid' };
  oauth = {
    clientId: discord.applicationId,
    clientSecret: CLIENT_SECRET,
    apiUrl: discord.apiUrl,
    publicUrl: 'http://placeholder.invalid',
  };
  verified = [];
  logs = [];
  const capture = (obj: object, msg?: string) => logs.push(JSON.stringify({ ...obj, msg }));
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    oauth,
    logger: { info: capture, warn: capture, error: capture },
    onVerified: async (result) => {
      verified.push(result);
      return { ok: true };
    },
  });
  siwe.publicUrl = server.url;
  oauth.publicUrl = server.url;
  discord.oauth.allowRedirect(`${server.url}/oauth/callback`);
});

afterEach(async () => {
  await server.close();
  await store.close();
  await discord.close();
});

async function challengeFor(userId: string) {
  return createChallenge(store, siwe, {
    guildId: GUILD,
    userId,
    userName: userId === ALICE ? 'alice' : 'mallory',
    guildName: 'Web3 Lounge',
    identity: 'vitalik.eth',
    address: wallet.address,
  });
}

/** Signs the link's message with the wallet and posts it from `browser`. */
async function signFrom(browser: TestBrowser, nonce: string) {
  const url = `${server.url}/verify/${nonce}`;
  const got = await fetch(`${url}/message`, { headers: { cookie: browser.cookieHeader(`${url}/message`) } });
  if (got.status !== 200) return { status: got.status, body: await got.json() };
  const record = await store.getNonce(nonce);
  if (!record) throw new Error('no record');
  const signature = await wallet.signMessage({ message: buildSiweMessage(siwe, record) });
  const sent = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: browser.cookieHeader(url) },
    body: JSON.stringify({ signature }),
  });
  return { status: sent.status, body: await sent.json() };
}

function noSecretsIn(text: string): void {
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toMatch(/fake-access\.|fake-refresh\./);
  for (const code of discord.oauth.issuedCodes) expect(text).not.toContain(code);
  for (const state of discord.oauth.authorizeStates) expect(text).not.toContain(state);
}

describe('signing page behind Discord sign-in', () => {
  it('sends the browser through Discord and lets the account the link was made for sign', async () => {
    const { nonce } = await challengeFor(ALICE);
    discord.oauth.signInAs(ALICE);
    const browser = new TestBrowser();
    const page = await browser.open(`${server.url}/verify/${nonce}`);

    expect(page.hops).toHaveLength(4);
    const authorize = new URL(page.hops[1] ?? '');
    expect(authorize.origin).toBe(new URL(discord.apiUrl).origin);
    expect(authorize.pathname).toBe('/oauth2/authorize');
    expect(authorize.searchParams.get('scope')).toBe('identify');
    expect(authorize.searchParams.get('client_id')).toBe(discord.applicationId);
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${server.url}/oauth/callback`);
    expect(page.hops[2]).toMatch(/\/oauth\/callback\?/);
    expect(page.url).toBe(`${server.url}/verify/${nonce}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Link your wallet to Discord');
    expect(page.text).toContain('@alice');

    await expect(signFrom(browser, nonce)).resolves.toMatchObject({ status: 200, body: { ok: true } });
    expect(verified).toHaveLength(1);
    expect(verified[0]?.record.userId).toBe(ALICE);
    // The token was read once by /users/@me and nothing else used it.
    const bearerCalls = discord.requests.filter((r) => r.headers.authorization?.startsWith('Bearer '));
    expect(bearerCalls.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /users/@me']);
    noSecretsIn(logs.join('\n'));
    noSecretsIn(page.text);
  });

  it('refuses another Discord account with a page naming whose link it is, and logs the attempt', async () => {
    const { nonce } = await challengeFor(ALICE);
    discord.oauth.signInAs(MALLORY);
    const browser = new TestBrowser();
    const page = await browser.open(`${server.url}/verify/${nonce}`);

    expect(page.status).toBe(403);
    expect(page.text).toContain('This link belongs to someone else');
    expect(page.text).toContain('@alice');
    expect(page.text).toContain('@&#60;b&#62;mallory&#60;/b&#62;');
    expect(page.text).not.toContain('<b>mallory');
    expect(page.text).not.toContain('<script');
    expect(logs.join('\n')).toMatch(/another Discord account/);
    expect(logs.join('\n')).toContain(MALLORY);

    // Mallory cannot fetch the message or sign, even with a valid signature from the wallet.
    await expect(signFrom(browser, nonce)).resolves.toMatchObject({
      status: 401,
      body: { reason: 'sign_in' },
    });
    const record = await store.getNonce(nonce);
    if (!record) throw new Error('no record');
    const signature = await wallet.signMessage({ message: buildSiweMessage(siwe, record) });
    const forged = await fetch(`${server.url}/verify/${nonce}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        cookie: `verify_session=${'A'.repeat(43)}`,
      },
      body: JSON.stringify({ signature }),
    });
    expect(forged.status).toBe(401);
    expect(verified).toEqual([]);
    expect((await store.getNonce(nonce))?.usedAt).toBeNull();
    noSecretsIn(logs.join('\n'));
  });

  it('refuses a session cookie made for another link', async () => {
    const mine = await challengeFor(MALLORY);
    const theirs = await challengeFor(ALICE);
    discord.oauth.signInAs(MALLORY);
    const browser = new TestBrowser();
    await browser.open(`${server.url}/verify/${mine.nonce}`);
    const session = browser.cookie('verify_session');
    expect(session).toBeDefined();
    const res = await fetch(`${server.url}/verify/${theirs.nonce}/message`, {
      headers: { cookie: `verify_session=${session}` },
    });
    expect(res.status).toBe(401);
  });

  it('refuses a replayed state, and a callback finished in another browser', async () => {
    const { nonce } = await challengeFor(ALICE);
    discord.oauth.signInAs(ALICE);
    const browser = new TestBrowser();
    const first = await browser.open(`${server.url}/verify/${nonce}`);
    const callback = first.hops[2] ?? '';
    expect(first.status).toBe(200);

    // The same browser replays the callback (with its state cookie put back): the state is spent.
    const state = new URL(callback).searchParams.get('state') ?? '';
    const replay = await fetch(callback, {
      redirect: 'manual',
      headers: { cookie: `discord_oauth_state=${state}` },
    });
    expect(replay.status).toBe(400);
    const replayText = await replay.text();
    expect(replayText).toContain('This sign-in has expired or was already used');
    expect(replay.headers.get('set-cookie') ?? '').not.toContain('verify_session=');

    // An attacker signs in as themselves for their own link and forwards the callback URL to a victim.
    const attackers = await challengeFor(MALLORY);
    discord.oauth.signInAs(MALLORY);
    const attacker = new TestBrowser();
    const authorize = await fetch(`${server.url}/verify/${attackers.nonce}`, { redirect: 'manual' });
    const stateCookie = authorize.headers.getSetCookie().join('\n');
    expect(stateCookie).toMatch(/discord_oauth_state=.*HttpOnly; SameSite=Lax/);
    const atDiscord = await fetch(authorize.headers.get('location') ?? '', { redirect: 'manual' });
    const forwarded = atDiscord.headers.get('location') ?? '';
    const victim = new TestBrowser();
    const landed = await victim.open(forwarded);
    expect(landed.status).toBe(400);
    expect(landed.text).toContain('This sign-in started in another browser');
    expect(victim.cookie('verify_session')).toBeUndefined();
    expect(attacker.cookie('verify_session')).toBeUndefined();
    noSecretsIn(logs.join('\n'));
  });

  it('shows a clear page when the member cancels on Discord, and a retry link', async () => {
    const { nonce } = await challengeFor(ALICE);
    discord.oauth.signInAs(null);
    const page = await new TestBrowser().open(`${server.url}/verify/${nonce}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Discord sign-in canceled');
    expect(page.text).toContain(`href="${server.url}/verify/${nonce}"`);
  });

  it('shows a clear page when the code exchange fails, with no secret or stack in it', async () => {
    const { nonce } = await challengeFor(ALICE);
    discord.oauth.signInAs(ALICE);
    discord.addFault({ method: 'POST', path: /^\/oauth2\/token$/, status: 500 });
    const page = await new TestBrowser().open(`${server.url}/verify/${nonce}`);
    expect(page.status).toBe(502);
    expect(page.text).toContain('Discord sign-in failed');
    expect(page.text).not.toMatch(/Error|at .*\.ts/);
    expect(logs.join('\n')).toMatch(/discord sign-in failed.*|"status":500/);
    noSecretsIn(logs.join('\n'));
    noSecretsIn(page.text);
  });

  it('shows a clear page when the client secret is wrong, without echoing it', async () => {
    const { nonce } = await challengeFor(ALICE);
    oauth.clientSecret = 'a-wrong-secret-value-987654321';
    discord.oauth.signInAs(ALICE);
    const page = await new TestBrowser().open(`${server.url}/verify/${nonce}`);
    expect(page.status).toBe(502);
    expect(logs.join('\n')).toContain('invalid_client');
    expect(logs.join('\n')).not.toContain('a-wrong-secret-value-987654321');
    noSecretsIn(page.text);
  });

  it('limits the sign-ins one client can start (each stores a state)', async () => {
    const { nonce } = await challengeFor(ALICE);
    const statuses: number[] = [];
    for (let i = 0; i < 31; i += 1) {
      const res = await fetch(`${server.url}/verify/${nonce}`, { redirect: 'manual' });
      statuses.push(res.status);
      await res.arrayBuffer();
    }
    expect(statuses.slice(0, 30)).toEqual(Array(30).fill(303));
    expect(statuses[30]).toBe(429);
  });

  it('sends no one to Discord for a used or expired link', async () => {
    const page = await new TestBrowser().open(`${server.url}/verify/${'b'.repeat(32)}`);
    expect(page.hops).toHaveLength(1);
    expect(page.text).toContain('This link has expired');
  });
});
