/**
 * Wallet-signature proof of ownership: Sign-In with Ethereum (EIP-4361) challenges bound to a Discord
 * user, a guild, an identity and the expected signer, with one-time expiring nonces; made here and checked
 * here (the message they sign is built in challengeMessage.ts).
 * @see https://eips.ethereum.org/EIPS/eip-4361
 */
import { randomBytes } from 'node:crypto';
import { createPublicClient, getAddress, http, isAddress, recoverMessageAddress, verifyMessage } from 'viem';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import type { GatingStore, NonceRecord } from '../../store/types.ts';
import { parseIdentity } from '../../web3bio/identity.ts';
import {
  baseUrl,
  buildChallengeMessage,
  buildSiweMessage,
  displayText,
  IDENTITY_MAX_LENGTH,
  isLinkedRoleChallenge,
  isSolanaChallenge,
  type SiweConfig,
  siteOf,
  ttl,
} from './challengeMessage.ts';
import { isSolanaAddress, verifySolanaSignature } from './solana.ts';

export type { NonceRecord };

/** The part of the gating store that challenges need. */
export type NonceStore = Pick<
  GatingStore,
  'createNonce' | 'consumeNonce' | 'getNonce' | 'countFailedAttempt'
>;

export type VerifyFailureReason =
  | 'unknown_nonce'
  | 'expired'
  | 'used'
  | 'tampered'
  | 'wrong_domain'
  | 'wrong_address'
  | 'bad_signature'
  | 'malformed';

export type VerifyOutcome =
  /** `address` is checksummed for EVM, as written (base58) for Solana. */
  | { ok: true; record: NonceRecord; address: string }
  | { ok: false; reason: VerifyFailureReason; detail?: VerifyFailureDetail };

/** What a refusal can say beyond its reason (the web tier words it in the member's language). */
export type VerifyFailureDetail =
  /** The contract-wallet check could not run: the chain node did not answer. */
  | { kind: 'chain_unavailable' }
  /** A valid signature by another account than the link's (`expected`, checksummed). */
  | { kind: 'signed_by'; signer: string; expected: string };

/**
 * How many unfinished (open: unused and unexpired) challenges one Discord account may hold at once,
 * across every server and the Linked Roles page together, so an account cannot mint them without limit
 * (each `/verify`, each "sign with its wallet" on the Linked Roles page makes one). A new challenge
 * beyond it replaces the account's oldest open one: that challenge is deleted, so its link is no longer
 * valid and its page answers as for any unknown or expired link.
 */
export const MAX_OPEN_CHALLENGES_PER_USER = 5;
/** 128 random bits as lowercase hex: alphanumeric, as EIP-4361 requires of a nonce. */
const NONCE_PATTERN = /^[0-9a-f]{32}$/;
const SNOWFLAKE_PATTERN = /^\d{1,20}$/;
const SIGNATURE_PATTERN = /^0x[0-9a-fA-F]{2,6000}$/;
const MESSAGE_MAX_LENGTH = 4_000;
/** Never part of a real identity; line breaks would also split the one-line EIP-4361 statement. */
const CONTROL_CHARS = /[\p{Cc}\p{Zl}\p{Zp}]/u;

/** True when `value` has the shape of a nonce this module issues (cheap check before any lookup). */
export function isChallengeNonce(value: string): boolean {
  return NONCE_PATTERN.test(value);
}

/** Creates and stores a one-time challenge; returns the link the member opens to sign it. */
export async function createChallenge(
  store: NonceStore,
  cfg: SiweConfig,
  input: {
    guildId: string;
    userId: string;
    /** The member's Discord username and the server's name, shown on the page and in the message. */
    userName: string | null;
    guildName: string | null;
    identity: string;
    /** An Ethereum address, or a Solana one (base58, kept as written). */
    address: string;
  },
): Promise<{ nonce: string; url: string; expiresAt: number }> {
  if (!SNOWFLAKE_PATTERN.test(input.guildId) || !SNOWFLAKE_PATTERN.test(input.userId)) {
    throw new TypeError('guildId and userId must be Discord snowflakes');
  }
  const solana = isSolanaAddress(input.address);
  if (!solana && !isAddress(input.address, { strict: false })) {
    throw new TypeError('address is neither an Ethereum nor a Solana address');
  }
  if (CONTROL_CHARS.test(input.identity)) throw new TypeError('identity contains control characters');
  if (displayText(input.identity, IDENTITY_MAX_LENGTH) === '') throw new TypeError('identity is empty');
  const nonce = randomBytes(16).toString('hex');
  const now = clock(cfg)();
  const expiresAt = now + ttl(cfg);
  const record = {
    nonce,
    guildId: input.guildId,
    userId: input.userId,
    userName: input.userName,
    guildName: input.guildName,
    identity: input.identity,
    address: solana ? input.address : input.address.toLowerCase(),
    expiresAt,
  };
  // Fail here rather than on the page if the configuration cannot produce a valid message.
  buildChallengeMessage(cfg, { ...record, usedAt: null, failedAttempts: 0 });
  await store.createNonce(record, { maxOpenPerUser: MAX_OPEN_CHALLENGES_PER_USER, now });
  return { nonce, url: `${baseUrl(cfg)}/verify/${nonce}`, expiresAt };
}

/**
 * Checks a signed challenge and, only when it is valid, consumes its nonce (so a failed attempt can be
 * retried, but a replay is refused as `used`). Without `message`, the one built for the nonce is checked.
 * A Linked Roles challenge is only accepted with `linkedRoles` (and only then), so neither page can
 * spend the other's.
 */
export async function verifyChallenge(
  store: NonceStore,
  cfg: SiweConfig,
  input: {
    nonce: string;
    message?: string | undefined;
    signature: `0x${string}`;
    linkedRoles?: boolean;
  },
): Promise<VerifyOutcome> {
  const linked = input.linkedRoles === true;
  if (!isChallengeNonce(input.nonce)) return fail('unknown_nonce');
  const submitted = input.message;
  if (submitted !== undefined && (typeof submitted !== 'string' || submitted.length > MESSAGE_MAX_LENGTH)) {
    return fail('malformed');
  }
  if (typeof input.signature !== 'string' || !SIGNATURE_PATTERN.test(input.signature))
    return fail('malformed');

  const record = await store.getNonce(input.nonce);
  if (!record || isLinkedRoleChallenge(record) !== linked) return fail('unknown_nonce');
  if (record.usedAt !== null) return fail('used');
  const now = clock(cfg)();
  if (now >= record.expiresAt) return fail('expired');

  if (isSolanaChallenge(record)) {
    const expected = buildChallengeMessage(cfg, record);
    if (submitted !== undefined && submitted !== expected)
      return explainSolanaMismatch(cfg, record, submitted);
    if (!verifySolanaSignature(record.address, expected, input.signature)) return fail('bad_signature');
    const consumed = await store.consumeNonce(record.nonce, now);
    if (!consumed) return fail('used');
    return { ok: true, record: consumed, address: record.address };
  }

  const expected = buildSiweMessage(cfg, record);
  if (submitted !== undefined && submitted !== expected) return explainMismatch(cfg, record, submitted);
  if (!validateSiweMessage({ message: parseSiweMessage(expected), time: new Date(now) })) {
    return fail('expired');
  }

  const signatureCheck = await checkSignature(cfg, record, expected, input.signature, now);
  if (signatureCheck) return signatureCheck;

  const consumed = await store.consumeNonce(record.nonce, now);
  if (!consumed) return fail('used');
  return { ok: true, record: consumed, address: getAddress(record.address) };
}

/** Why a submitted Sign-In With Solana message differs from the one built for the nonce. */
function explainSolanaMismatch(cfg: SiweConfig, record: NonceRecord, message: string): VerifyOutcome {
  const [header = '', address = ''] = message.split('\n');
  const domain = header.endsWith(' wants you to sign in with your Solana account:')
    ? header.split(' ')[0]
    : undefined;
  if (domain === undefined) return fail('malformed');
  if (domain !== siteOf(cfg).domain) return fail('wrong_domain');
  if (address !== record.address) return fail('wrong_address');
  return fail('tampered');
}

/** Undefined when the signature is the expected signer's; otherwise the refusal. */
async function checkSignature(
  cfg: SiweConfig,
  record: NonceRecord,
  message: string,
  signature: `0x${string}`,
  now: number,
): Promise<VerifyOutcome | undefined> {
  const expectedSigner = getAddress(record.address);
  const eoaValid = await verifyMessage({ address: expectedSigner, message, signature }).catch(() => false);
  if (eoaValid) return undefined;

  if (cfg.rpcUrl) {
    const verdict = await verifyContractWallet(cfg.rpcUrl, {
      address: expectedSigner,
      message,
      signature,
      nonce: record.nonce,
      time: new Date(now),
    });
    if (verdict === true) return undefined;
    if (verdict === 'unavailable') {
      return fail('bad_signature', { kind: 'chain_unavailable' });
    }
  }

  const recovered = await recoverMessageAddress({ message, signature }).catch(() => undefined);
  if (recovered) {
    return fail('wrong_address', { kind: 'signed_by', signer: recovered, expected: expectedSigner });
  }
  return fail('bad_signature');
}

/** ERC-1271 (and ERC-6492 for undeployed accounts) through the configured chain node. */
async function verifyContractWallet(
  rpcUrl: string,
  check: { address: `0x${string}`; message: string; signature: `0x${string}`; nonce: string; time: Date },
): Promise<boolean | 'unavailable'> {
  const client = rpcClient(rpcUrl);
  try {
    if (await client.verifySiweMessage(check)) return true;
  } catch {
    return 'unavailable';
  }
  // viem reports a failed eth_call as an invalid signature; tell "node down" apart so the member retries.
  return client.getChainId().then(
    () => false,
    () => 'unavailable' as const,
  );
}

const RPC_CLIENTS = new Map<string, ReturnType<typeof createPublicClient>>();

/** One chain-node client per RPC URL for the whole process (its connections are reused). */
function rpcClient(rpcUrl: string): ReturnType<typeof createPublicClient> {
  let client = RPC_CLIENTS.get(rpcUrl);
  if (!client) {
    client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) });
    RPC_CLIENTS.set(rpcUrl, client);
  }
  return client;
}

/** Names the most specific reason a submitted message differs from the one built for the nonce. */
function explainMismatch(cfg: SiweConfig, record: NonceRecord, message: string): VerifyOutcome {
  const parsed = parseSiweMessage(message);
  if (!parsed.address || !parsed.domain || !parsed.uri || !parsed.nonce) return fail('malformed');
  const site = siteOf(cfg);
  if (
    parsed.domain !== site.domain ||
    parsed.uri !== site.uri ||
    (parsed.scheme ?? site.scheme) !== site.scheme
  ) {
    return fail('wrong_domain');
  }
  if (parsed.address.toLowerCase() !== record.address) return fail('wrong_address');
  return fail('tampered');
}

/** A refusal, with what more it can say. */
function fail(reason: VerifyFailureReason, detail?: VerifyFailureDetail): VerifyOutcome {
  return detail ? { ok: false, reason, detail } : { ok: false, reason };
}

/** What a valid signature proved: the challenge's identity, its platform, and the signer (EVM lower-cased). */
export function signedIdentity(
  record: Pick<NonceRecord, 'identity'>,
  address: string,
): { identity: string; platform: string; address: string } {
  let platform = 'ethereum';
  try {
    platform = String(parseIdentity(record.identity).platform);
  } catch {
    // The identity was parsed when the challenge was made; keep the proof even if parsing rules changed.
  }
  return {
    identity: record.identity,
    platform,
    address: address.startsWith('0x') ? address.toLowerCase() : address,
  };
}

function clock(cfg: SiweConfig): () => number {
  return cfg.now ?? Date.now;
}
