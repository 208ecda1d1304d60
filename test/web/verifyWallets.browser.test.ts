/**
 * Wallet discovery on the signing page, in headless Chromium: Solana wallets through the Wallet
 * Standard (`solana:signMessage`, or `solana:signIn` alone), EVM wallets through EIP-6963 with a
 * picker when several announce themselves. Keys stay in Node; the injected wallets call out to sign.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { launchChromium } from '../gating/chromium.ts';
import { installEvmWallets, installSolanaWallet, type SolanaKey, solanaKey } from '../gating/testWallets.ts';

let browser: Browser;
let server: WebServer;
let store: GatingStore;
let context: BrowserContext;
const siwe: SiweConfig = { publicUrl: 'https://bot.example.org' };
const verified: { record: NonceRecord; address: string }[] = [];

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
  verified.length = 0;
});
afterEach(async () => {
  await context?.close();
});

function challengeFor(address: string) {
  return createChallenge(store, siwe, {
    guildId: '111111111111111111',
    userId: '222222222222222222',
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity: 'bonfida.sol',
    address,
  });
}

/** A page whose window has a Wallet Standard Solana wallet holding `key` (signing in Node). */
async function solanaPage(key: SolanaKey, features: ('signMessage' | 'signIn')[]) {
  context = await browser.newContext();
  const signed = await installSolanaWallet(context, key, features);
  const page = await context.newPage();
  return { page, signed };
}

async function signAndWait(
  page: Awaited<ReturnType<typeof solanaPage>>['page'],
  nonce: string,
  text: string,
) {
  await page.goto(`${server.url}/verify/${nonce}`);
  await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
  await page.getByRole('status').getByText(text).waitFor({ timeout: 5_000 });
}

describe('wallets on the signing page, in headless Chromium', () => {
  it('signs with a Solana wallet through the Wallet Standard signMessage', async () => {
    const key = solanaKey();
    const challenge = await challengeFor(key.address);
    const { page, signed } = await solanaPage(key, ['signMessage']);
    await signAndWait(page, challenge.nonce, 'your roles will update in Discord');
    expect(signed).toHaveLength(1);
    expect(signed[0]).toMatch(/^bot\.example\.org wants you to sign in with your Solana account:\n/);
    expect(signed[0]).toContain('@alice');
    expect(verified.map((v) => v.address)).toEqual([key.address]);
  });

  it('signs with a wallet that only offers solana:signIn', async () => {
    const key = solanaKey();
    const challenge = await challengeFor(key.address);
    const { page, signed } = await solanaPage(key, ['signIn']);
    await signAndWait(page, challenge.nonce, 'your roles will update in Discord');
    expect(signed).toHaveLength(1);
    expect(verified.map((v) => v.address)).toEqual([key.address]);
  });

  it('explains a Solana wallet holding another account, and signs nothing', async () => {
    const challenge = await challengeFor(solanaKey().address);
    const { page, signed } = await solanaPage(solanaKey(), ['signMessage']);
    await signAndWait(page, challenge.nonce, 'but this link is for');
    expect(signed).toEqual([]);
    expect(verified).toEqual([]);
  });

  it('lets the member pick among EIP-6963 wallets, ahead of window.ethereum', async () => {
    const member = privateKeyToAccount(generatePrivateKey());
    const other = privateKeyToAccount(generatePrivateKey());
    const challenge = await challengeFor(member.address);
    context = await browser.newContext();
    const used = await installEvmWallets(context, {
      announced: [
        { name: 'Other Wallet', account: other },
        { name: 'Member Wallet', account: member },
      ],
      injected: other,
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
    await page.getByRole('status').getByText('Several wallets are installed').waitFor({ timeout: 5_000 });
    await expect(page.getByRole('button', { name: 'Other Wallet' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Member Wallet' }).click();
    await page.getByRole('status').getByText('your roles will update in Discord').waitFor({ timeout: 5_000 });
    expect(used).toEqual(['Member Wallet']);
    expect(verified.map((v) => v.address)).toEqual([member.address]);
  });
});
