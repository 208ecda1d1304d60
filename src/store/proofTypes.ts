/** What proofs leave in the store: the registry's holdings, signing nonces, and the JSON they carry. */

export type ProofMethod = 'record' | 'signature';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * The ownership registry: which Discord account holds an identity or an address, in one scope (a guild,
 * or `LINKED_ROLES_SCOPE` for Linked Roles, app-wide), by which proof, since when. The store keeps one
 * holder per subject (its primary key), so two proofs racing for one wallet cannot both win.
 */
export interface Holding {
  scope: string;
  kind: 'identity' | 'address';
  /** The identity as proven, or the address (lowercase EVM, base58 Solana). */
  subject: string;
  userId: string;
  /** The proven identity that brought the subject (for an address, the name or address proven). */
  identity: string;
  proofMethod: ProofMethod;
  since: number;
}

/** What a proof claims: its identity, and the address it resolves to (or the signer). */
export interface HoldingClaim {
  scope: string;
  userId: string;
  identity: string;
  address: string | null;
  proofMethod: ProofMethod;
  at: number;
  /**
   * Other identities the proof makes the account's, held like a wallet: a record proof cannot take one
   * another account holds by signature. A Farcaster name's record proof claims its FID (`farcaster,#3`),
   * so one Farcaster account backs one Discord account whether proven by record or by Sign in with
   * Farcaster.
   */
  aliases?: readonly string[];
  /**
   * For a signature: when its challenge was made. A holding another account took after that is not taken
   * over (two completions racing for one wallet: the first wins, the later one is refused).
   */
  challengeIssuedAt?: number;
}

/**
 * Why a claim was refused: the address is held by another account and a record proof cannot take a
 * wallet; the same for an alias (`fid_taken`: a Farcaster account another account proved by Sign in with
 * Farcaster); or another account proved the subject after this proof's challenge was made.
 */
export type HoldingRefusal = { code: 'address_taken' | 'fid_taken' | 'raced'; holding: Holding };

/** A one-time SIWE nonce bound to a member, a guild, an identity and the expected signer. */
export interface NonceRecord {
  nonce: string;
  guildId: string;
  userId: string;
  /** The member's Discord username and the server's name when the challenge was made, shown when signing. */
  userName: string | null;
  guildName: string | null;
  identity: string;
  /** Expected signer, lowercase. */
  address: string;
  expiresAt: number;
  usedAt: number | null;
  /** Refused signatures so far; the challenge is burned at the limit. */
  failedAttempts: number;
  /**
   * Set on the record a Sign In With Farcaster approval hands to the signed-proof path (never on a
   * stored challenge): the FID, and how the signer holds it.
   */
  farcaster?: { fid: number; authMethod: 'custody' | 'authAddress' };
}
