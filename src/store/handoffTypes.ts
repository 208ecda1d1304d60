/**
 * Interaction hand-offs (`interaction_handoffs`, migration 14): with INTERACTIONS=http, a web replica that
 * receives a gating command defers it and queues it here; the gateway worker, which runs gating, claims
 * it under a lease and answers through the interaction's webhook. A claim that lapses (the worker died)
 * is taken over.
 */
import type { JsonValue } from './proofTypes.ts';

export interface ClaimedHandoff {
  id: number;
  guildId: string;
  /** The interaction as Discord sent it. */
  interaction: JsonValue;
  /** When the replica queued it (ms): its token lasts 15 minutes from Discord's side. */
  createdAt: number;
  /** Claims so far, this one included. */
  attempts: number;
  claimToken: string;
}

export interface HandoffStore {
  /** Queue an interaction; returns its id. */
  enqueueHandoff(guildId: string, interaction: JsonValue): Promise<number>;
  /** Open hand-offs (never claimed, or claimed under a lapsed lease), oldest first: id and guild only. */
  openHandoffs(limit: number): Promise<{ id: number; guildId: string }[]>;
  /** Claim one under the store's lease; null when another worker holds it or it is gone. */
  claimHandoff(id: number): Promise<ClaimedHandoff | null>;
  /** Remove a hand-off once answered (or given up); false when the claim had lapsed to another worker. */
  finishHandoff(id: number, claimToken: string): Promise<boolean>;
}
