/**
 * The exact text a challenge's wallet signs (EIP-4361, or Sign-In With Solana for a Solana signer) and the
 * names the signing page shows, all rebuilt from the stored record: the server never trusts a client's copy.
 */
import { getAddress } from 'viem';
import { createSiweMessage } from 'viem/siwe';
import type { NonceRecord } from '../../store/types.ts';
import { LINKED_ROLES_SCOPE } from './proofKeys.ts';
import { buildSiwsMessage, type SiwsFields } from './solana.ts';
import { isReadable, statementIdentity, statementName } from './statementText.ts';

export interface SiweConfig {
  /** Where the bot's verification page is reachable, e.g. https://bot.example.org */
  publicUrl: string;
  /** JSON-RPC endpoint; when set, contract-wallet signatures are checked through ERC-1271/6492. */
  rpcUrl?: string;
  /** How long a challenge stays valid; default 10 minutes. */
  ttlMs?: number;
  /** Clock in ms since epoch, injectable for tests. */
  now?: () => number;
  /** The page makes the member sign in with Discord first (DISCORD_CLIENT_SECRET), so a link only works for its account. */
  discordSignIn?: boolean;
}

export const DEFAULT_CHALLENGE_TTL_MS = 10 * 60_000;

export { LINKED_ROLES_SCOPE } from './proofKeys.ts';

/** Identities and names longer than these are shortened on the page and in the statement. */
export const IDENTITY_MAX_LENGTH = 100;
const NAME_MAX_LENGTH = 100;
/** Controls plus bidi overrides, which can make a name on the page read differently from what it is. */
const UNSAFE_DISPLAY_CHARS = /[\p{Cc}\p{Zl}\p{Zp}\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** True when the challenge is signed by a Solana wallet (its signer is a base58 address). */
export function isSolanaChallenge(rec: Pick<NonceRecord, 'address'>): boolean {
  return !rec.address.startsWith('0x');
}

/** The exact message a record's wallet signs: Sign-In With Solana or Ethereum, by the signer's family. */
export function buildChallengeMessage(cfg: SiweConfig, rec: NonceRecord): string {
  return isSolanaChallenge(rec) ? buildSiwsMessage(siwsFields(cfg, rec)) : buildSiweMessage(cfg, rec);
}

/** A Solana record's Sign-In With Solana fields (the page hands them to `solana:signIn`). */
export function siwsFields(cfg: SiweConfig, rec: NonceRecord): SiwsFields {
  const site = siteOf(cfg);
  return {
    domain: site.domain,
    address: rec.address,
    statement: statementOf(rec),
    uri: site.uri,
    version: '1',
    chainId: 'mainnet',
    nonce: rec.nonce,
    issuedAt: new Date(rec.expiresAt - ttl(cfg)).toISOString(),
    expirationTime: new Date(rec.expiresAt).toISOString(),
  };
}

/** True when the challenge was made on the Linked Roles page (for the account, in every server). */
export function isLinkedRoleChallenge(rec: Pick<NonceRecord, 'guildId'>): boolean {
  return rec.guildId === LINKED_ROLES_SCOPE;
}

/**
 * One line naming the Discord account, the server and the identity, the same for both wallet families,
 * in the characters EIP-4361's grammar allows a statement. A name it cannot carry exactly is shown as
 * near as it can, followed by its id; the signing page shows every name in full.
 */
function statementOf(rec: NonceRecord): string {
  const account = nameInStatement(rec.userName, rec.userId, (name) => `@${name}`);
  const where = isLinkedRoleChallenge(rec)
    ? 'for Linked Roles in every server'
    : `in the server ${nameInStatement(rec.guildName, rec.guildId, (name) => `'${name}'`)}`;
  const identity = statementIdentity(rec.identity, IDENTITY_MAX_LENGTH).text;
  return (
    `Link the Discord account ${account} ${where} to the web3 identity ${identity}. ` +
    'This is a signature, not a transaction: it costs nothing and moves no funds.'
  );
}

/** A name as written when the statement can carry it; else as near as it can, with the id to tell it apart. */
function nameInStatement(name: string | null, id: string, show: (name: string) => string): string {
  const safe = name === null ? null : statementName(name, NAME_MAX_LENGTH);
  if (safe?.exact) return show(safe.text);
  if (safe && isReadable(safe.text)) return `${show(safe.text)} (id ${id})`;
  return `with id ${id}`;
}

/**
 * The exact EIP-4361 message for a record. Deterministic (issuedAt is derived from the expiry), so the
 * server can rebuild it at verification time instead of trusting a client's copy.
 */
export function buildSiweMessage(cfg: SiweConfig, rec: NonceRecord): string {
  const site = siteOf(cfg);
  return createSiweMessage({
    scheme: site.scheme,
    domain: site.domain,
    uri: site.uri,
    address: getAddress(rec.address),
    chainId: 1,
    version: '1',
    nonce: rec.nonce,
    statement: statementOf(rec),
    issuedAt: new Date(rec.expiresAt - ttl(cfg)),
    expirationTime: new Date(rec.expiresAt),
  });
}

/**
 * Whom the signer links the wallet to, as the signing page shows it: the Discord username (the id only
 * for challenges made before names were kept).
 */
export function accountName(rec: Pick<NonceRecord, 'userId' | 'userName'>): string {
  const name = rec.userName === null ? '' : displayText(rec.userName, NAME_MAX_LENGTH);
  return name ? `@${name}` : `with id ${rec.userId}`;
}

/** The server's name, in quotes, as the signing page shows it (its id only for challenges made before names were kept). */
export function serverName(rec: Pick<NonceRecord, 'guildId' | 'guildName'>): string {
  if (isLinkedRoleChallenge(rec)) return 'every server (Linked Roles)';
  const name = rec.guildName === null ? '' : displayText(rec.guildName, NAME_MAX_LENGTH).replaceAll('"', "'");
  return name ? `"${name}"` : `with id ${rec.guildId}`;
}

/** Hostile text made fit for one line of the page, in full Unicode: no controls or bidi overrides, bounded. */
export function displayText(text: string, max: number): string {
  const cleaned = text.replace(UNSAFE_DISPLAY_CHARS, '').trim();
  const chars = Array.from(cleaned);
  return chars.length > max ? `${chars.slice(0, max - 3).join('')}...` : cleaned;
}

/** The public URL without trailing slashes: links and the messages' `uri` start with it. */
export function baseUrl(cfg: SiweConfig): string {
  return cfg.publicUrl.replace(/\/+$/, '');
}

/** The site a message names (scheme, host, URI); only http(s) can be signed in to. */
export function siteOf(cfg: SiweConfig): { scheme: string; domain: string; uri: string } {
  const url = new URL(baseUrl(cfg));
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new TypeError('publicUrl must be http(s)');
  return { scheme: url.protocol.slice(0, -1), domain: url.host, uri: baseUrl(cfg) };
}

/** How long a challenge stays valid, and so how long before its expiry it was issued. */
export function ttl(cfg: SiweConfig): number {
  return cfg.ttlMs ?? DEFAULT_CHALLENGE_TTL_MS;
}
