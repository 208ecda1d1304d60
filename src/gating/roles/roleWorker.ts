/**
 * Applies queued role changes, one guild queue at a time. Changes are claimed from the durable store one
 * by one under a lease (see RoleChangeApplier), so a crash loses nothing and a lapsed claim never edits
 * over a newer change. A role Discord refuses to let the bot manage is blocked (RoleBlocks): its changes
 * wait in the queue, not failed, until Discord reports a change that may fix it (`unblock`), or a probe
 * succeeds; the guild's loop sleeps until then.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import { delay, servesGuild } from './discordReads.ts';
import type { GuildNotices } from './logChannel.ts';
import { RoleBlocks } from './roleBlocks.ts';
import { RoleChangeApplier } from './roleChangeApplier.ts';

export interface RoleWorkerOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  notices: GuildNotices;
  /** How often to look again while another worker holds a guild's changes. Default 2000 ms. */
  pollMs?: number;
  /** Tries per change for retryable errors (5xx, network). Default 3. */
  maxAttempts?: number;
  /** First wait between tries, doubled each time. Default 1000 ms. */
  backoffMs?: number;
  /** First wait before probing a blocked role again, doubled each time. Default 30 s. */
  probeMs?: number;
  /** Longest wait between probes. Default 10 min. */
  maxProbeMs?: number;
  /** How long a claim lasts in the store (its lease is renewed at a third of this). Default 60 s. */
  leaseMs?: number;
  now?: () => number;
}

/** Longest pause of a guild's loop while its store keeps failing. */
const MAX_STORE_BACKOFF_MS = 30_000;

/** The per-guild role-change worker. */
export class RoleWorker {
  readonly #o: { store: GatingStore; discord: Client; logger: Logger; pollMs: number; now: () => number };
  readonly #blocks: RoleBlocks;
  readonly #applier: RoleChangeApplier;
  readonly #loops = new Map<string, Promise<void>>();
  readonly #rekick = new Set<string>();
  readonly #wakers = new Map<string, () => void>();
  #stopping = false;

  constructor(opts: RoleWorkerOptions) {
    this.#o = {
      store: opts.store,
      discord: opts.discord,
      logger: opts.logger,
      pollMs: opts.pollMs ?? 2_000,
      now: opts.now ?? Date.now,
    };
    this.#blocks = new RoleBlocks({
      now: this.#o.now,
      ...(opts.probeMs === undefined ? {} : { probeMs: opts.probeMs }),
      ...(opts.maxProbeMs === undefined ? {} : { maxProbeMs: opts.maxProbeMs }),
    });
    this.#applier = new RoleChangeApplier({
      store: opts.store,
      discord: opts.discord,
      logger: opts.logger,
      notices: opts.notices,
      blocks: this.#blocks,
      onUnblocked: (guildId) => this.unblock(guildId),
      isStopping: () => this.#stopping,
      maxAttempts: opts.maxAttempts ?? 3,
      backoffMs: opts.backoffMs ?? 1_000,
      leaseMs: opts.leaseMs ?? 60_000,
      now: this.#o.now,
    });
  }

  /** Make sure the guild's queue is being worked on. */
  kick(guildId: string): void {
    if (this.#stopping) return;
    if (this.#loops.has(guildId)) {
      this.#rekick.add(guildId);
      this.#wakers.get(guildId)?.();
      return;
    }
    const loop = this.#run(guildId)
      .catch((error: unknown) =>
        this.#o.logger.error({ err: error, guildId }, 'role worker stopped on an error'),
      )
      .finally(() => {
        this.#loops.delete(guildId);
        if (this.#rekick.delete(guildId)) this.kick(guildId);
      });
    this.#loops.set(guildId, loop);
  }

  /**
   * Pick up the unfinished changes (pending, or in progress under a lapsed lease after a crash) of every
   * guild this process's shards serve.
   */
  async resume(): Promise<void> {
    for (const settings of await this.#o.store.listGuildSettings()) {
      if (servesGuild(this.#o.discord, settings.guildId)) this.kick(settings.guildId);
    }
  }

  /**
   * Something that may fix a blocked role happened (settings saved, a role, the guild or the bot's own
   * member updated): lift the guild's blocks and send its waiting changes now.
   */
  async unblock(guildId: string): Promise<void> {
    if (!this.#blocks.lift(guildId)) return;
    this.#o.logger.info({ guildId }, 'role blocks lifted after a change in the server');
    await this.#o.store.resumeDeferredRoleChanges(guildId);
    this.kick(guildId);
  }

  /** Roles whose changes wait on a permission problem the admins were told about. */
  blockedRoles(guildId: string): string[] {
    return this.#blocks.blockedRoles(guildId);
  }

  /** Resolves when no change is left (in the guild, or anywhere) but those waiting on a block. */
  async idle(guildId?: string): Promise<void> {
    for (;;) {
      if (this.#stopping) return;
      const loops = guildId === undefined ? [...this.#loops.values()] : [this.#loops.get(guildId)];
      const running = loops.filter((l) => l !== undefined);
      if (running.length > 0) {
        await Promise.all(running);
        continue;
      }
      if ((await this.#o.store.pendingRoleChanges(guildId)) === 0) return;
      // What is left waits on a block (its probe, or a fix, sends it).
      if (guildId === undefined ? this.#blocks.size > 0 : this.blockedRoles(guildId).length > 0) return;
      if (guildId === undefined) await this.resume();
      else this.kick(guildId);
      if (this.#loops.size === 0) return;
    }
  }

  /** Take no new change; wait (up to `graceMs`) for the edits in progress. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    for (const wake of this.#wakers.values()) wake();
    const all = Promise.all([...this.#loops.values()]).then(() => true);
    const finished = await Promise.race([all, delay(graceMs).then(() => false)]);
    if (!finished)
      this.#o.logger.warn({ guilds: this.#loops.size }, 'role worker stopped with edits in flight');
  }

  async #run(guildId: string): Promise<void> {
    let failures = 0;
    while (!this.#stopping) {
      this.#rekick.delete(guildId);
      try {
        const [change] = await this.#o.store.claimRoleChanges(guildId, 1);
        if (change) {
          await this.#applier.apply(change);
          failures = 0;
          continue;
        }
        const pending = await this.#o.store.pendingRoleChanges(guildId);
        // Only changes deferred behind a block are left: their probe time brings the loop back.
        if (pending === 0 || this.blockedRoles(guildId).length > 0) return this.#probeLater(guildId);
        failures = 0;
        // Someone else (another process) holds the rest under a lease: look again later.
        await this.#sleep(guildId, this.#o.pollMs);
      } catch (error) {
        // The store failed (a dropped database connection, say): the changes wait in it, a claimed one
        // under its lease. Look again after a pause that grows while the failures last.
        failures += 1;
        const waitMs = Math.min(this.#o.pollMs * 2 ** (failures - 1), MAX_STORE_BACKOFF_MS);
        this.#o.logger.warn({ err: error, guildId, failures, waitMs }, 'role worker failed; trying again');
        await this.#sleep(guildId, waitMs);
      }
    }
  }

  /** Wake the guild's loop when its earliest block is due for a probe. */
  #probeLater(guildId: string): void {
    const due = this.#blocks.nextProbe(guildId);
    if (due === null) return;
    const wait = Math.max(0, due - this.#o.now());
    setTimeout(() => this.kick(guildId), wait).unref();
  }

  #sleep(guildId: string, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      const wakers = this.#wakers;
      function done() {
        clearTimeout(timer);
        wakers.delete(guildId);
        resolve();
      }
      wakers.set(guildId, done);
    });
  }
}
