/**
 * Wallet discovery on the signing page, in headless Chromium: Solana wallets through the Wallet
 * Standard (`solana:signMessage`, or `solana:signIn` alone), EVM wallets through EIP-6963 with a
 * picker when several announce themselves. Keys stay in Node; the injected wallets call out to sign.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { base58 } from '@scure/base';
import type { Browser, BrowserContext } from 'playwright-core';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createChallenge, type NonceRecord, type SiweConfig } from '../../src/gating/siwe.ts';
import { startVerifyServer, type VerifyServer } from '../../src/gating/verifyServer.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { launchChromium } from './chromium.ts';

let browser: Browser;
let server: VerifyServer;
let store: GatingStore;
let context: BrowserContext;
const siwe: SiweConfig = { publicUrl: 'https://bot.example.org' };
const verified: { record: NonceRecord; address: string }[] = [];

function solanaKey() {
  const secret = ed25519.utils.randomPrivateKey();
  return { secret, address: base58.encode(ed25519.getPublicKey(secret)) };
}

beforeAll(async () => {
  store = await openSqliteStore(':memory:');
  server = await startVerifyServer({
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
async function solanaPage(key: ReturnType<typeof solanaKey>, features: ('signMessage' | 'signIn')[]) {
  context = await browser.newContext();
  const signed: string[] = [];
  await context.exposeFunction('__solanaSign', (hex: string) => {
    const bytes = Buffer.from(hex, 'hex');
    signed.push(bytes.toString('utf8'));
    return Buffer.from(ed25519.sign(bytes, key.secret)).toString('hex');
  });
  await context.exposeFunction('__siwsText', (input: Record<string, string>) =>
    [
      `${input.domain} wants you to sign in with your Solana account:`,
      key.address,
      '',
      input.statement,
      '',
      `URI: ${input.uri}`,
      `Version: ${input.version}`,
      `Chain ID: ${input.chainId}`,
      `Nonce: ${input.nonce}`,
      `Issued At: ${input.issuedAt}`,
      `Expiration Time: ${input.expirationTime}`,
    ].join('\n'),
  );
  await context.addInitScript(
    ({ address, features }) => {
      const w = window as unknown as {
        __solanaSign(hex: string): Promise<string>;
        __siwsText(input: unknown): Promise<string>;
      };
      const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
      const unhex = (text: string) =>
        new Uint8Array(text.match(/../g)?.map((h) => Number.parseInt(h, 16)) ?? []);
      const account = { address, publicKey: new Uint8Array(32), chains: ['solana:mainnet'], features: [] };
      const wallet: Record<string, unknown> = {
        version: '1.0.0',
        name: 'Test Solana Wallet',
        icon: 'data:image/svg+xml;base64,',
        chains: ['solana:mainnet'],
        accounts: [],
        features: {
          'standard:connect': { version: '1.0.0', connect: async () => ({ accounts: [account] }) },
          ...(features.includes('signMessage')
            ? {
                'solana:signMessage': {
                  version: '1.0.0',
                  signMessage: async (input: { message: Uint8Array }) => [
                    {
                      signedMessage: input.message,
                      signature: unhex(await w.__solanaSign(hex(input.message))),
                    },
                  ],
                },
              }
            : {}),
          ...(features.includes('signIn')
            ? {
                'solana:signIn': {
                  version: '1.0.0',
                  signIn: async (input: unknown) => {
                    const text = new TextEncoder().encode(await w.__siwsText(input));
                    return [
                      { account, signedMessage: text, signature: unhex(await w.__solanaSign(hex(text))) },
                    ];
                  },
                },
              }
            : {}),
        },
      };
      const register = (api: { register(wallet: unknown): void }) => api.register(wallet);
      window.addEventListener('wallet-standard:app-ready', (event) =>
        register((event as CustomEvent<{ register(wallet: unknown): void }>).detail),
      );
      window.dispatchEvent(new CustomEvent('wallet-standard:register-wallet', { detail: register }));
    },
    { address: key.address, features },
  );
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
    const used: string[] = [];
    await context.exposeFunction('__evmSign', (who: string, hexMessage: `0x${string}`) => {
      used.push(who);
      const account = who === 'member' ? member : other;
      return account.signMessage({ message: { raw: hexMessage } });
    });
    await context.addInitScript(
      ({ memberAddress, otherAddress }) => {
        const sign = (window as unknown as { __evmSign(who: string, m: string): Promise<string> }).__evmSign;
        const provider = (who: string, address: string) => ({
          async request({ method, params }: { method: string; params?: unknown[] }) {
            if (method === 'eth_requestAccounts') return [address];
            if (method === 'personal_sign') return sign(who, String(params?.[0]));
            throw Object.assign(new Error('unsupported'), { code: 4200 });
          },
        });
        const wallets = [
          {
            info: { uuid: 'u-1', name: 'Other Wallet', icon: '', rdns: 'org.other' },
            provider: provider('other', otherAddress),
          },
          {
            info: { uuid: 'u-2', name: 'Member Wallet', icon: '', rdns: 'org.member' },
            provider: provider('member', memberAddress),
          },
        ];
        (window as unknown as { ethereum: unknown }).ethereum = provider('injected', otherAddress);
        const announce = () => {
          for (const detail of wallets)
            window.dispatchEvent(
              new CustomEvent('eip6963:announceProvider', { detail: Object.freeze(detail) }),
            );
        };
        window.addEventListener('eip6963:requestProvider', announce);
        announce();
      },
      { memberAddress: member.address, otherAddress: other.address },
    );
    const page = await context.newPage();
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
    await page.getByRole('status').getByText('Several wallets are installed').waitFor({ timeout: 5_000 });
    await expect(page.getByRole('button', { name: 'Other Wallet' }).isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Member Wallet' }).click();
    await page.getByRole('status').getByText('your roles will update in Discord').waitFor({ timeout: 5_000 });
    expect(used).toEqual(['member']);
    expect(verified.map((v) => v.address)).toEqual([member.address]);
  });
});
