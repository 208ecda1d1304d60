/**
 * Sign In With Farcaster (FIP-11) messages: what the bot asks the relay for, and the offline half of
 * checking what comes back. A SIWF message is an EIP-4361 message whose statement is fixed by the
 * protocol ("Farcaster Auth"), on chain 10 (OP Mainnet), carrying the FID as a `farcaster://fid/<fid>`
 * resource. Since the statement cannot name the Discord account, the request id does, and the domain is
 * the bot's own: a message signed for another site, nonce, request or FID is refused here, before any
 * chain read. Whether the signer holds the FID is read from the chain (farcasterChain.ts).
 * @see https://github.com/farcasterxyz/protocol/discussions/110 (FIP-11)
 * @see farcasterxyz/auth-monorepo `packages/auth-client/src/messages/validate.ts`, `verify.ts`
 */
import { getAddress, isAddress, recoverMessageAddress } from 'viem';
import { parseSiweMessage } from 'viem/siwe';

/**
 * The statement every SIWF message carries, fixed by the protocol (auth-client also accepts the 2023
 * "Farcaster Connect"; the bot does not: no current app signs it).
 */
export const SIWF_STATEMENT = 'Farcaster Auth';
/** OP Mainnet, where Farcaster's registries live. */
export const SIWF_CHAIN_ID = 10;
const FID_RESOURCE = /^farcaster:\/\/fid\/([1-9]\d{0,19})\/?$/;
const MESSAGE_MAX_LENGTH = 4_000;
const SIGNATURE = /^0x[0-9a-fA-F]{130,6000}$/;
/** How far a Farcaster app's clock may run ahead of ours when it writes `Issued At`. */
const CLOCK_SKEW_MS = 5 * 60_000;

/** What the bot asked the relay for: what the signed message must carry. */
export interface SignInRequest {
  /** The bot's own host (PUBLIC_URL's), with its port when it has one. */
  domain: string;
  /** The page the member signs in on. */
  uri: string;
  nonce: string;
  /** Names the Discord account and the server (or Linked Roles): `requestIdOf`. */
  requestId: string;
  /** The identity's own FID as Web3.bio reports it. */
  fid: number;
  /** When the flow was made (an `Issued At` before it belongs to another sign-in) and when it ends. */
  createdAt: number;
  expiresAt: number;
}

/** Why an approval is refused. */
export type ApprovalRefusal =
  /** Not a Sign In With Farcaster message (no FID resource, another statement or chain, unreadable). */
  | 'malformed'
  /** Signed for another site: its domain or URI is not the bot's page. */
  | 'wrong_domain'
  /** Signed for another sign-in: its nonce is not this flow's. */
  | 'wrong_nonce'
  /** Its request id does not name this member and server. */
  | 'wrong_request'
  /** Approved by another Farcaster account than the identity's FID. */
  | 'wrong_fid'
  /** The flow or the message expired, or the message's times are not the ones asked for. */
  | 'expired'
  /** The signature is not the message's address's. */
  | 'bad_signature'
  /** The signer is neither the FID's custody address nor one of its auth addresses (on chain). */
  | 'not_authorized'
  /** The chain could not be read: nothing was decided, the member may try again. */
  | 'chain_unavailable';

/** What a valid message says (before the chain says whether its signer holds the FID). */
export interface CheckedMessage {
  fid: number;
  /** The signer, checksummed. */
  signer: `0x${string}`;
}

/** The request id of a flow: the Discord account and the server, or Linked Roles (every server). */
export function requestIdOf(userId: string, guildId: string, linkedRoles: boolean): string {
  return linkedRoles ? `discord:user:${userId}:linked-roles` : `discord:user:${userId}:server:${guildId}`;
}

/**
 * The offline checks of an approval, cheapest first: the message's shape and protocol fields, that it is
 * for the bot's domain and page, this nonce, this request and this FID, that its times are the ones
 * asked for and it has not expired, and that the signature is by the message's address.
 */
export async function checkSignInMessage(
  asked: SignInRequest,
  message: unknown,
  signature: unknown,
  now: number,
): Promise<{ ok: true; checked: CheckedMessage } | { ok: false; reason: ApprovalRefusal }> {
  const refuse = (reason: ApprovalRefusal) => ({ ok: false as const, reason });
  if (typeof message !== 'string' || message.length > MESSAGE_MAX_LENGTH) return refuse('malformed');
  if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return refuse('malformed');
  const parsed = parseSiweMessage(message);
  const resources = (parsed.resources ?? []).filter((r) => FID_RESOURCE.test(r));
  const statementOk = parsed.statement === SIWF_STATEMENT;
  if (
    !parsed.address ||
    !isAddress(parsed.address, { strict: false }) ||
    !parsed.domain ||
    !parsed.uri ||
    !parsed.nonce ||
    parsed.version !== '1' ||
    parsed.chainId !== SIWF_CHAIN_ID ||
    !statementOk ||
    resources.length !== 1 ||
    !(parsed.issuedAt instanceof Date) ||
    Number.isNaN(parsed.issuedAt.getTime())
  )
    return refuse('malformed');
  // The header line is the message's first: the domain a wallet shows is the one checked.
  if (!message.startsWith(`${asked.domain} wants you to sign in with your Ethereum account:\n`))
    return refuse('wrong_domain');
  if (parsed.domain !== asked.domain) return refuse('wrong_domain');
  // Another flow's approval names its own page too: the nonce says it is another sign-in.
  if (parsed.nonce !== asked.nonce) return refuse('wrong_nonce');
  if (parsed.uri !== asked.uri) return refuse('wrong_domain');
  if (parsed.requestId !== asked.requestId) return refuse('wrong_request');
  const fid = Number(FID_RESOURCE.exec(resources[0] ?? '')?.[1]);
  if (fid !== asked.fid) return refuse('wrong_fid');
  if (now >= asked.expiresAt) return refuse('expired');
  const expiration = parsed.expirationTime?.getTime();
  const notBefore = parsed.notBefore?.getTime();
  const issued = parsed.issuedAt.getTime();
  if (
    expiration === undefined ||
    Number.isNaN(expiration) ||
    expiration > asked.expiresAt ||
    now >= expiration ||
    (notBefore !== undefined && (Number.isNaN(notBefore) || notBefore > now)) ||
    issued < asked.createdAt - CLOCK_SKEW_MS ||
    issued > now + CLOCK_SKEW_MS
  )
    return refuse('expired');
  const signer = getAddress(parsed.address);
  const recovered = await recoverMessageAddress({ message, signature: signature as `0x${string}` }).catch(
    () => undefined,
  );
  if (recovered === undefined || getAddress(recovered) !== signer) return refuse('bad_signature');
  return { ok: true, checked: { fid, signer } };
}
