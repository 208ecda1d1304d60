/**
 * Whole-guild re-checks: one walk per guild at a time in this process, and in all processes sharing the
 * store (a lease); removals confirmed over time and held back by the mass-removal breaker; and the
 * periodic pass, each guild when its own interval is up (spread by a per-guild offset), not all at once.
 */

import { createHash, randomBytes } from 'node:crypto';
import type { Client, Guild } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import { PROCESS_INSTANCE } from '../../ops/processInstance.ts';
import type { GatingStore, GuildSettings } from '../../store/types.ts';
import { guildOf, type MemberRoster, roleHolders, servesGuild } from '../roles/discordReads.ts';
import type { MemberGating } from '../roles/memberGating.ts';
import { PassLosses, type RoleSync } from '../roles/roleSync.ts';
import type { PassCycle } from '../rules/cycleReads.ts';
import { loadRoleRules } from '../rules/ruleReads.ts';
import type { RecheckResult } from '../types.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';
import { type CycleHealth, cycleHealth, type UpstreamQuota } from './cycleHealth.ts';
import type { GuildWalk } from './guildWalk.ts';
import { hasRecordLink } from './usernameWatch.ts';

export interface GuildRechecksOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  now: () => number;
  roles: RoleSync;
  members: MemberGating;
  tasks: BackgroundTasks;
  walk: GuildWalk;
  recheckIntervalMs: number;
  /**
   * How long a guild's lease lasts unless renewed (renewed at a third of it): how soon a pass whose
   * process died is taken over (lapsedPasses.ts). Default the store's lease (GATING_LEASE_SECONDS).
   */
  leaseMs?: number;
  /** Told after each guild's re-check (for metrics). */
  onRechecked?: ((event: RecheckEvent) => void) | undefined;
  /** Web3.bio's quota, against which a cycle's requests are weighed (cycleHealth). Default none. */
  quota?: UpstreamQuota;
}

/** One guild's re-check, as metrics count it: what it found, or that it failed. */
export interface RecheckEvent {
  guildId: string;
  cause: string;
  ms: number;
  /** Undefined when the re-check failed. */
  result?: RecheckResult;
}

/** Guilds' passes are spread over this share of the interval, by a per-guild offset. */
export const RECHECK_SPREAD = 0.2;

export interface RecheckGuildOptions {
  fresh?: boolean;
  cause?: string;
  confirmRemovals?: boolean;
  /**
   * A periodic pass: when its re-check cycle began (recheckCycle). Credentials read in the cycle by any
   * server's pass are not read again, and the pass's reads and length are added to the cycle's counts.
   */
  cycleStartedAt?: number;
}

/** Re-evaluates every linked member of a guild and queues the changes. */
export class GuildRechecks {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #now: () => number;
  readonly #roles: RoleSync;
  readonly #members: MemberGating;
  readonly #tasks: BackgroundTasks;
  readonly #walk: GuildWalk;
  readonly #recheckIntervalMs: number;
  readonly #leaseMs: number;
  /** Who holds a guild's lease: this process (a worker taking a dead one's hand-off over ends its leases). */
  readonly #holder = `${PROCESS_INSTANCE}/${randomBytes(4).toString('hex')}`;
  readonly #running = new Map<string, { fresh: boolean; run: Promise<RecheckResult> }>();
  readonly #onRechecked: (event: RecheckEvent) => void;
  readonly #quota: UpstreamQuota;

  constructor(options: GuildRechecksOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#now = options.now;
    this.#roles = options.roles;
    this.#members = options.members;
    this.#tasks = options.tasks;
    this.#walk = options.walk;
    this.#recheckIntervalMs = options.recheckIntervalMs;
    this.#leaseMs = options.leaseMs ?? options.store.guildLeaseMs;
    this.#onRechecked = options.onRechecked ?? (() => {});
    this.#quota = options.quota ?? null;
  }

  /** What the last re-check cycle cost, and whether the re-check keeps up (issue #37). */
  async cycleHealth(): Promise<CycleHealth> {
    const cycles = await this.#store.recheckCycle(this.#now(), this.#recheckIntervalMs);
    return cycleHealth(cycles, this.#recheckIntervalMs, this.#quota);
  }

  /**
   * Re-evaluate every linked member of the guild (records re-checked in batches) and queue the changes.
   * Removals need confirmation, and a mass removal is held; `confirmRemovals` (a moderator) releases it.
   */
  async recheckGuild(guildId: string, opts: RecheckGuildOptions = {}): Promise<RecheckResult> {
    const fresh = opts.fresh === true;
    const running = this.#running.get(guildId);
    // One walk per guild at a time: a request the running walk already covers joins it.
    if (running && (running.fresh || !fresh) && !opts.confirmRemovals) return running.run;
    const cause = opts.cause ?? 'recheck';
    const run = (async () => {
      if (running) await running.run.catch(() => undefined);
      const started = this.#now();
      try {
        const result = await this.#recheck(guildId, { ...opts, fresh, cause });
        this.#onRechecked({ guildId, cause, ms: this.#now() - started, result });
        return result;
      } catch (error) {
        this.#onRechecked({ guildId, cause, ms: this.#now() - started });
        throw error;
      }
    })();
    const entry = { fresh, run };
    this.#running.set(guildId, entry);
    this.#tasks.track(guildId, run);
    try {
      return await run;
    } finally {
      if (this.#running.get(guildId) === entry) this.#running.delete(guildId);
    }
  }

  /** Run again a pass its process never finished (lapsedPasses.ts): fresh, as a moderator's would be. */
  resume(guildId: string): Promise<RecheckResult> {
    return this.recheckGuild(guildId, { fresh: true, cause: 'resumed' });
  }

  /**
   * Re-check the enabled guilds whose interval is up. The scheduler calls this often (see service.ts), so
   * each guild is re-checked when its own time comes: `recheckIntervalMs` after its last full pass, less
   * a per-guild offset of up to RECHECK_SPREAD of the interval, so guilds set up together drift apart.
   */
  async recheckDue(cause: 'periodic' | 'catch-up' = 'periodic'): Promise<void> {
    const now = this.#now();
    const cycle = await this.#store.recheckCycle(now, this.#recheckIntervalMs);
    for (const settings of await this.#store.listGuildSettings({ enabledOnly: true })) {
      if (this.#tasks.stopping) return;
      // Another shard's process re-checks the guilds it serves.
      if (!servesGuild(this.#discord, settings.guildId)) continue;
      const last = settings.lastFullSyncAt;
      const due = last === null || now - last >= dueAfter(settings.guildId, this.#recheckIntervalMs);
      if (!due) continue;
      try {
        await this.recheckGuild(settings.guildId, {
          fresh: false,
          cause,
          cycleStartedAt: cycle.current.startedAt,
        });
      } catch (error) {
        this.#logger.error({ err: error, guildId: settings.guildId }, 'periodic re-check of a guild failed');
      }
    }
  }

  async #recheck(
    guildId: string,
    opts: RecheckGuildOptions & { fresh: boolean; cause: string },
  ): Promise<RecheckResult> {
    const { cause } = opts;
    const totals: RecheckResult = {
      members: 0,
      changes: 0,
      failures: 0,
      unlinked: 0,
      pendingRemovals: 0,
      heldRemovals: 0,
    };
    const settings = await this.#store.getGuildSettings(guildId);
    const guild = await guildOf(this.#discord, guildId);
    if (!settings?.enabled || !guild) return totals;
    // Another process sharing the store is re-checking this guild: it covers this request.
    if (!(await this.#store.acquireGuildLease(guildId, this.#holder, this.#now() + this.#leaseMs))) {
      this.#logger.info({ guildId, cause }, 'guild re-check skipped: another process holds it');
      return { ...totals, elsewhere: true };
    }
    // A renewal still in flight at the end would write the lease back after its release: a lapsed lease
    // later, taken for a pass cut short. The release waits for it.
    let renewing: Promise<void> = Promise.resolve();
    const renewal = setInterval(
      () => {
        renewing = this.#store.acquireGuildLease(guildId, this.#holder, this.#now() + this.#leaseMs).then(
          (renewed) => {
            // Unrenewed for a whole lease (a stalled process, a store down): another process took it over.
            if (!renewed)
              this.#logger.warn({ guildId, cause }, 'guild re-check lease lapsed to another process');
          },
          (error: unknown) => this.#logger.warn({ err: error, guildId }, 'could not renew a guild lease'),
        );
      },
      Math.max(10, Math.floor(this.#leaseMs / 3)),
    );
    renewal.unref();
    try {
      return await this.#cyclePass(guild, settings, opts, totals);
    } finally {
      clearInterval(renewal);
      await renewing;
      await this.#store
        .releaseGuildLease(guildId, this.#holder)
        .catch((error: unknown) =>
          this.#logger.warn({ err: error, guildId }, 'could not release a guild lease'),
        );
    }
  }

  /** The pass, its reads and length added to its re-check cycle's counts when it belongs to one. */
  async #cyclePass(
    guild: Guild,
    settings: GuildSettings,
    opts: RecheckGuildOptions & { fresh: boolean; cause: string },
    totals: RecheckResult,
  ): Promise<RecheckResult> {
    const { cycleStartedAt: startedAt, fresh, cause } = opts;
    const confirmRemovals = opts.confirmRemovals === true;
    if (startedAt === undefined)
      return this.#pass(guild, settings, { fresh, cause, confirmRemovals }, totals);
    const cycle: PassCycle = {
      startedAt,
      counts: { upstreamRequests: 0, reusedChecks: 0, passes: 1, passMs: 0 },
    };
    const started = this.#now();
    try {
      return await this.#pass(guild, settings, { fresh, cause, confirmRemovals, cycle }, totals);
    } finally {
      cycle.counts.passMs = this.#now() - started;
      await this.#store
        .countRecheckCycle(startedAt, cycle.counts)
        .catch((error: unknown) =>
          this.#logger.warn({ err: error, guildId: guild.id }, 'could not count the re-check cycle'),
        );
    }
  }

  async #pass(
    guild: Guild,
    settings: GuildSettings,
    o: { fresh: boolean; cause: string; confirmRemovals: boolean; cycle?: PassCycle },
    totals: RecheckResult,
  ): Promise<RecheckResult> {
    const { fresh, cause, confirmRemovals } = o;
    const guildId = guild.id;
    const snapshot = await this.#walk.snapshot(guild);
    const { roster } = snapshot;
    const pass = new PassLosses(await this.#store.listPendingLosses(guildId), {
      dueBy: this.#now() - this.#roles.confirmMs,
      holders: roleHolders(guild, roster),
    });
    const complete = await this.#walk.walk(
      guild,
      snapshot,
      {
        settings,
        fresh,
        dryRun: false,
        checkRecords: true,
        exemptions: await this.#store.listExemptions(guildId),
        roleRules: await loadRoleRules(this.#store, guildId),
        ...(o.cycle ? { cycle: o.cycle } : {}),
      },
      async (state, evaluation) => {
        totals.members += 1;
        if (state.username !== null && hasRecordLink(evaluation.links)) {
          this.#members.usernames.note(state.userId, state.username);
        }
        if (evaluation.failed) totals.failures += 1;
        const outcome = await this.#roles.applyMember(
          guildId,
          state.userId,
          evaluation,
          'confirmed',
          cause,
          pass,
        );
        totals.changes += outcome.changes;
        totals.unlinked += outcome.unlinked;
        totals.pendingRemovals += outcome.pendingRemovals;
        if (outcome.unlinked > 0) {
          // The loss of the link was confirmed over time: the roles it gave follow it now.
          const { applied } = await this.#members.sync(guildId, state.userId, cause, {
            fresh: false,
            checkRecords: false,
            mode: 'immediate',
          });
          totals.changes += applied.add.length + applied.remove.length;
        }
      },
      () => {
        totals.failures += 1;
      },
    );
    const finished = await this.#roles.finishPass(guild, pass, cause, confirmRemovals);
    totals.changes += finished.changes;
    totals.heldRemovals = finished.held;
    totals.pendingRemovals += finished.pending;
    if (complete) await this.#store.markFullSync(guildId, this.#now());
    this.#logger.info({ guildId, cause, ...totals }, 'guild re-checked');
    await this.#recordPass(guildId, settings, roster, cause, complete, totals);
    return totals;
  }

  /**
   * The pass in the audit trail: the dashboard charts passes per day (audit_daily) and shows how many
   * members held the human role and a flag role when it was counted (from the walk's member list).
   */
  async #recordPass(
    guildId: string,
    settings: GuildSettings,
    roster: MemberRoster | null,
    cause: string,
    complete: boolean,
    totals: RecheckResult,
  ): Promise<void> {
    const flagRoles = [settings.spamRoleId, settings.riskyRoleId].filter((r) => r !== null);
    const holders = roster
      ? { human: roster.holders(settings.humanRoleId), flagged: roster.holdersOfAny(flagRoles) }
      : null;
    try {
      await this.#store.addAuditEvent({
        guildId,
        kind: 'recheck_pass',
        reason: `whole-server re-check (${cause})`,
        details: {
          cause,
          complete,
          members: totals.members,
          changes: totals.changes,
          failures: totals.failures,
          heldRemovals: totals.heldRemovals,
          ...(holders ? { holders } : {}),
        },
      });
    } catch (error) {
      this.#logger.warn({ err: error, guildId }, 'could not record the re-check pass');
    }
  }
}

/** How long after its last full pass a guild is due: the interval less its own offset. */
export function dueAfter(guildId: string, intervalMs: number): number {
  const digest = createHash('sha256').update(guildId).digest();
  const fraction = digest.readUInt32BE(0) / 2 ** 32;
  return intervalMs * (1 - RECHECK_SPREAD * fraction);
}
