/**
 * Interaction hand-offs (`interaction_handoffs`, migrations 14 and 16): with INTERACTIONS=http, a web
 * replica that receives a gating command defers it and queues it here; the gateway worker, which runs
 * gating, claims it under a lease (renewed while the command runs) and answers through the interaction's
 * webhook. A claim that lapses (the worker died) is taken over. One row per interaction id: a second
 * enqueue of the same interaction (a replay) queues nothing. An answered row keeps only that mark (no
 * interaction, no token) until pruned, 15 minutes after it was queued.
 */
import type { JsonValue } from './proofTypes.ts';

export interface HandoffInput {
  /** Discord's id of the interaction: at most one hand-off each. */
  interactionId: string;
  /** '' outside a guild. */
  guildId: string;
  /** The interaction as Discord sent it, without its token. */
  interaction: JsonValue;
  /** Its token, sealed (AES-GCM with TOKEN_ENCRYPTION_KEY); never stored in clear. */
  sealedToken: string;
}

export interface ClaimedHandoff {
  id: number;
  interactionId: string;
  guildId: string;
  /** The interaction as queued (without its token, except in a row queued before migration 16). */
  interaction: JsonValue;
  /** Null in a row queued before migration 16. */
  sealedToken: string | null;
  /** When the replica queued it (ms): its token lasts 15 minutes from Discord's side. */
  createdAt: number;
  /** Claims so far, this one included. */
  attempts: number;
  claimToken: string;
  /**
   * The process (`claimHandoff`'s `holder`) whose claim had lapsed when this one took the hand-off over:
   * it stopped renewing for a whole lease, so it is dead. Null on a first claim.
   */
  takenFrom: string | null;
}

/** The shards a worker serves: a guild is theirs when `(guild_id >> 22) % count` is one of `ids`. */
export interface ShardFilter {
  ids: readonly number[];
  count: number;
}

export interface HandoffStore {
  /** Queue an interaction; its row id, or null when this interaction was queued already (a replay). */
  enqueueHandoff(input: HandoffInput): Promise<number | null>;
  /**
   * Open hand-offs (unanswered, never claimed or claimed under a lapsed lease), oldest first, of the
   * guilds `shards` serve (all without it): id and guild only.
   */
  openHandoffs(limit: number, shards?: ShardFilter): Promise<{ id: number; guildId: string }[]>;
  /**
   * Claim one under the store's lease for `holder` (a process id); null when another worker holds it, or
   * it is answered or gone.
   */
  claimHandoff(id: number, holder?: string): Promise<ClaimedHandoff | null>;
  /** Extend the claim by the store's lease; false when it lapsed to another worker meanwhile. */
  renewHandoff(id: number, claimToken: string): Promise<boolean>;
  /**
   * Mark a hand-off answered (or given up): its interaction and token are dropped, its id stays until
   * pruned; false when the claim had lapsed to another worker.
   */
  finishHandoff(id: number, claimToken: string): Promise<boolean>;
  /** Delete hand-offs queued before `before` (ms), answered or not; returns how many. */
  pruneHandoffs(before: number): Promise<number>;
}
