/** The account proofs' part of the store: what a Discord account proved by signature, app-wide. */

/**
 * A wallet or Farcaster account this Discord account proved by its own signature (Sign-In with Ethereum
 * or Solana, Sign in with Farcaster), in any server: it belongs to the account, and the member may bring
 * it to another server without signing again. One subject backs one Discord account app-wide (the
 * subject is the row's key). It counts in a server only once linked there (a `LinkRecord`).
 */
export interface AccountProof {
  /** The address (lowercase EVM, base58 Solana) that signed, or a Farcaster account's `farcaster,#fid`. */
  subject: string;
  userId: string;
  /** The identity as proven (a name, an address, a FID). */
  identity: string;
  platform: string;
  /** The signer's address. */
  address: string;
  provenAt: number;
}

/**
 * Account proofs (`account_proofs`, migration 22) and the member's sharing choice (`proof_sharing`):
 * with sharing on, the account's proofs count in every gating server the member is in or joins.
 */
export interface AccountProofStore {
  /**
   * Record a proof for its account. Another account's proof of the same subject is taken over only when
   * it was made before `challengeIssuedAt` (a later one won a race: `raced`); returns the account that
   * lost it, if any. When the account shares its proofs, its sharing's moment moves to `provenAt`, so
   * that every gateway process's pick-up brings the new proof to its servers (`sharingSince`).
   */
  saveAccountProof(
    proof: AccountProof,
    opts?: { challengeIssuedAt?: number },
  ): Promise<{ displacedUserId: string | null } | { refusal: 'raced' }>;
  /** Who proved a subject (an address, a `farcaster,#fid`), app-wide. */
  getAccountProof(subject: string): Promise<AccountProof | undefined>;
  /** The account's proofs, oldest first. */
  accountProofsOf(userId: string): Promise<AccountProof[]>;
  /** Delete the account's proofs (those whose identity or subject is in `names`, or all); returns them. */
  removeAccountProofs(userId: string, names?: readonly string[]): Promise<AccountProof[]>;
  /** Turn sharing on or off for the account. */
  setProofSharing(userId: string, on: boolean, at: number): Promise<void>;
  /** Whether the account shares its proofs with every gating server it is in. */
  sharesProofs(userId: string): Promise<boolean>;
  /**
   * The accounts that share their proofs, in order of `since` (ms, the writer's clock) then account, from
   * just after `after` in that order, at most `limit` (migration 23's index): what each gateway process
   * picks up for the servers it serves. `{ since: t, userId: '' }` starts with the moment `t`.
   */
  sharingSince(after: SharingTurnedOn, limit: number): Promise<SharingTurnedOn[]>;
}

/**
 * An account that shares its proofs, and since when: the moment it turned sharing on (turning it on again
 * while on keeps it), or of its latest proof made since.
 */
export interface SharingTurnedOn {
  userId: string;
  since: number;
}
