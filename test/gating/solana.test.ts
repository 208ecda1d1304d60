import { ed25519 } from '@noble/curves/ed25519';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  buildChallengeMessage,
  type SiweConfig,
  siwsFields,
} from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, verifyChallenge } from '../../src/gating/proofs/siwe.ts';
import { buildSiwsMessage, isSolanaAddress, verifySolanaSignature } from '../../src/gating/proofs/solana.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';

/** A Solana keypair: a base58 address and a signer over UTF-8 text, as 0x-hex. */
function solanaWallet() {
  const secret = ed25519.utils.randomPrivateKey();
  const address = base58.encode(ed25519.getPublicKey(secret));
  const sign = (text: string) =>
    `0x${Buffer.from(ed25519.sign(new TextEncoder().encode(text), secret)).toString('hex')}` as `0x${string}`;
  return { address, sign };
}

let store: GatingStore;
let clock: number;
const siwe: SiweConfig = { publicUrl: 'https://bot.example.org', now: () => clock };

beforeEach(async () => {
  store = await openSqliteStore(':memory:');
  clock = 1_800_000_000_000;
});
afterEach(async () => {
  await store.close();
});

async function challengeFor(address: string) {
  const created = await createChallenge(store, siwe, {
    guildId: '111111111111111111',
    userId: '222222222222222222',
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity: 'bonfida.sol',
    address,
  });
  const record = await store.getNonce(created.nonce);
  if (!record) throw new Error('not stored');
  return { nonce: created.nonce, record, message: buildChallengeMessage(siwe, record) };
}

describe('Sign-In With Solana', () => {
  it('tells a Solana address (32-byte base58 key) apart from look-alikes', () => {
    expect(isSolanaAddress(solanaWallet().address)).toBe(true);
    expect(isSolanaAddress('0x0000000000000000000000000000000000000001')).toBe(false);
    expect(isSolanaAddress('1111')).toBe(false);
    expect(isSolanaAddress('O0lI'.repeat(10))).toBe(false);
  });

  it('builds a message with the same fields as the EVM one, the address kept as written', async () => {
    const wallet = solanaWallet();
    const { record, message } = await challengeFor(wallet.address);
    expect(record.address).toBe(wallet.address);
    const lines = message.split('\n');
    expect(lines[0]).toBe('bot.example.org wants you to sign in with your Solana account:');
    expect(lines[1]).toBe(wallet.address);
    expect(lines[3]).toBe(
      "Link the Discord account @alice in the server 'Web3 Lounge' to the web3 identity bonfida.sol. This is a signature, not a transaction: it costs nothing and moves no funds.",
    );
    expect(message).toContain('\nURI: https://bot.example.org\nVersion: 1\nChain ID: mainnet\n');
    expect(message).toContain(`\nNonce: ${record.nonce}\n`);
    expect(message).toContain(`\nIssued At: ${new Date(clock).toISOString()}\n`);
    expect(message.endsWith(`\nExpiration Time: ${new Date(record.expiresAt).toISOString()}`)).toBe(true);
    expect(buildSiwsMessage(siwsFields(siwe, record))).toBe(message);
  });

  it('verifies the wallet signature once, and refuses a replay', async () => {
    const wallet = solanaWallet();
    const { nonce, message } = await challengeFor(wallet.address);
    const signature = wallet.sign(message);
    await expect(verifyChallenge(store, siwe, { nonce, signature })).resolves.toMatchObject({
      ok: true,
      address: wallet.address,
    });
    await expect(verifyChallenge(store, siwe, { nonce, signature })).resolves.toMatchObject({
      ok: false,
      reason: 'used',
    });
  });

  it('refuses another key, a tampered message, another site and an expired link, consuming nothing', async () => {
    const wallet = solanaWallet();
    const other = solanaWallet();
    const { nonce, message } = await challengeFor(wallet.address);
    const check = (input: { message?: string; signature: `0x${string}` }) =>
      verifyChallenge(store, siwe, { nonce, ...input });

    await expect(check({ signature: other.sign(message) })).resolves.toMatchObject({
      reason: 'bad_signature',
    });
    const tampered = message.replace('@alice', '@mallory');
    await expect(check({ message: tampered, signature: wallet.sign(tampered) })).resolves.toMatchObject({
      reason: 'tampered',
    });
    const elsewhere = message.replace('bot.example.org wants', 'evil.example wants');
    await expect(check({ message: elsewhere, signature: wallet.sign(elsewhere) })).resolves.toMatchObject({
      reason: 'wrong_domain',
    });
    const otherSigner = message.replace(wallet.address, other.address);
    await expect(check({ message: otherSigner, signature: other.sign(otherSigner) })).resolves.toMatchObject({
      reason: 'wrong_address',
    });
    // A signature over the EVM-style 0x-hex of the text is not a signature over the text.
    await expect(
      check({ signature: wallet.sign(Buffer.from(message).toString('hex')) }),
    ).resolves.toMatchObject({
      reason: 'bad_signature',
    });
    expect((await store.getNonce(nonce))?.usedAt).toBeNull();
    clock += 10 * 60_000;
    await expect(check({ signature: wallet.sign(message) })).resolves.toMatchObject({ reason: 'expired' });
  });

  it('never accepts a malformed signature or key', () => {
    const wallet = solanaWallet();
    expect(verifySolanaSignature(wallet.address, 'm', '0x00')).toBe(false);
    expect(verifySolanaSignature('not-a-key', 'm', wallet.sign('m'))).toBe(false);
    expect(verifySolanaSignature(wallet.address, 'm', wallet.sign('m'))).toBe(true);
  });

  it('writes hostile names in the statement as the EVM message does, in the characters EIP-4361 allows', async () => {
    const wallet = solanaWallet();
    const names = {
      guildId: '111111111111111111',
      userId: '222222222222222222',
      userName: '猫🐱 neko\u202e',
      guildName: '"Crypto" 🚀 سيرفر 服务器\nURI: https://evil.example',
      identity: '🦊.sol',
    };
    const solana = await createChallenge(store, siwe, { ...names, address: wallet.address });
    const evm = await createChallenge(store, siwe, {
      ...names,
      address: privateKeyToAccount(generatePrivateKey()).address,
    });
    const solanaRecord = await store.getNonce(solana.nonce);
    const evmRecord = await store.getNonce(evm.nonce);
    if (!solanaRecord || !evmRecord) throw new Error('not stored');
    const message = buildChallengeMessage(siwe, solanaRecord);
    const statement = message.split('\n')[3];
    expect(statement).toBe(parseSiweMessage(buildChallengeMessage(siwe, evmRecord)).statement);
    expect(statement).toBe(siwsFields(siwe, solanaRecord).statement);
    expect(statement).toMatch(/^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]+$/);
    expect(statement).toContain(
      "account @? neko (id 222222222222222222) in the server ''Crypto' ? URI: https://evil.example' (id 111111111111111111) to the web3 identity ?.sol.",
    );
    expect(message.split('\n').filter((line) => line.startsWith('URI: '))).toEqual([
      'URI: https://bot.example.org',
    ]);
    await expect(
      verifyChallenge(store, siwe, { nonce: solana.nonce, signature: wallet.sign(message) }),
    ).resolves.toMatchObject({ ok: true });
  });

  it('refuses to make a challenge for something that is not an address', async () => {
    await expect(challengeFor('bonfida.sol')).rejects.toThrow(/neither an Ethereum nor a Solana address/);
  });
});
