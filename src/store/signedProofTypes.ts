/** The signed-proof queue's part of the store. */
import type { JsonValue, NonceRecord } from './proofTypes.ts';

/** A wallet signature the HTTP server verified, waiting for the process that owns its guild to link it. */
export interface SignedProof {
  id: number;
  record: NonceRecord;
  /** The signer, as verified. */
  address: string;
  /** Claims so far (a proof that keeps failing is given up). */
  attempts: number;
  /** Proves the claim when finishing it. */
  claimToken: string;
}

/**
 * The signed-proof queue (`signed_proofs`, migration 6): with shards, the HTTP server runs once per
 * machine and hands each verified signature to the shard that owns its guild through the store, so a
 * shard restarting loses nothing.
 */
export interface SignedProofStore {
  /** Queue a verified signature; returns its id. */
  enqueueSignedProof(input: { record: NonceRecord; address: string }): Promise<number>;
  /** Open proofs (pending, or claimed under a lapsed lease), oldest first: id and guild only. */
  openSignedProofs(limit: number): Promise<{ id: number; guildId: string }[]>;
  /** Claim one under the store's lease; null when it is finished or someone else holds it. */
  claimSignedProof(id: number): Promise<SignedProof | null>;
  /** Record the outcome (any JSON the gating side chose); false when the claim had lapsed. */
  finishSignedProof(id: number, claimToken: string, result: JsonValue): Promise<boolean>;
  /** The outcome once finished; null while open; undefined for an unknown id. */
  signedProofResult(id: number): Promise<JsonValue | undefined>;
  /** Delete finished proofs last updated before `before`; returns how many. */
  deleteFinishedSignedProofs(before: number): Promise<number>;
}
