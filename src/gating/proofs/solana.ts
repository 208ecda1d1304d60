/**
 * Sign-In With Solana: the message a Solana wallet signs for a challenge (EIP-4361's shape with a
 * Solana account, as the Wallet Standard `solana:signIn` feature writes it), and ed25519 verification
 * of the signature against the account's public key.
 * @see https://github.com/phantom/sign-in-with-solana
 */
import { ed25519 } from '@noble/curves/ed25519';
import { base58 } from '@scure/base';

/** The fields of a Sign-In With Solana message (also the `solana:signIn` input the page hands a wallet). */
export interface SiwsFields {
  domain: string;
  address: string;
  statement: string;
  uri: string;
  version: '1';
  chainId: 'mainnet';
  nonce: string;
  issuedAt: string;
  expirationTime: string;
}

const BASE58 = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;

/** True when `value` is a base58 ed25519 public key (a Solana account address). */
export function isSolanaAddress(value: string): boolean {
  if (!BASE58.test(value)) return false;
  try {
    return base58.decode(value).length === 32;
  } catch {
    return false;
  }
}

/** The message text, line for line as `solana:signIn` builds it from the same fields. */
export function buildSiwsMessage(fields: SiwsFields): string {
  return [
    `${fields.domain} wants you to sign in with your Solana account:`,
    fields.address,
    '',
    fields.statement,
    '',
    `URI: ${fields.uri}`,
    `Version: ${fields.version}`,
    `Chain ID: ${fields.chainId}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt}`,
    `Expiration Time: ${fields.expirationTime}`,
  ].join('\n');
}

/** Whether `signature` (64 bytes, as 0x-hex) is `address`'s ed25519 signature over the UTF-8 `message`. */
export function verifySolanaSignature(address: string, message: string, signature: `0x${string}`): boolean {
  if (!isSolanaAddress(address) || !/^0x[0-9a-fA-F]{128}$/.test(signature)) return false;
  try {
    return ed25519.verify(
      Buffer.from(signature.slice(2), 'hex'),
      new TextEncoder().encode(message),
      base58.decode(address),
      { zip215: false },
    );
  } catch {
    return false;
  }
}
