/**
 * Test wallets injected into a headless Chromium context, for the pages that ask a browser wallet to
 * sign: EVM providers (announced through EIP-6963, or as `window.ethereum`) and a Wallet Standard
 * Solana wallet. Keys stay in Node; the injected wallets call out to sign, and the test reads what was
 * signed and by which wallet.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { base58 } from '@scure/base';
import type { BrowserContext } from 'playwright-core';
import type { PrivateKeyAccount } from 'viem/accounts';

export interface SolanaKey {
  secret: Uint8Array;
  address: string;
}

export function solanaKey(): SolanaKey {
  const secret = ed25519.utils.randomPrivateKey();
  return { secret, address: base58.encode(ed25519.getPublicKey(secret)) };
}

/**
 * EVM wallets: each of `announced` answers EIP-6963's request (in order), `injected` becomes
 * `window.ethereum`. Each shares its account and signs with `personal_sign`. Returns the names of the
 * wallets asked to sign, in order.
 */
export async function installEvmWallets(
  context: BrowserContext,
  wallets: { announced?: { name: string; account: PrivateKeyAccount }[]; injected?: PrivateKeyAccount },
): Promise<string[]> {
  const used: string[] = [];
  const accounts = new Map<string, PrivateKeyAccount>();
  for (const w of wallets.announced ?? []) accounts.set(w.name, w.account);
  if (wallets.injected) accounts.set('injected', wallets.injected);
  await context.exposeFunction('__evmSign', (who: string, hexMessage: `0x${string}`) => {
    used.push(who);
    const account = accounts.get(who);
    if (!account) throw new Error(`no test wallet ${who}`);
    return account.signMessage({ message: { raw: hexMessage } });
  });
  await context.addInitScript(
    ({ announced, injected }) => {
      const sign = (window as unknown as { __evmSign(who: string, m: string): Promise<string> }).__evmSign;
      const provider = (who: string, address: string) => ({
        async request({ method, params }: { method: string; params?: unknown[] }) {
          if (method === 'eth_requestAccounts' || method === 'eth_accounts') return [address];
          if (method === 'personal_sign') return sign(who, String(params?.[0]));
          throw Object.assign(new Error(`unsupported method ${method}`), { code: 4200 });
        },
      });
      if (injected) (window as unknown as { ethereum: unknown }).ethereum = provider('injected', injected);
      const details = announced.map((w, i) => ({
        info: { uuid: `test-${i}`, name: w.name, icon: '', rdns: `org.test.${i}` },
        provider: provider(w.name, w.address),
      }));
      const announce = () => {
        for (const detail of details)
          window.dispatchEvent(
            new CustomEvent('eip6963:announceProvider', { detail: Object.freeze(detail) }),
          );
      };
      window.addEventListener('eip6963:requestProvider', announce);
      announce();
    },
    {
      announced: (wallets.announced ?? []).map((w) => ({ name: w.name, address: w.account.address })),
      injected: wallets.injected?.address ?? null,
    },
  );
  return used;
}

/**
 * A Wallet Standard Solana wallet holding `key`, offering `solana:signMessage` and/or `solana:signIn`.
 * Returns every message it signed, as text.
 */
export async function installSolanaWallet(
  context: BrowserContext,
  key: SolanaKey,
  features: ('signMessage' | 'signIn')[],
): Promise<string[]> {
  const signed: string[] = [];
  await context.exposeFunction('__solanaSign', (hex: string) => {
    const bytes = Buffer.from(hex, 'hex');
    signed.push(bytes.toString('utf8'));
    return Buffer.from(ed25519.sign(bytes, key.secret)).toString('hex');
  });
  // What a wallet's solana:signIn writes for the fields it is given (the Sign-In With Solana text).
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
  return signed;
}
