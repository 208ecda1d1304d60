/**
 * INTERACTIONS=http split into web replicas and one gateway worker (PROCESS_ROLE=web / gateway). Gating
 * needs the gateway's guild state and runs in the worker only, so a replica that receives a gating command
 * (or a click or modal of one) defers it within Discord's 3 s and queues it in the shared store; the
 * worker's inbox claims it under a lease, runs it through the same router, and answers by editing the
 * deferred reply through the interaction's webhook. A worker that dies mid-answer loses nothing: its
 * claim lapses and another look takes it over. An interaction whose token has run out (15 minutes) is
 * dropped, as nobody could see its answer.
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object
 */

import type { APIInteraction } from 'discord-api-types/v10';
import { CoalescedPoller } from '../ops/coalescedPoller.ts';
import type { Logger } from '../ops/log.ts';
import type { HandoffStore } from '../store/handoffTypes.ts';
import type { JsonValue } from '../store/types.ts';
import { Responder } from './responder.ts';
import type { WebhookRest } from './webhookRest.ts';

/** How long an interaction token lets the app answer. */
export const INTERACTION_TOKEN_LIFE_MS = 15 * 60_000;
/** How often the worker looks for hand-offs nobody told it about (replicas run on other machines). */
export const DEFAULT_HANDOFF_POLL_MS = 250;
/** Hand-offs answered at once per look. */
const CONCURRENCY = 8;

/** The replica's side: queue the (already deferred) interaction for the worker. */
export function handoffQueue(
  store: Pick<HandoffStore, 'enqueueHandoff'>,
  nudge: () => void = () => {},
): { handOver(interaction: APIInteraction): Promise<void> } {
  return {
    async handOver(interaction) {
      await store.enqueueHandoff(interaction.guild_id ?? '', interaction as unknown as JsonValue);
      nudge();
    },
  };
}

export interface HandoffInboxOptions {
  store: Pick<HandoffStore, 'openHandoffs' | 'claimHandoff' | 'finishHandoff'>;
  logger: Logger;
  /** The router's `handle`. */
  run: (interaction: APIInteraction, responder: Responder) => Promise<void>;
  /** For the webhook answers. */
  rest: WebhookRest;
  /** Whether this process's shards serve the guild (a sharded worker claims only its own guilds'). */
  ownsGuild: (guildId: string) => boolean;
  pollMs?: number;
  /** Claims before a hand-off that keeps failing is dropped. Default 3. */
  maxAttempts?: number;
  now?: () => number;
}

/** The worker's side: claims queued interactions and answers them. */
export class HandoffInbox extends CoalescedPoller {
  readonly #o: HandoffInboxOptions & { now: () => number; maxAttempts: number };

  constructor(options: HandoffInboxOptions) {
    super({
      pollMs: options.pollMs ?? DEFAULT_HANDOFF_POLL_MS,
      logger: options.logger,
      what: 'interaction hand-off inbox',
    });
    this.#o = { now: Date.now, maxAttempts: 3, ...options };
  }

  protected async look(): Promise<void> {
    const { store, ownsGuild } = this.#o;
    for (;;) {
      if (this.stopping) return;
      const open = (await store.openHandoffs(CONCURRENCY * 4)).filter((h) => ownsGuild(h.guildId));
      if (open.length === 0) return;
      for (let i = 0; i < open.length; i += CONCURRENCY) {
        await Promise.all(open.slice(i, i + CONCURRENCY).map((h) => this.#answer(h.id)));
      }
    }
  }

  async #answer(id: number): Promise<void> {
    const { store, logger, now, maxAttempts, rest } = this.#o;
    const claim = await store.claimHandoff(id);
    if (!claim) return;
    const interaction = claim.interaction as unknown as APIInteraction;
    const log = { handoffId: claim.id, interactionId: interaction.id, guildId: claim.guildId };
    const age = now() - claim.createdAt;
    if (age >= INTERACTION_TOKEN_LIFE_MS || claim.attempts > maxAttempts) {
      logger.warn(
        { ...log, age, attempts: claim.attempts },
        'interaction hand-off dropped: too old or kept failing',
      );
      await store.finishHandoff(claim.id, claim.claimToken);
      return;
    }
    const responder = new Responder(rest, interaction, alreadyDeferred, 'deferred');
    // The router never rejects: it answers (or logs why it could not) and the hand-off is done.
    await this.#o.run(interaction, responder);
    await store.finishHandoff(claim.id, claim.claimToken);
    logger.info({ ...log, ms: Math.round(now() - claim.createdAt) }, 'handed-over interaction answered');
  }
}

/** A handed-over interaction was deferred by the replica: its first response is spent. */
async function alreadyDeferred(): Promise<void> {
  throw new Error('a handed-over interaction was already deferred by the web replica');
}
