/**
 * The Linked Roles page end to end in headless Chromium: the real bot (LINKED_ROLES_ENABLED, role
 * gating off) serving PUBLIC_URL/linked-role, the stand-in Discord's authorize page, token exchange,
 * /users/@me and role-connection routes, the stand-in Web3.bio, and injected test wallets. A member
 * proves an identity by its record, by an EVM signature (EIP-6963 or window.ethereum) or by a Solana
 * signature; the connection follows the credentials at a re-check, survives nothing after /unverify,
 * goes stale when the member revokes the app; a replayed `state` and another account are refused.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { launchChromium } from '../gating/chromium.ts';
import { installEvmWallets, installSolanaWallet, solanaKey } from '../gating/testWallets.ts';
import { addIdentity, closeGating, type GatingHarness, startGating } from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';
import { freePort } from './processes.ts';

const CLIENT_SECRET = 'linked-browser-client-secret-0123456789';
const ENCRYPTION_KEY = 'ab'.repeat(32);

let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
  await closeGating();
});

interface Linked {
  g: GatingHarness;
  publicUrl: string;
}

async function startLinked(): Promise<Linked> {
  // PUBLIC_URL must be where Chromium reaches the bot, so the port is known up front.
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const g = await startGating({
    discord: { clientSecret: CLIENT_SECRET },
    env: {
      GATING_ENABLED: 'false',
      LINKED_ROLES_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: CLIENT_SECRET,
      TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
      PUBLIC_URL: publicUrl,
      HTTP_PORT: String(port),
    },
  });
  const oauth = g.h.discord.oauth;
  Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
  oauth.allowRedirect(`${publicUrl}/linked-role/callback`);
  return { g, publicUrl };
}

/** A fresh browser profile; `wallets` installs test wallets before any page runs. */
async function newBrowser(wallets?: (context: BrowserContext) => Promise<unknown>) {
  const context = await browser.newContext();
  contexts.push(context);
  await wallets?.(context);
  const page = await context.newPage();
  const callbacks: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/linked-role/callback')) callbacks.push(request.url());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return { context, page, callbacks, problems };
}

/** Signs in to Discord as `userId` on PUBLIC_URL/linked-role, landing on the choice of proof. */
async function signIn(l: Linked, page: Page, userId: string): Promise<void> {
  l.g.h.discord.oauth.signInAs(userId);
  const response = await page.goto(`${l.publicUrl}/linked-role`);
  expect(response?.status()).toBe(200);
  await expect(heading(page)).resolves.toBe('Connect a web3 identity');
}

function heading(page: Page): Promise<string | null> {
  return page.getByRole('heading', { level: 1 }).textContent();
}

async function prove(page: Page, identity: string, how: 'Check its record' | 'Sign with its wallet') {
  await page.getByLabel('Identity').fill(identity);
  await page.getByRole('button', { name: how }).click();
  await page.waitForLoadState();
}

/** Signs on the signing page, then waits for the page showing what Discord holds. */
async function signOnPage(page: Page): Promise<void> {
  await expect(heading(page)).resolves.toBe('Link your wallet to Discord');
  await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
  await page.waitForURL(/\/linked-role\/done$/, { timeout: 5_000 });
  await expect(heading(page)).resolves.toBe('Connected');
}

async function mainText(page: Page): Promise<string> {
  return (await page.getByRole('main').textContent()) ?? '';
}

/** A re-check after the credential changed to spam-flagged, then /unverify: both reach Discord. */
async function followsCredentialsThenClears(l: Linked, identity: string): Promise<void> {
  const oauth = l.g.h.discord.oauth;
  l.g.h.upstream.world.setCredentials(identity, gatingCredentials(identity, { human: true, spam: true }));
  expect(await l.g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ written: 1 });
  expect(oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ likely_human: '1', not_spam: '0' });
  const reply = JSON.stringify(visibleMessage(await l.g.h.run('unverify', {}, { userId: ALICE })));
  expect(reply).toContain('Linked Roles connection was cleared');
  expect(oauth.roleConnections.get(ALICE)).toEqual({
    platform_name: null,
    platform_username: null,
    metadata: {},
  });
  expect(await l.g.gating.store.getRoleConnection(ALICE)).toBeUndefined();
  noSecretsLogged(l);
}

/** Neither the client secret, the encryption key nor any Discord token reached a log line. */
function noSecretsLogged(l: Linked): void {
  const logged = JSON.stringify(l.g.h.logs);
  expect(logged).not.toContain(CLIENT_SECRET);
  expect(logged).not.toContain(ENCRYPTION_KEY);
  expect(logged).not.toMatch(/fake-access\.|fake-refresh\./);
}

describe('the Linked Roles page in headless Chromium', () => {
  it('record proof: the connection is written and shown, follows a credential change, and /unverify clears it', async () => {
    const l = await startLinked();
    const name = `record${Date.now().toString(36)}.eth`;
    addIdentity(l.g, name, { discordHandle: 'alice', human: true });
    const { page, problems } = await newBrowser();
    await signIn(l, page, ALICE);
    expect(await mainText(page)).toContain('Signed in to Discord as @alice');

    await prove(page, name, 'Check its record');
    await expect(heading(page)).resolves.toBe('Connected');
    const shown = await mainText(page);
    expect(shown).toContain(`linked to ${name}, proven by its record`);
    expect(shown).toMatch(/Likely humanyes/);
    expect(shown).toMatch(/Not flagged as spamyes/);
    expect(l.g.h.discord.oauth.roleConnections.get(ALICE)).toMatchObject({
      platform_name: 'Web3.bio',
      platform_username: name,
      metadata: { likely_human: '1', not_spam: '1', not_risky: '1' },
    });
    await followsCredentialsThenClears(l, name);
    expect(problems).toEqual([]);
  });

  it.each([
    ['announced through EIP-6963', 'eip6963'],
    ['as window.ethereum when no wallet announces itself', 'injected'],
  ] as const)(
    'EVM signature with a wallet %s: written for the signed identity, re-checked, cleared',
    async (_how, kind) => {
      const l = await startLinked();
      const account = privateKeyToAccount(generatePrivateKey());
      const name = `signed${kind}${Date.now().toString(36)}.eth`;
      // The record names nobody: only the signature proves it.
      addIdentity(l.g, name, { address: account.address.toLowerCase(), human: true });
      let used: string[] = [];
      const { page, problems } = await newBrowser(async (context) => {
        used = await installEvmWallets(
          context,
          kind === 'eip6963' ? { announced: [{ name: 'Test EVM Wallet', account }] } : { injected: account },
        );
      });
      await signIn(l, page, ALICE);
      await prove(page, name, 'Sign with its wallet');
      const signing = await mainText(page);
      expect(signing).toContain('@alice');
      expect(signing).toContain('every server (Linked Roles)');
      expect(signing).toContain(account.address.toLowerCase());
      await signOnPage(page);
      expect(used).toEqual([kind === 'eip6963' ? 'Test EVM Wallet' : 'injected']);
      const shown = await mainText(page);
      expect(shown).toContain(`linked to ${name}, proven by a wallet signature`);
      expect(shown).toMatch(/Likely humanyes/);
      expect(l.g.h.discord.oauth.roleConnections.get(ALICE)).toMatchObject({
        platform_name: 'Web3.bio',
        platform_username: name,
        metadata: { likely_human: '1', not_spam: '1' },
      });
      expect(await l.g.gating.store.getRoleConnection(ALICE)).toMatchObject({
        identity: name,
        address: account.address.toLowerCase(),
      });
      // The done page is shown once: the session ended with it.
      await page.reload();
      await expect(heading(page)).resolves.toBe('This page has expired');
      await followsCredentialsThenClears(l, name);
      expect(problems).toEqual([]);
    },
  );

  it('Solana signature through the Wallet Standard (signMessage, then a signIn-only wallet)', async () => {
    const l = await startLinked();
    for (const feature of ['signMessage', 'signIn'] as const) {
      const key = solanaKey();
      l.g.h.upstream.world.setCredentials(key.address, gatingCredentials(key.address, { human: true }));
      let signed: string[] = [];
      const { page, problems } = await newBrowser(async (context) => {
        signed = await installSolanaWallet(context, key, [feature]);
      });
      await signIn(l, page, ALICE);
      await prove(page, key.address, 'Sign with its wallet');
      await signOnPage(page);
      expect(signed).toHaveLength(1);
      expect(signed[0]).toMatch(/wants you to sign in with your Solana account:\n/);
      expect(signed[0]).toContain('Link the Discord account @alice for Linked Roles in every server');
      expect(l.g.h.discord.oauth.roleConnections.get(ALICE)).toMatchObject({
        platform_username: key.address,
        metadata: { likely_human: '1' },
      });
      expect(await l.g.gating.store.getRoleConnection(ALICE)).toMatchObject({
        identity: key.address,
        platform: 'solana',
        address: key.address,
      });
      expect(problems).toEqual([]);
    }
  });

  it('refuses a replayed OAuth2 state, and shows hostile input as text', async () => {
    const l = await startLinked();
    const { context, page, callbacks } = await newBrowser();
    await signIn(l, page, ALICE);
    const hostile = '"><script>window.__pwned=1</script><b>x';
    await prove(page, hostile, 'Check its record');
    await expect(page.getByLabel('Identity').inputValue()).resolves.toBe(hostile);
    await expect(page.evaluate(() => (window as { __pwned?: number }).__pwned)).resolves.toBeUndefined();
    expect(await page.getByRole('alert').textContent()).toContain('not an identity');

    const callback = callbacks[0] ?? '';
    // Put the state cookie back as it was before the callback, then replay the callback in this browser.
    await context.addCookies([
      {
        name: 'linked_role_state',
        value: new URL(callback).searchParams.get('state') ?? '',
        url: `${l.publicUrl}/linked-role/callback`,
      },
    ]);
    const replay = await page.goto(callback);
    expect(replay?.status()).toBe(400);
    await expect(heading(page)).resolves.toBe('This sign-in has expired or was already used');
    expect(l.g.h.discord.oauth.roleConnections.has(ALICE)).toBe(false);
  });

  it('another account cannot finish a flow someone else started: not its signing link, nor its sign-in', async () => {
    const l = await startLinked();
    const account = privateKeyToAccount(generatePrivateKey());
    const name = `victim${Date.now().toString(36)}.eth`;
    addIdentity(l.g, name, { address: account.address.toLowerCase(), human: true });
    const alice = await newBrowser((context) => installEvmWallets(context, { injected: account }));
    await signIn(l, alice.page, ALICE);
    await prove(alice.page, name, 'Sign with its wallet');
    const signUrl = alice.page.url();
    expect(signUrl).toMatch(/\/linked-role\/sign\/[0-9a-f]{32}$/);

    // Bob, signed in as himself, holding the same wallet, opens Alice's signing link.
    const bob = await newBrowser((context) => installEvmWallets(context, { injected: account }));
    await signIn(l, bob.page, BOB);
    const opened = await bob.page.goto(signUrl);
    expect(opened?.status()).toBe(403);
    await expect(heading(bob.page)).resolves.toBe('This signing link belongs to someone else');
    await expect(bob.page.getByRole('button').count()).resolves.toBe(0);
    // Nor can he fetch its message or post a valid signature for it from his browser.
    const message = await alice.page.evaluate(
      async (url) => (await (await fetch(`${url}/message`)).json()).message,
      signUrl,
    );
    const signature = await account.signMessage({ message });
    const attempts = await bob.page.evaluate(
      async ({ url, signature }) => {
        const read = await fetch(`${url}/message`);
        const post = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ signature }),
        });
        return [read.status, post.status, (await post.json()).reason];
      },
      { url: signUrl, signature },
    );
    expect(attempts).toEqual([403, 403, 'other_account']);
    // Alice's sign-in callback forwarded to Bob's browser does nothing either.
    const forwarded = await bob.page.goto(alice.callbacks[0] ?? '');
    expect(forwarded?.status()).toBe(400);
    expect(l.g.h.discord.oauth.roleConnections.size).toBe(0);

    // The link is still Alice's, unspent: she signs and it is written for her alone.
    await signOnPage(alice.page);
    expect(l.g.h.discord.oauth.roleConnections.get(ALICE)?.platform_username).toBe(name);
    expect(l.g.h.discord.oauth.roleConnections.has(BOB)).toBe(false);
    const warned = l.g.h.logs.filter(
      (line) => line.msg?.includes('may not use it') || line.msg?.includes('another browser or account'),
    );
    expect(warned.length).toBeGreaterThanOrEqual(1);
  });

  it('a member revoking the app: the next call Discord refuses marks the connection stale, /whoami and the page say so, signing in again reconnects', async () => {
    const l = await startLinked();
    const name = `revoked${Date.now().toString(36)}.eth`;
    addIdentity(l.g, name, { discordHandle: 'alice', human: true });
    const first = await newBrowser();
    await signIn(l, first.page, ALICE);
    await prove(first.page, name, 'Check its record');
    await expect(heading(first.page)).resolves.toBe('Connected');

    // Authorized Apps › Deauthorize: every token of the member stops working.
    l.g.h.discord.oauth.revokeUser(ALICE);
    l.g.h.upstream.world.setCredentials(name, gatingCredentials(name, { human: true, spam: true }));
    expect(await l.g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ stale: 1, written: 0 });
    const stored = await l.g.gating.store.getRoleConnection(ALICE);
    expect(stored).toMatchObject({ sealedAccessToken: null, sealedRefreshToken: null });
    expect(stored?.staleSince).not.toBeNull();
    const whoami = JSON.stringify(visibleMessage(await l.g.h.run('whoami', {}, { userId: ALICE })));
    expect(whoami).toContain('Discord no longer accepts the connection');
    expect(whoami).toContain(name);
    // Left out of later passes until the member connects again.
    expect(await l.g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ stale: 0, written: 0 });

    const again = await newBrowser();
    await signIn(l, again.page, ALICE);
    expect(await mainText(again.page)).toContain(`Discord no longer accepts the connection to ${name}`);
    await prove(again.page, name, 'Check its record');
    await expect(heading(again.page)).resolves.toBe('Connected');
    expect(l.g.h.discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ not_spam: '0' });
    const after = JSON.stringify(visibleMessage(await l.g.h.run('whoami', {}, { userId: ALICE })));
    expect(after).toContain(`Connected as **${name}**`);
    noSecretsLogged(l);
  });
});
