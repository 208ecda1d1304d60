/**
 * Applies queued role changes through discord.js, one guild queue at a time, and says what it did in
 * the guild's log channel. Changes are claimed from the durable store one by one under a lease that is
 * renewed while the edit is in flight, and only the claim's holder can finish it, so a crash loses
 * nothing and a lapsed claim never edits over a newer change (a member who already has, or lacks, the
 * role costs no request). discord.js's REST queue waits out Discord's 429 `retry_after`.
 *
 * A role Discord refuses to let the bot manage (Missing Permissions, or a hierarchy problem seen in the
 * cache) is blocked: its changes wait in the queue, not failed, until Discord reports a change that may
 * fix it (`unblock`), or a probe (one edit) at 30 s, 1, 2, 4, 8 and then every 10 minutes succeeds.
 */
import { type Client, DiscordAPIError, type Guild } from 'discord.js';
import type { Logger } from '../log.ts';
import type { GatingStore, RoleChange } from '../store/types.ts';
import { escapeLine, truncate } from '../text/safety.ts';
import {
  DISCORD_ERROR,
  delay,
  discordErrorCode,
  guildOf,
  guildRoleProblems,
  memberOf,
} from './discordReads.ts';
import type { RoleProblem } from './hierarchy.ts';
import type { GuildNotices } from './logChannel.ts';

/** Prefix of every audit-log reason the gating module writes. */
export const REASON_PREFIX = 'web3 gating: ';

const MAX_LINE = 300;
/** A change claimed this many times without finishing (crashes, lapsed leases) is given up on. */
export const MAX_CLAIMS = 5;

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

/** A role the bot may not manage right now, and when it tries again. */
interface RoleBlock {
  probeAt: number;
  waitMs: number;
  problem: string;
}

/** The per-guild role-change worker. */
export class RoleWorker {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #notices: GuildNotices;
  readonly #pollMs: number;
  readonly #maxAttempts: number;
  readonly #backoffMs: number;
  readonly #probeMs: number;
  readonly #maxProbeMs: number;
  readonly #renewMs: number;
  readonly #now: () => number;
  readonly #loops = new Map<string, Promise<void>>();
  readonly #rekick = new Set<string>();
  readonly #wakers = new Map<string, () => void>();
  /** `guild:role` -> the block on that role. */
  readonly #blocks = new Map<string, RoleBlock>();
  /** `guild:role:problem` refusals already told to the admins (until the guild changes). */
  readonly #warned = new Set<string>();
  #stopping = false;

  constructor(opts: RoleWorkerOptions) {
    this.#store = opts.store;
    this.#discord = opts.discord;
    this.#logger = opts.logger;
    this.#notices = opts.notices;
    this.#pollMs = opts.pollMs ?? 2_000;
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.#backoffMs = opts.backoffMs ?? 1_000;
    this.#probeMs = opts.probeMs ?? 30_000;
    this.#maxProbeMs = opts.maxProbeMs ?? 10 * 60_000;
    this.#renewMs = Math.max(10, Math.floor((opts.leaseMs ?? 60_000) / 3));
    this.#now = opts.now ?? Date.now;
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
        this.#logger.error({ err: error, guildId }, 'role worker stopped on an error'),
      )
      .finally(() => {
        this.#loops.delete(guildId);
        if (this.#rekick.delete(guildId)) this.kick(guildId);
      });
    this.#loops.set(guildId, loop);
  }

  /** Pick up every guild's unfinished changes (pending, or in progress under a lapsed lease after a crash). */
  async resume(): Promise<void> {
    for (const settings of await this.#store.listGuildSettings()) this.kick(settings.guildId);
  }

  /**
   * Something that may fix a blocked role happened (settings saved, a role, the guild or the bot's own
   * member updated): lift the guild's blocks and send its waiting changes now.
   */
  async unblock(guildId: string): Promise<void> {
    for (const key of this.#warned) if (key.startsWith(`${guildId}:`)) this.#warned.delete(key);
    let had = false;
    for (const key of this.#blocks.keys()) {
      if (key.startsWith(`${guildId}:`)) {
        this.#blocks.delete(key);
        had = true;
      }
    }
    if (!had) return;
    this.#logger.info({ guildId }, 'role blocks lifted after a change in the server');
    await this.#store.resumeDeferredRoleChanges(guildId);
    this.kick(guildId);
  }

  /** Roles whose changes wait on a permission problem the admins were told about. */
  blockedRoles(guildId: string): string[] {
    const prefix = `${guildId}:`;
    return [...this.#blocks.keys()].filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
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
      if ((await this.#store.pendingRoleChanges(guildId)) === 0) return;
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
      this.#logger.warn({ guilds: this.#loops.size }, 'role worker stopped with edits in flight');
  }

  async #run(guildId: string): Promise<void> {
    while (!this.#stopping) {
      this.#rekick.delete(guildId);
      const [change] = await this.#store.claimRoleChanges(guildId, 1);
      if (change) {
        await this.#apply(change);
        continue;
      }
      const pending = await this.#store.pendingRoleChanges(guildId);
      // Only changes deferred behind a block are left: their probe time brings the loop back.
      if (pending === 0 || this.blockedRoles(guildId).length > 0) return this.#probeLater(guildId);
      // Someone else (another process) holds the rest under a lease: look again later.
      await this.#sleep(guildId, this.#pollMs);
    }
  }

  /** Wake the guild's loop when its earliest block is due for a probe. */
  #probeLater(guildId: string): void {
    const due = this.blockedRoles(guildId).map((r) => this.#blocks.get(`${guildId}:${r}`)?.probeAt ?? 0);
    if (due.length === 0) return;
    const wait = Math.max(0, Math.min(...due) - this.#now());
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

  async #apply(change: RoleChange): Promise<void> {
    const token = change.claimToken ?? '';
    const finish = async (outcome: 'done' | 'failed', detail?: string) => {
      const completed = await this.#store.completeRoleChange(change.id, token, outcome, detail);
      if (!completed) {
        this.#logger.warn({ changeId: change.id }, 'role change taken over by another worker');
      }
      return completed;
    };
    if (change.attempts > MAX_CLAIMS) {
      await finish('failed', `gave up after ${change.attempts - 1} claims that never finished`);
      this.#notices.post(
        change.guildId,
        `⚠️ ${changeText(change)} was given up on after ${change.attempts - 1} tries that never finished. Run /gating recheck to try again.`,
      );
      return;
    }
    const guild = await guildOf(this.#discord, change.guildId);
    if (!guild) return void (await finish('failed', 'the bot is no longer in this server'));

    const blockKey = `${change.guildId}:${change.roleId}`;
    const block = this.#blocks.get(blockKey);
    if (block && block.probeAt > this.#now()) {
      await this.#store.deferRoleChange(change.id, token, block.probeAt);
      return;
    }
    const problem = guildRoleProblems(guild, [change.roleId])[0];
    if (problem) return this.#refuse(change, finish, problem);

    const renewal = this.#keepLease(change);
    try {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const member = await memberOf(guild, change.userId);
          if (!member) return void (await finish('failed', 'unknown member: they left the server'));
          if (member.roles.cache.has(change.roleId) === (change.op === 'add')) {
            await finish('done', change.op === 'add' ? 'already had the role' : 'already without the role');
            return;
          }
          // A claim that lapsed meanwhile belongs to another worker now: it decides.
          if (!(await this.#store.renewRoleChange(change.id, token))) return;
          const edit = { user: change.userId, role: change.roleId, reason: change.reason };
          if (change.op === 'add') await guild.members.addRole(edit);
          else await guild.members.removeRole(edit);
          if (block) await this.unblock(change.guildId);
          if (await finish('done')) this.#notices.post(change.guildId, changeLine(change));
          return;
        } catch (error) {
          if (await this.#settleError(change, guild, error, attempt, finish)) return;
          await delay(this.#backoffMs * 2 ** (attempt - 1));
        }
      }
    } finally {
      clearInterval(renewal);
    }
  }

  /** Renew the claim while the edit is in flight, so no other worker takes it over meanwhile. */
  #keepLease(change: RoleChange): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.#store
        .renewRoleChange(change.id, change.claimToken ?? '')
        .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not renew a role-change lease'));
    }, this.#renewMs);
    timer.unref();
    return timer;
  }

  /** True when the error ended the change (finished or deferred); false to retry. */
  async #settleError(
    change: RoleChange,
    guild: Guild,
    error: unknown,
    attempt: number,
    finish: (outcome: 'done' | 'failed', detail?: string) => Promise<boolean>,
  ): Promise<boolean> {
    const code = discordErrorCode(error);
    if (code === DISCORD_ERROR.missingPermissions || code === DISCORD_ERROR.unknownAccess) {
      const fix = `Discord answered Missing Permissions. Give the bot’s role Manage Roles and move it above ${roleName(guild, change.roleId)} in Server Settings → Roles; waiting changes then go out by themselves.`;
      await this.#block(change, 'no_permission', fix);
      return true;
    }
    if (code === DISCORD_ERROR.unknownMember) {
      await finish('failed', 'unknown member: they left the server');
      return true;
    }
    if (code === DISCORD_ERROR.unknownRole) {
      await finish('failed', 'unknown role: it was deleted');
      this.#warn(change, 'The role no longer exists: pick another one with /gating setup.');
      return true;
    }
    const clientError = error instanceof DiscordAPIError && error.status < 500;
    if (!clientError && attempt < this.#maxAttempts && !this.#stopping) return false;
    this.#logger.warn({ err: error, changeId: change.id, attempt }, 'role change failed');
    // Stopping mid-retry leaves the change claimed: its lease lapses and the next start retries it.
    if (!clientError && this.#stopping && attempt < this.#maxAttempts) return true;
    await finish('failed', `gave up after ${attempt} attempt(s): ${errorText(error)}`);
    return true;
  }

  /** A problem seen in the gateway cache: wait (blocked) when an admin can fix it, else fail and say why. */
  async #refuse(
    change: RoleChange,
    finish: (outcome: 'done' | 'failed', detail?: string) => Promise<boolean>,
    problem: RoleProblem,
  ): Promise<void> {
    if (problem.problem === 'above_bot' || problem.problem === 'no_permission') {
      await this.#block(change, problem.problem, problem.fix);
      return;
    }
    await finish('failed', problem.fix);
    const key = `${change.guildId}:${change.roleId}:${problem.problem}`;
    if (this.#warned.has(key)) return;
    this.#warned.add(key);
    this.#warn(change, problem.fix, problem.problem);
  }

  /** Block the role: this change and the next ones wait for a fix or the next probe. One notice per block. */
  async #block(change: RoleChange, problem: string, fix: string): Promise<void> {
    const key = `${change.guildId}:${change.roleId}`;
    const previous = this.#blocks.get(key);
    const waitMs = previous ? Math.min(this.#maxProbeMs, previous.waitMs * 2) : this.#probeMs;
    const block = { probeAt: this.#now() + waitMs, waitMs, problem };
    this.#blocks.set(key, block);
    await this.#store.deferRoleChange(change.id, change.claimToken ?? '', block.probeAt);
    this.#logger.warn(
      { guildId: change.guildId, roleId: change.roleId, problem, nextProbeMs: waitMs },
      'gated role blocked',
    );
    if (!previous) this.#warn(change, fix);
  }

  #warn(change: RoleChange, fix: string, problem = 'blocked'): void {
    this.#logger.warn(
      { guildId: change.guildId, roleId: change.roleId, problem },
      'gated role cannot be managed',
    );
    this.#notices.post(change.guildId, `⚠️ Could not ${changeText(change)}. ${escapeLine(fix)}`);
  }
}

/** The log-channel line for an applied change. */
export function changeLine(change: Pick<RoleChange, 'op' | 'roleId' | 'userId' | 'reason'>): string {
  const why = escapeLine(truncate(change.reason.replace(REASON_PREFIX, ''), MAX_LINE));
  return change.op === 'add'
    ? `Added <@&${change.roleId}> to <@${change.userId}>: ${why}`
    : `Removed <@&${change.roleId}> from <@${change.userId}>: ${why}`;
}

function changeText(change: Pick<RoleChange, 'op' | 'roleId' | 'userId'>): string {
  return change.op === 'add'
    ? `add <@&${change.roleId}> to <@${change.userId}>`
    : `remove <@&${change.roleId}> from <@${change.userId}>`;
}

function roleName(guild: Guild, roleId: string): string {
  const name = guild.roles.cache.get(roleId)?.name;
  return name ? `“${truncate(name, 100)}”` : 'the gated role';
}

function errorText(error: unknown): string {
  if (error instanceof DiscordAPIError)
    return `${error.status} ${error.code}: ${truncate(error.message, 200)}`;
  return error instanceof Error ? truncate(`${error.name}: ${error.message}`, 200) : 'unknown error';
}
