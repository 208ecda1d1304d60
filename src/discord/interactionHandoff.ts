/**
 * INTERACTIONS=http split into web replicas and one gateway worker (PROCESS_ROLE=web / gateway). Gating
 * needs the gateway's guild state and runs in the worker only, so a replica that receives a gating command
 * (or a click or modal of one) defers it within Discord's 3 s and queues it in the shared store, its
 * token sealed with TOKEN_ENCRYPTION_KEY; the worker's inbox claims it under a lease (renewed while the
 * command runs), runs it through the same router, and answers by editing the deferred reply through the
 * interaction's webhook. Once per interaction id: a second enqueue of the same interaction (a replay, even
 * to another replica while Redis is down) queues nothing. A worker that dies mid-answer loses nothing: its
 * claim lapses and another look takes it over. An interaction whose token has run out (15 minutes) is
 * dropped, as nobody could see its answer, and rows that old are pruned.
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object
 */

import type { APIInteraction } from 'discord-api-types/v10';
import { openToken, sealToken } from '../gating/linkedRoles/linkedRoles.ts';
import { CoalescedPoller } from '../ops/coalescedPoller.ts';
import type { Logger } from '../ops/log.ts';
import { PROCESS_INSTANCE } from '../ops/processInstance.ts';
import type { GuildLeaseStore } from '../store/guildLeaseTypes.ts';
import type { HandoffStore, ShardFilter } from '../store/handoffTypes.ts';
import type { JsonValue } from '../store/types.ts';
import { Responder } from './responder.ts';
import type { WebhookRest } from './webhookRest.ts';

/** How long an interaction token lets the app answer. */
export const INTERACTION_TOKEN_LIFE_MS = 15 * 60_000;
/** How often the worker looks for hand-offs nobody told it about (replicas run on other machines). */
export const DEFAULT_HANDOFF_POLL_MS = 250;
/** How often the worker deletes hand-offs older than a token (answered or not). */
export const DEFAULT_HANDOFF_PRUNE_MS = 60_000;
/** Hand-offs answered at once per look. */
const CONCURRENCY = 8;

/** What `handOver` did: queued it, or found it queued already (a replay, refused). */
export type HandOverResult = 'queued' | 'replayed';

/** A sealed token opens only for its own interaction: one row's token cannot be moved to another. */
const sealingContext = (interactionId: string) => `interaction-handoff:${interactionId}`;

/** The replica's side: queue the (already deferred) interaction for the worker, its token sealed with `key`. */
export function handoffQueue(
  store: Pick<HandoffStore, 'enqueueHandoff'>,
  key: Buffer,
  nudge: () => void = () => {},
): { handOver(interaction: APIInteraction): Promise<HandOverResult> } {
  return {
    async handOver(interaction) {
      const { token, ...rest } = interaction;
      const id = await store.enqueueHandoff({
        interactionId: interaction.id,
        guildId: interaction.guild_id ?? '',
        interaction: rest as unknown as JsonValue,
        sealedToken: sealToken(key, token, sealingContext(interaction.id)),
      });
      if (id === null) return 'replayed';
      nudge();
      return 'queued';
    },
  };
}

export interface HandoffInboxOptions {
  store: Pick<
    HandoffStore,
    'openHandoffs' | 'claimHandoff' | 'renewHandoff' | 'finishHandoff' | 'pruneHandoffs'
  > &
    Pick<GuildLeaseStore, 'expireGuildLease'>;
  logger: Logger;
  /** The router's `handle`. */
  run: (interaction: APIInteraction, responder: Responder) => Promise<void>;
  /** For the webhook answers. */
  rest: WebhookRest;
  /** TOKEN_ENCRYPTION_KEY: opens the tokens the replicas sealed. */
  key: Buffer;
  /** The store's lease (GATING_LEASE_SECONDS): a claim is renewed every third of it while its command runs. */
  leaseMs: number;
  /** The shards this process serves (a sharded worker answers only its own guilds'); all when absent. */
  shards?: ShardFilter;
  pollMs?: number;
  pruneEveryMs?: number;
  /** Claims before a hand-off that keeps failing is dropped. Default 3. */
  maxAttempts?: number;
  /** The process its claims name (a worker taking one over ends this process's guild leases). Default PROCESS_INSTANCE. */
  holder?: string;
  now?: () => number;
}

/** The worker's side: claims queued interactions and answers them. */
export class HandoffInbox extends CoalescedPoller {
  readonly #o: HandoffInboxOptions & {
    now: () => number;
    maxAttempts: number;
    pruneEveryMs: number;
    holder: string;
  };
  #prunedAt = Number.NEGATIVE_INFINITY;

  constructor(options: HandoffInboxOptions) {
    super({
      pollMs: options.pollMs ?? DEFAULT_HANDOFF_POLL_MS,
      logger: options.logger,
      what: 'interaction hand-off inbox',
    });
    this.#o = {
      now: Date.now,
      maxAttempts: 3,
      pruneEveryMs: DEFAULT_HANDOFF_PRUNE_MS,
      holder: PROCESS_INSTANCE,
      ...options,
    };
  }

  protected async look(): Promise<void> {
    const { store, shards } = this.#o;
    await this.#pruneWhenDue();
    for (;;) {
      if (this.stopping) return;
      const open = await store.openHandoffs(CONCURRENCY * 4, shards);
      if (open.length === 0) return;
      for (let i = 0; i < open.length; i += CONCURRENCY) {
        await Promise.all(open.slice(i, i + CONCURRENCY).map((h) => this.#answer(h.id)));
      }
    }
  }

  /** Rows older than a token are of no use to anyone: answered ones kept their id only, open ones cannot be answered. */
  async #pruneWhenDue(): Promise<void> {
    const { store, logger, now, pruneEveryMs } = this.#o;
    const at = now();
    if (at - this.#prunedAt < pruneEveryMs) return;
    this.#prunedAt = at;
    const pruned = await store.pruneHandoffs(at - INTERACTION_TOKEN_LIFE_MS);
    if (pruned > 0) logger.info({ pruned }, 'interaction hand-offs older than their token pruned');
  }

  async #answer(id: number): Promise<void> {
    const { store, logger, now, maxAttempts, rest } = this.#o;
    const claim = await store.claimHandoff(id, this.#o.holder);
    if (!claim) return;
    const log = { handoffId: claim.id, interactionId: claim.interactionId, guildId: claim.guildId };
    if (claim.takenFrom !== null) await this.#takeOver(claim.guildId, claim.takenFrom, log);
    const age = now() - claim.createdAt;
    if (age >= INTERACTION_TOKEN_LIFE_MS || claim.attempts > maxAttempts) {
      logger.warn(
        { ...log, age, attempts: claim.attempts },
        'interaction hand-off dropped: too old or kept failing',
      );
      await store.finishHandoff(claim.id, claim.claimToken);
      return;
    }
    const interaction = this.#withToken(claim.interaction, claim.sealedToken, claim.interactionId);
    if (!interaction) {
      logger.error(
        log,
        'interaction hand-off dropped: its token does not open with TOKEN_ENCRYPTION_KEY (the replica that queued it has another key)',
      );
      await store.finishHandoff(claim.id, claim.claimToken);
      return;
    }
    const responder = new Responder(rest, interaction, alreadyDeferred, 'deferred');
    const renewal = this.#keepLease(claim.id, claim.claimToken, log);
    try {
      // The router never rejects: it answers (or logs why it could not) and the hand-off is done.
      await this.#o.run(interaction, responder);
    } finally {
      clearInterval(renewal);
    }
    if (await store.finishHandoff(claim.id, claim.claimToken))
      logger.info({ ...log, ms: Math.round(now() - claim.createdAt) }, 'handed-over interaction answered');
    else logger.warn(log, 'handed-over interaction answered, but its claim had lapsed to another worker');
  }

  /**
   * The worker that held this hand-off died (its claim lapsed unrenewed): a re-check pass it ran on the
   * guild died with it, so its lease ends now rather than a lease later, and this worker's command (or its
   * look for lapsed passes) runs the pass instead of answering that another process is on it.
   */
  async #takeOver(guildId: string, dead: string, log: Record<string, unknown>): Promise<void> {
    if (guildId === '' || dead === this.#o.holder) return;
    try {
      if (await this.#o.store.expireGuildLease(guildId, dead))
        this.#o.logger.warn(
          { ...log, deadProcess: dead },
          'interaction hand-off taken over from a dead worker: its re-check lease on the server ended',
        );
    } catch (error) {
      this.#o.logger.warn({ ...log, err: error }, "could not end a dead worker's re-check lease");
    }
  }

  /** The interaction with its token opened (a row queued before sealing carries it in clear); null when it does not open. */
  #withToken(queued: JsonValue, sealed: string | null, interactionId: string): APIInteraction | null {
    const interaction = queued as unknown as APIInteraction;
    if (sealed === null) return typeof interaction.token === 'string' ? interaction : null;
    const token = openToken(this.#o.key, sealed, sealingContext(interactionId));
    return token === undefined ? null : { ...interaction, token };
  }

  /** Renews the claim every third of the lease while the command runs, so no other worker takes it over. */
  #keepLease(id: number, claimToken: string, log: Record<string, unknown>): NodeJS.Timeout {
    const timer = setInterval(
      () => {
        this.#o.store.renewHandoff(id, claimToken).then(
          (renewed) => {
            if (!renewed) this.#o.logger.warn(log, 'interaction hand-off lease lapsed to another worker');
          },
          (error: unknown) =>
            this.#o.logger.warn({ ...log, err: error }, 'could not renew an interaction hand-off lease'),
        );
      },
      Math.max(10, Math.floor(this.#o.leaseMs / 3)),
    );
    timer.unref();
    return timer;
  }
}

/** A handed-over interaction was deferred by the replica: its first response is spent. */
async function alreadyDeferred(): Promise<void> {
  throw new Error('a handed-over interaction was already deferred by the web replica');
}
