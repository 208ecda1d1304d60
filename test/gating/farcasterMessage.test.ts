/**
 * The offline checks of a Sign In With Farcaster approval: each field the bot asked for is checked, and a
 * message differing in one of them is refused with its reason, before any chain read.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { createSiweMessage } from 'viem/siwe';
import { describe, expect, it } from 'vitest';
import {
  checkSignInMessage,
  requestIdOf,
  SIWF_STATEMENT,
  type SignInRequest,
} from '../../src/gating/proofs/farcasterMessage.ts';

const NOW = Date.parse('2026-03-01T12:00:00Z');
const account = privateKeyToAccount(generatePrivateKey());

const asked: SignInRequest = {
  domain: 'verify.example.test',
  uri: 'https://verify.example.test/farcaster/0123456789abcdef0123456789abcdef',
  nonce: '0123456789abcdef0123456789abcdef',
  requestId: requestIdOf('300000000000000001', '200000000000000001', false),
  fid: 3,
  createdAt: NOW - 60_000,
  expiresAt: NOW + 9 * 60_000,
};

type Fields = Parameters<typeof createSiweMessage>[0];

/** The message an honest Farcaster app builds for `asked` (auth-client's build), with `changes`. */
function message(changes: Partial<Fields> = {}): string {
  return createSiweMessage({
    domain: asked.domain,
    address: account.address,
    statement: SIWF_STATEMENT,
    uri: asked.uri,
    version: '1',
    chainId: 10,
    nonce: asked.nonce,
    issuedAt: new Date(NOW - 1_000),
    expirationTime: new Date(asked.expiresAt),
    requestId: asked.requestId,
    resources: [`farcaster://fid/${asked.fid}`],
    ...changes,
  });
}

async function check(text: string, signer = account, now = NOW) {
  return checkSignInMessage(asked, text, await signer.signMessage({ message: text }), now);
}

describe('checkSignInMessage', () => {
  it('accepts the message an honest app signs for what was asked, naming the FID and the signer', async () => {
    const requestLine = message()
      .split('\n')
      .find((l) => l.startsWith('Request ID: '));
    expect(requestLine).toBe('Request ID: discord:user:300000000000000001:server:200000000000000001');
    await expect(check(message())).resolves.toEqual({
      ok: true,
      checked: { fid: 3, signer: account.address },
    });
  });

  it.each([
    ['another domain', { domain: 'evil.example' }, 'wrong_domain'],
    ['another page', { uri: 'https://verify.example.test/elsewhere' }, 'wrong_domain'],
    ['another nonce', { nonce: 'fedcba9876543210fedcba9876543210' }, 'wrong_nonce'],
    [
      'another request',
      { requestId: requestIdOf('300000000000000002', '200000000000000001', false) },
      'wrong_request',
    ],
    ['no request id', { requestId: undefined }, 'wrong_request'],
    ['another FID', { resources: ['farcaster://fid/4'] }, 'wrong_fid'],
    ['two FIDs', { resources: ['farcaster://fid/3', 'farcaster://fid/4'] }, 'malformed'],
    ['no FID', { resources: [] }, 'malformed'],
    ['another statement', { statement: 'Log in to evil.example' }, 'malformed'],
    ['the 2023 statement', { statement: 'Farcaster Connect' }, 'malformed'],
    ['another chain', { chainId: 1 }, 'malformed'],
    ['a later expiry than asked', { expirationTime: new Date(asked.expiresAt + 60_000) }, 'expired'],
    ['no expiry', { expirationTime: undefined }, 'expired'],
    ['issued before the flow', { issuedAt: new Date(asked.createdAt - 6 * 60_000) }, 'expired'],
    ['not valid before later', { notBefore: new Date(NOW + 60_000) }, 'expired'],
  ] as const)('refuses a message with %s', async (_what, changes, reason) => {
    await expect(check(message(changes as Partial<Fields>))).resolves.toEqual({ ok: false, reason });
  });

  it('refuses an approval that arrives after the flow expired', async () => {
    await expect(check(message(), account, asked.expiresAt)).resolves.toEqual({
      ok: false,
      reason: 'expired',
    });
  });

  it('refuses a signature by another key than the message names', async () => {
    const text = message();
    const other = privateKeyToAccount(generatePrivateKey());
    await expect(check(text, other)).resolves.toEqual({ ok: false, reason: 'bad_signature' });
  });

  it('refuses what is not a message or a signature at all', async () => {
    await expect(checkSignInMessage(asked, 42, '0x00', NOW)).resolves.toEqual({
      ok: false,
      reason: 'malformed',
    });
    await expect(checkSignInMessage(asked, message(), 'not hex', NOW)).resolves.toEqual({
      ok: false,
      reason: 'malformed',
    });
    await expect(checkSignInMessage(asked, 'x'.repeat(5_000), `0x${'1'.repeat(130)}`, NOW)).resolves.toEqual({
      ok: false,
      reason: 'malformed',
    });
  });

  it('refuses a message whose first line names another site even when a later line says ours', async () => {
    const text = `evil.example wants you to sign in with your Ethereum account:\n${message().split('\n').slice(1).join('\n')}`;
    await expect(check(text)).resolves.toEqual({ ok: false, reason: 'wrong_domain' });
  });

  it('names Linked Roles in the request id of a Linked Roles flow', () => {
    expect(requestIdOf('300000000000000001', '0', true)).toBe('discord:user:300000000000000001:linked-roles');
  });
});
