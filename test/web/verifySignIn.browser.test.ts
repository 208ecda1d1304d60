/**
 * The Discord sign-in in front of the signing page, in headless Chromium: the real page, the bot's
 * verify server and the stand-in Discord's authorize page, with an injected EIP-1193 test wallet.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import type { DiscordOAuthConfig } from '../../src/discord/oauth.ts';
import type { SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { launchChromium } from '../gating/chromium.ts';
import { installEvmWallets } from '../gating/testWallets.ts';

const GUILD = '111111111111111111';
const ALICE = '222222222222222222';
const MALLORY = '333333333333333333';
const SECRET = 'browser-test-client-secret';
const wallet = privateKeyToAccount(generatePrivateKey());

let browser: Browser;
let discord: FakeDiscord;
let server: WebServer;
let store: GatingStore;
let context: BrowserContext;
const siwe: SiweConfig = { publicUrl: 'http://placeholder.invalid' };
const verified: { record: NonceRecord; address: string }[] = [];
const warnings: string[] = [];

beforeAll(async () => {
  discord = await startFakeDiscord({ clientSecret: SECRET });
  discord.addUser({ id: ALICE, username: 'alice' });
  discord.addUser({ id: MALLORY, username: 'mallory' });
  store = await openSqliteStore(':memory:');
  const oauth: DiscordOAuthConfig = {
    clientId: discord.applicationId,
    clientSecret: SECRET,
    apiUrl: discord.apiUrl,
    publicUrl: siwe.publicUrl,
  };
  const quiet = () => {};
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    oauth,
    logger: { info: quiet, error: quiet, warn: (_obj, msg) => warnings.push(msg ?? '') },
    onVerified: async (result) => {
      verified.push(result);
      return { ok: true };
    },
  });
  siwe.publicUrl = server.url;
  oauth.publicUrl = server.url;
  discord.oauth.allowRedirect(`${server.url}/oauth/callback`);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
  await discord?.close();
});

beforeEach(() => {
  verified.length = 0;
  warnings.length = 0;
});
afterEach(async () => {
  await context?.close();
});

/** A fresh browser profile with an EIP-1193 wallet holding `wallet`'s key (signing happens in Node). */
async function openBrowser() {
  context = await browser.newContext();
  await installEvmWallets(context, { injected: wallet });
  const page = await context.newPage();
  const callbacks: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/oauth/callback')) callbacks.push(request.url());
  });
  return { page, callbacks };
}

function challengeFor(userId: string) {
  return createChallenge(store, siwe, {
    guildId: GUILD,
    userId,
    userName: userId === ALICE ? 'alice' : 'mallory',
    guildName: 'Web3 Lounge',
    identity: 'vitalik.eth',
    address: wallet.address,
  });
}

describe('signing page behind the Discord sign-in, in headless Chromium', () => {
  it('lets the account the link was made for sign after signing in with Discord', async () => {
    const challenge = await challengeFor(ALICE);
    discord.oauth.signInAs(ALICE);
    const { page, callbacks } = await openBrowser();
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    expect(page.url()).toBe(`${server.url}/verify/${challenge.nonce}`);
    expect(callbacks).toHaveLength(1);
    await expect(page.getByRole('main').textContent()).resolves.toContain('@alice');
    await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
    await page.getByRole('status').getByText('your roles will update in Discord').waitFor({ timeout: 5_000 });
    expect(verified).toHaveLength(1);
    expect(verified[0]?.record.userId).toBe(ALICE);
    const cookies = await context.cookies(`${server.url}/verify/${challenge.nonce}`);
    expect(cookies.find((c) => c.name === 'verify_session')).toMatchObject({
      httpOnly: true,
      sameSite: 'Lax',
      path: `/verify/${challenge.nonce}`,
    });
  });

  it('refuses another Discord account with a page saying whose link it is', async () => {
    const challenge = await challengeFor(ALICE);
    discord.oauth.signInAs(MALLORY);
    const { page } = await openBrowser();
    const response = await page.goto(`${server.url}/verify/${challenge.nonce}`);
    expect(response?.status()).toBe(403);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'This link belongs to someone else',
    );
    const text = (await page.getByRole('main').textContent()) ?? '';
    expect(text).toContain('made for the Discord account @alice');
    expect(text).toContain('you signed in to Discord as @mallory');
    await expect(page.getByRole('button').count()).resolves.toBe(0);
    // Going to the link again sends Mallory back through Discord, never to the signing page.
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'This link belongs to someone else',
    );
    expect(verified).toEqual([]);
    expect(warnings).toContain('signing link opened by another Discord account: refused');
  });

  it('refuses a replayed state', async () => {
    const challenge = await challengeFor(ALICE);
    discord.oauth.signInAs(ALICE);
    const { page, callbacks } = await openBrowser();
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Link your wallet to Discord',
    );
    const callback = callbacks[0] ?? '';
    // Put the state cookie back as it was before the callback, then replay the callback in this browser.
    const state = new URL(callback).searchParams.get('state') ?? '';
    await context.addCookies([
      { name: 'discord_oauth_state', value: state, url: `${server.url}/oauth/callback` },
    ]);
    const replay = await page.goto(callback);
    expect(replay?.status()).toBe(400);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'This sign-in has expired or was already used',
    );
    expect(verified).toEqual([]);
  });
});
