/**
 * Passes their process never finished: a guild's re-check lease that ran out without being released means
 * the process running the pass died mid-way (killed, out of memory). This look finds them every few
 * seconds and runs the pass again, so the members it had not reached yet get their roles now, not at the
 * next periodic pass a day later. A live holder renews its lease every third of it, so its pass is never
 * taken from it; a dead one's lapses within one lease (GATING_LEASE_SECONDS), or at once when a worker
 * takes its interaction hand-off over (interactionHandoff.ts).
 */
import type { Client } from 'discord.js';
import { CoalescedPoller } from '../../ops/coalescedPoller.ts';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import { servesGuild } from '../roles/discordReads.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';

/** Lapsed leases read per look. */
const PER_LOOK = 50;

export interface LapsedPassesOptions {
  store: Pick<GatingStore, 'lapsedGuildLeases' | 'releaseGuildLease' | 'getGuildSettings' | 'guildLeaseMs'>;
  discord: Client;
  logger: Logger;
  tasks: BackgroundTasks;
  /** Runs the guild's pass again (GuildRechecks' `recheckGuild`, which joins one already running here). */
  recheck: (guildId: string) => Promise<unknown>;
  /** Default: a third of the store's lease, between 1 and 10 s. */
  pollMs?: number;
}

/** Resumes the guild passes whose process died before finishing them. */
export class LapsedPasses extends CoalescedPoller {
  readonly #o: LapsedPassesOptions;
  readonly #resuming = new Set<string>();

  constructor(options: LapsedPassesOptions) {
    super({
      pollMs: options.pollMs ?? Math.min(10_000, Math.max(1_000, options.store.guildLeaseMs / 3)),
      logger: options.logger,
      what: 'look for re-check passes cut short',
    });
    this.#o = options;
  }

  protected async look(): Promise<void> {
    const { store, discord, logger, tasks } = this.#o;
    for (const { guildId, holder } of await store.lapsedGuildLeases(PER_LOOK)) {
      if (this.stopping || tasks.stopping) return;
      if (this.#resuming.has(guildId) || !servesGuild(discord, guildId)) continue;
      const settings = await store.getGuildSettings(guildId);
      if (!settings?.enabled || !discord.guilds.cache.has(guildId)) {
        // Gating was switched off, or the bot left (an unavailable server stays cached): nothing to
        // resume, and nothing to look at again.
        await store.releaseGuildLease(guildId, holder);
        continue;
      }
      logger.warn(
        { guildId, deadHolder: holder },
        'a re-check pass its process never finished: running it again',
      );
      this.#resuming.add(guildId);
      tasks.run(guildId, () => this.#o.recheck(guildId).finally(() => this.#resuming.delete(guildId)));
    }
  }
}
