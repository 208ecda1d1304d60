import type { Browser, BrowserContext } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { launchChromium } from '../gating/chromium.ts';

const GUILD = '111111111111111111';
const USER = '222222222222222222';

const member = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

let browser: Browser;
let server: WebServer;
let store: GatingStore;
let clock: number;
const siwe: SiweConfig = { publicUrl: 'https://bot.example.org', now: () => clock };
const verified: { record: NonceRecord; address: string }[] = [];
let context: BrowserContext;
let signRequests: string[];

beforeAll(async () => {
  store = await openSqliteStore(':memory:');
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    onVerified: async (result) => {
      verified.push(result);
      return { ok: true };
    },
  });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await store?.close();
});

beforeEach(() => {
  clock = Date.now();
  verified.length = 0;
  signRequests = [];
});
afterEach(async () => {
  await context?.close();
});

/** A browser context whose `window.ethereum` is an EIP-1193 wallet holding `walletAccount`'s key in Node. */
async function openWallet(walletAccount: typeof member, options: { javaScriptEnabled?: boolean } = {}) {
  context = await browser.newContext({ javaScriptEnabled: options.javaScriptEnabled ?? true });
  await context.exposeFunction('__testWalletSign', async (hexMessage: `0x${string}`, address: string) => {
    signRequests.push(hexMessage);
    if (address.toLowerCase() !== walletAccount.address.toLowerCase()) throw new Error('unknown account');
    return walletAccount.signMessage({ message: { raw: hexMessage } });
  });
  await context.addInitScript(
    ({ address }) => {
      const sign = (window as unknown as { __testWalletSign(m: string, a: string): Promise<string> })
        .__testWalletSign;
      (window as unknown as { ethereum: unknown }).ethereum = {
        isTestWallet: true,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
          if (method === 'personal_sign') return sign(String(params?.[0]), String(params?.[1]));
          throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
        },
      };
    },
    { address: walletAccount.address },
  );
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  return { page, problems };
}

function challengeFor(address: `0x${string}`) {
  return createChallenge(store, siwe, {
    guildId: GUILD,
    userId: USER,
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity: 'vitalik.eth',
    address,
  });
}

describe('verification page in headless Chromium', () => {
  it('signs with the expected wallet, shows success and calls onVerified once', async () => {
    const challenge = await challengeFor(member.address);
    const { page, problems } = await openWallet(member);
    const response = await page.goto(`${server.url}/verify/${challenge.nonce}`);
    expect(response?.status()).toBe(200);

    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'Link your wallet to Discord',
    );
    const main = page.getByRole('main');
    await expect(main.textContent()).resolves.toContain('@alice');
    await expect(main.textContent()).resolves.toContain('"Web3 Lounge"');
    await expect(main.textContent()).resolves.not.toContain(USER);
    await expect(main.textContent()).resolves.toContain('vitalik.eth');
    await expect(main.textContent()).resolves.toContain(member.address.toLowerCase());
    await expect(main.textContent()).resolves.toMatch(/never asks for a transaction.*seed phrase/s);

    await expect(page.getByText('This page needs JavaScript').isVisible()).resolves.toBe(false);
    const button = page.getByRole('button', { name: 'Connect wallet and sign' });
    await button.focus();
    await page.keyboard.press('Enter');
    const status = page.getByRole('status');
    await status.getByText('your roles will update in Discord').waitFor({ timeout: 5_000 });
    await expect(status.textContent()).resolves.toBe(
      'Verified. You can close this tab; your roles will update in Discord.',
    );

    expect(signRequests).toHaveLength(1);
    expect(verified).toHaveLength(1);
    expect(verified[0]?.address).toBe(member.address);
    expect(verified[0]?.record).toMatchObject({ nonce: challenge.nonce, userId: USER, guildId: GUILD });
    expect((await store.getNonce(challenge.nonce))?.usedAt).not.toBeNull();
    expect(problems).toEqual([]);

    await page.reload();
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
      'This link was already used',
    );
  });

  it('explains a wrong wallet account and verifies nothing', async () => {
    const challenge = await challengeFor(member.address);
    const { page, problems } = await openWallet(stranger);
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await page.getByRole('button', { name: 'Connect wallet and sign' }).click();

    const status = page.getByRole('status');
    await status.getByText('but this link is for').waitFor({ timeout: 5_000 });
    const text = await status.textContent();
    expect(text).toContain(stranger.address);
    expect(text).toContain(member.address.toLowerCase());
    expect(text).toContain('Switch to that account');
    expect(signRequests).toEqual([]);
    expect(verified).toEqual([]);
    expect((await store.getNonce(challenge.nonce))?.usedAt).toBeNull();
    expect(problems).toEqual([]);
  });

  it('shows a friendly expired state for an expired or unknown link', async () => {
    const challenge = await challengeFor(member.address);
    clock += 11 * 60_000;
    const { page } = await openWallet(member);
    for (const nonce of [challenge.nonce, '0123456789abcdef0123456789abcdef', '<script>alert(1)</script>']) {
      const response = await page.goto(`${server.url}/verify/${encodeURIComponent(nonce)}`);
      expect(response?.status()).toBe(200);
      await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe(
        'This link has expired',
      );
      await expect(page.getByRole('main').textContent()).resolves.toContain('/verify');
      await expect(page.getByRole('button').count()).resolves.toBe(0);
    }
    expect(verified).toEqual([]);
  });

  it('says clearly that JavaScript is needed when it is off', async () => {
    const challenge = await challengeFor(member.address);
    const { page } = await openWallet(member, { javaScriptEnabled: false });
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await expect(page.getByText('This page needs JavaScript and a browser wallet').isVisible()).resolves.toBe(
      true,
    );
    await expect(page.getByRole('button', { name: 'Connect wallet and sign' }).isVisible()).resolves.toBe(
      false,
    );
  });
});
