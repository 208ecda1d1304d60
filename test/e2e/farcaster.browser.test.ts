/**
 * The Sign in with Farcaster page in headless Chromium: the real bot (gating on) at a PUBLIC_URL the
 * browser reaches, the stand-in Discord's sign-in, relay and OP Mainnet node. With its script, the page
 * finishes on its own once the member's app approves (nobody reloads it); its QR code, decoded from what
 * Chromium draws, is the approval link; its strict CSP lets nothing fail. Without a script, the form
 * starts it and "Check now" finishes it. On the Linked Roles page the server writes the connection, and
 * the open page shows it on its next poll.
 */

import type { Browser, BrowserContext, Page } from 'playwright-core';
import decodeQR from 'qr/decode.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { launchChromium } from '../gating/chromium.ts';
import {
  approveAs,
  CLIENT_SECRET,
  type FarcasterGating,
  farcasterAccount,
  openedChannel,
  startFarcasterGating,
} from './farcasterHarness.ts';
import { closeGating, hasRole, seen, waitFor } from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';
import { freePort } from './processes.ts';

let browser: Browser;
const contexts: BrowserContext[] = [];
let current: FarcasterGating | undefined;

beforeAll(async () => {
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  await Promise.all(contexts.splice(0).map((c) => c.close()));
  await current?.close();
  current = undefined;
  await closeGating();
});

async function start(env: Record<string, string> = {}): Promise<{ f: FarcasterGating; publicUrl: string }> {
  // PUBLIC_URL must be where Chromium reaches the bot (and the domain a SIWF message names).
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const f = await startFarcasterGating({
    discord: { clientSecret: CLIENT_SECRET },
    env: { PUBLIC_URL: publicUrl, HTTP_PORT: String(port), ...env },
  });
  f.g.h.discord.oauth.allowRedirect(`${publicUrl}/oauth/callback`);
  current = f;
  return { f, publicUrl };
}

async function newPage(javaScriptEnabled = true): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext({ javaScriptEnabled });
  contexts.push(context);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  return { page, problems };
}

function heading(page: Page): Promise<string | null> {
  return page.getByRole('heading', { level: 1 }).textContent();
}

/** `/verify alice.farcaster` by Alice: the page link of the reply. */
async function verifyLink(f: FarcasterGating): Promise<string> {
  const reply = visibleMessage(await f.g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE }));
  const url = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0]?.url;
  if (!url) throw new Error(`no link: ${seen(reply)}`);
  return url;
}

/** What the QR code on `page` encodes: its SVG drawn by Chromium on a blank page, then decoded. */
async function qrText(page: Page): Promise<string> {
  const svg = await page.locator('.qr svg').evaluate((el) => el.outerHTML);
  const blank = await page.context().newPage();
  const pixels = await blank.evaluate(async (markup) => {
    const image = new Image();
    image.src = `data:image/svg+xml;base64,${btoa(markup)}`;
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = 400;
    canvas.height = 400;
    const context = canvas.getContext('2d');
    if (!context) throw new Error('no canvas');
    context.fillStyle = '#fff';
    context.fillRect(0, 0, 400, 400);
    context.drawImage(image, 0, 0, 400, 400);
    return Array.from(context.getImageData(0, 0, 400, 400).data);
  }, svg);
  await blank.close();
  return decodeQR({ width: 400, height: 400, data: new Uint8Array(pixels) });
}

describe('the Sign in with Farcaster page in headless Chromium', () => {
  it('finishes on its own when the member approves; its QR code is the approval link; nothing fails under its CSP', async () => {
    const { f } = await start();
    const alice = farcasterAccount(f, 'alice', 101);
    const link = await verifyLink(f);
    const { page, problems } = await newPage();
    f.g.h.discord.oauth.signInAs(ALICE);
    expect((await page.goto(link))?.status()).toBe(200);
    await expect(heading(page)).resolves.toBe('Sign in with Farcaster');
    await page.getByRole('button', { name: 'Show the approval link' }).click();
    await page.waitForLoadState();
    await expect(heading(page)).resolves.toBe('Approve in your Farcaster app');
    const channel = openedChannel(f);
    await expect(page.getByRole('link', { name: 'Open in Farcaster' }).getAttribute('href')).resolves.toBe(
      channel.url,
    );
    await expect(qrText(page)).resolves.toBe(channel.url);

    await approveAs(f, alice);
    // Nobody reloads: the page's script sees the flow move on and shows the result.
    await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Verified', null, {
      timeout: 10_000,
    });
    await expect(page.getByRole('main').textContent()).resolves.toContain('FID 101 is now linked');
    await waitFor(() => hasRole(f.g, ALICE, f.g.humanRoleId), 'the human role for Alice');
    expect(problems).toEqual([]);
  });

  it('works without its script: the form starts it, "Check now" finishes it', async () => {
    const { f } = await start();
    const alice = farcasterAccount(f, 'alice', 102);
    const link = await verifyLink(f);
    const { page, problems } = await newPage(false);
    f.g.h.discord.oauth.signInAs(ALICE);
    await page.goto(link);
    await page.getByRole('button', { name: 'Show the approval link' }).click();
    await page.waitForLoadState();
    await expect(heading(page)).resolves.toBe('Approve in your Farcaster app');
    await approveAs(f, alice);
    await waitFor(() => f.relay.closed.size === 1, 'the server to read the approval');
    await page.getByRole('link', { name: 'Approved already? Check now' }).click();
    await page.waitForLoadState();
    await expect(heading(page)).resolves.toBe('Verified');
    expect(problems).toEqual([]);
  });
});

describe('Sign in with Farcaster on the Linked Roles page in headless Chromium', () => {
  it('the server writes the connection once the member approves; the open page shows it on its next poll', async () => {
    const { f, publicUrl } = await start({
      LINKED_ROLES_ENABLED: 'true',
      TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
    });
    const oauth = f.g.h.discord.oauth;
    Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
    oauth.allowRedirect(`${publicUrl}/linked-role/callback`);
    const alice = farcasterAccount(f, 'alice', 103);
    const { page, problems } = await newPage();
    oauth.signInAs(ALICE);
    expect((await page.goto(`${publicUrl}/linked-role`))?.status()).toBe(200);
    await page.getByLabel('Identity').fill('alice.farcaster');
    await page.getByRole('button', { name: 'Sign in with Farcaster' }).click();
    await page.waitForLoadState();
    await expect(heading(page)).resolves.toBe('Sign in with Farcaster');
    await page.getByRole('button', { name: 'Show the approval link' }).click();
    await page.waitForLoadState();
    await expect(heading(page)).resolves.toBe('Approve in your Farcaster app');

    const puts = () =>
      f.g.h.discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/role-connection')).length;
    await approveAs(f, alice);
    // Nobody reloads: the server writes the connection, and the page's script then shows it.
    await waitFor(() => puts() === 1, 'the role-connection write', 10_000);
    await page.waitForFunction(() => document.querySelector('h1')?.textContent === 'Connected', null, {
      timeout: 10_000,
    });
    await expect(page.getByRole('main').textContent()).resolves.toContain('farcaster,#103');
    expect(oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ likely_human: '1' });
    expect(puts()).toBe(1);
    expect(problems).toEqual([]);
  });
});
