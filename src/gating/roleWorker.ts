/**
 * Applies queued role changes through discord.js, one guild queue at a time, and says what it did in
 * the guild's log channel. Changes are claimed from the durable store one by one under a lease, so a
 * crash loses nothing and a resumed claim never edits twice (a member who already has, or lacks, the
 * role costs no request). discord.js's REST queue waits out Discord's 429 `retry_after`.
 */
import { type Client, DiscordAPIError, type Guild, type GuildMember, PermissionFlagsBits } from 'discord.js';
import type { Logger } from '../log.ts';
import { escapeLine, truncate } from '../render/safe.ts';
import type { GatingStore, RoleChange } from '../store/types.ts';
import { type RoleProblem, roleProblems } from './hierarchy.ts';

/** Prefix of every audit-log reason the gating module writes. */
export const REASON_PREFIX = 'web3 gating: ';

const UNKNOWN_ACCESS = 50_001;
const MISSING_PERMISSIONS = 50_013;
const UNKNOWN_MEMBER = 10_007;
const UNKNOWN_ROLE = 10_011;
const MAX_LINE = 300;
const MAX_MESSAGE = 1_900;

/** Where one-line notices for a guild's moderators go (the log channel, when one is set). */
export interface GuildNotices {
  post(guildId: string, line: string): void;
}

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
  /** After a 50013 on a role, further changes of that role fail without a request for this long. Default 10 min. */
  blockMs?: number;
  now?: () => number;
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
  readonly #blockMs: number;
  readonly #now: () => number;
  readonly #loops = new Map<string, Promise<void>>();
  readonly #rekick = new Set<string>();
  readonly #wakers = new Map<string, () => void>();
  /** `guild:role` -> until when changes of that role are refused without a request. */
  readonly #blocked = new Map<string, number>();
  /** `guild:role:problem` -> until when the same admin warning is not posted again. */
  readonly #warned = new Map<string, number>();
  #stopping = false;

  constructor(opts: RoleWorkerOptions) {
    this.#store = opts.store;
    this.#discord = opts.discord;
    this.#logger = opts.logger;
    this.#notices = opts.notices;
    this.#pollMs = opts.pollMs ?? 2_000;
    this.#maxAttempts = Math.max(1, opts.maxAttempts ?? 3);
    this.#backoffMs = opts.backoffMs ?? 1_000;
    this.#blockMs = opts.blockMs ?? 10 * 60_000;
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

  /** Forget earlier 50013 refusals in a guild (after its settings changed). */
  unblock(guildId: string): void {
    for (const map of [this.#blocked, this.#warned]) {
      for (const key of map.keys()) if (key.startsWith(`${guildId}:`)) map.delete(key);
    }
  }

  /** Resolves when no change is left (in the guild, or anywhere). Resolves at once once stopping. */
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
      if ((await this.#store.pendingRoleChanges(guildId)) === 0) return;
      // Someone else (another process) holds the rest under a lease: look again later.
      await this.#sleep(guildId, this.#pollMs);
    }
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
    const finish = (outcome: 'done' | 'failed', detail?: string) =>
      this.#store.completeRoleChange(change.id, outcome, detail);
    const guild = await this.#guild(change.guildId);
    if (!guild) return void (await finish('failed', 'the bot is no longer in this server'));

    const blockKey = `${change.guildId}:${change.roleId}`;
    if ((this.#blocked.get(blockKey) ?? 0) > this.#now()) {
      await finish(
        'failed',
        'skipped: Discord refused to let the bot manage this role moments ago (Missing Permissions)',
      );
      return;
    }
    const problem = this.#hierarchyProblem(guild, change.roleId);
    if (problem) {
      await finish('failed', problem.fix);
      this.#warn(change, problem.problem, `${problem.fix}`);
      return;
    }

    for (let attempt = 1; ; attempt += 1) {
      try {
        const member = await memberOf(guild, change.userId);
        if (!member) return void (await finish('failed', 'unknown member: they left the server'));
        if (member.roles.cache.has(change.roleId) === (change.op === 'add')) {
          await finish('done', change.op === 'add' ? 'already had the role' : 'already without the role');
          return;
        }
        const edit = { user: change.userId, role: change.roleId, reason: change.reason };
        if (change.op === 'add') await guild.members.addRole(edit);
        else await guild.members.removeRole(edit);
        await finish('done');
        this.#notices.post(change.guildId, changeLine(change));
        return;
      } catch (error) {
        const code = error instanceof DiscordAPIError ? Number(error.code) : null;
        if (code === MISSING_PERMISSIONS || code === UNKNOWN_ACCESS) {
          this.#blocked.set(blockKey, this.#now() + this.#blockMs);
          await finish('failed', `Discord refused: ${errorText(error)}`);
          const fix = `Discord answered Missing Permissions. Give the bot’s role Manage Roles and move it above ${roleName(guild, change.roleId)} in Server Settings → Roles, then run /gating recheck.`;
          this.#warn(change, 'no_permission', fix);
          return;
        }
        if (code === UNKNOWN_MEMBER)
          return void (await finish('failed', 'unknown member: they left the server'));
        if (code === UNKNOWN_ROLE) {
          await finish('failed', 'unknown role: it was deleted');
          this.#warn(change, 'missing', 'The role no longer exists: pick another one with /gating setup.');
          return;
        }
        const clientError = error instanceof DiscordAPIError && error.status < 500;
        if (clientError || attempt >= this.#maxAttempts || this.#stopping) {
          this.#logger.warn({ err: error, changeId: change.id, attempt }, 'role change failed');
          // Stopping mid-retry leaves the change claimed: its lease lapses and the next start retries it.
          if (!clientError && this.#stopping && attempt < this.#maxAttempts) return;
          await finish('failed', `gave up after ${attempt} attempt(s): ${errorText(error)}`);
          return;
        }
        await delay(this.#backoffMs * 2 ** (attempt - 1));
      }
    }
  }

  async #guild(guildId: string): Promise<Guild | null> {
    const cached = this.#discord.guilds.cache.get(guildId);
    if (cached) return cached;
    try {
      return await this.#discord.guilds.fetch(guildId);
    } catch {
      return null;
    }
  }

  /** The same checks as /gating setup, from the gateway cache, so a doomed edit costs no request. */
  #hierarchyProblem(guild: Guild, roleId: string): RoleProblem | undefined {
    const me = guild.members.me;
    if (!me) return undefined;
    const role = guild.roles.cache.get(roleId);
    return roleProblems({
      guildId: guild.id,
      roleIds: [roleId],
      roles: new Map(role ? [[role.id, role]] : []),
      botHighestPosition: me.roles.highest.position,
      botCanManageRoles: me.permissions.has(PermissionFlagsBits.ManageRoles),
    })[0];
  }

  /** One admin notice per role and problem per block period, so a broken setup does not flood the channel. */
  #warn(change: RoleChange, problem: string, fix: string): void {
    const key = `${change.guildId}:${change.roleId}:${problem}`;
    const now = this.#now();
    this.#logger.warn(
      { guildId: change.guildId, roleId: change.roleId, problem },
      'gated role cannot be managed',
    );
    if ((this.#warned.get(key) ?? 0) > now) return;
    this.#warned.set(key, now + this.#blockMs);
    const verb = change.op === 'add' ? 'add' : 'remove';
    const where = change.op === 'add' ? 'to' : 'from';
    this.#notices.post(
      change.guildId,
      `⚠️ Could not ${verb} <@&${change.roleId}> ${where} <@${change.userId}>. ${escapeLine(fix)}`,
    );
  }
}

/** The log-channel line for an applied change. */
export function changeLine(change: Pick<RoleChange, 'op' | 'roleId' | 'userId' | 'reason'>): string {
  const why = escapeLine(truncate(change.reason.replace(REASON_PREFIX, ''), MAX_LINE));
  return change.op === 'add'
    ? `Added <@&${change.roleId}> to <@${change.userId}>: ${why}`
    : `Removed <@&${change.roleId}> from <@${change.userId}>: ${why}`;
}

async function memberOf(guild: Guild, userId: string): Promise<GuildMember | null> {
  const cached = guild.members.cache.get(userId);
  if (cached) return cached;
  try {
    return await guild.members.fetch(userId);
  } catch (error) {
    if (error instanceof DiscordAPIError && Number(error.code) === UNKNOWN_MEMBER) return null;
    throw error;
  }
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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

export interface LogChannelOptions {
  discord: Client;
  logger: Logger;
  /** The guild's log channel id, or null for none. */
  channelOf: (guildId: string) => Promise<string | null>;
  /** How long lines are gathered into one message. Default 1000 ms. */
  flushMs?: number;
}

/**
 * Posts notices to each guild's log channel. Lines are gathered for a moment and sent a few per message,
 * so a re-check that changes hundreds of roles does not queue behind the channel's send rate limit.
 * Nothing pings: allowed mentions parse nothing.
 */
export class LogChannel implements GuildNotices {
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #channelOf: (guildId: string) => Promise<string | null>;
  readonly #flushMs: number;
  readonly #pending = new Map<string, string[]>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  #closed = false;

  constructor(opts: LogChannelOptions) {
    this.#discord = opts.discord;
    this.#logger = opts.logger;
    this.#channelOf = opts.channelOf;
    this.#flushMs = opts.flushMs ?? 1_000;
  }

  post(guildId: string, line: string): void {
    if (this.#closed) return;
    const lines = this.#pending.get(guildId) ?? [];
    lines.push(truncate(line.replace(/\s+/g, ' ').trim(), MAX_LINE));
    this.#pending.set(guildId, lines);
    this.#schedule();
  }

  /** Send everything gathered so far; resolves when sent (or dropped on an error). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0 || this.#flushing) {
      if (!this.#flushing) this.#startFlush();
      await this.#flushing;
    }
  }

  /** Flush (up to `graceMs`), then drop further lines. */
  async stop(graceMs: number): Promise<void> {
    await Promise.race([this.idle(), delay(graceMs)]);
    this.#closed = true;
  }

  #schedule(): void {
    if (this.#closed || this.#timer || this.#flushing || this.#pending.size === 0) return;
    this.#timer = setTimeout(() => this.#startFlush(), this.#flushMs);
    this.#timer.unref();
  }

  #startFlush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = null;
      this.#schedule();
    });
  }

  async #flush(): Promise<void> {
    const batches = [...this.#pending.entries()];
    this.#pending.clear();
    for (const [guildId, text] of batches) {
      try {
        const channelId = await this.#channelOf(guildId);
        if (!channelId) continue;
        const channel =
          this.#discord.channels.cache.get(channelId) ?? (await this.#discord.channels.fetch(channelId));
        if (!channel?.isSendable()) continue;
        for (const content of packLines(text)) {
          await channel.send({ content, allowedMentions: { parse: [] } });
        }
      } catch (error) {
        this.#logger.warn(
          { err: error, guildId, lines: text.length },
          'could not post to the gating log channel',
        );
      }
    }
  }
}

/** Lines joined into as few messages as fit Discord's 2000-character limit. */
export function packLines(lines: readonly string[]): string[] {
  const messages: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current !== '' && current.length + 1 + line.length > MAX_MESSAGE) {
      messages.push(current);
      current = '';
    }
    current = current === '' ? line : `${current}\n${line}`;
  }
  if (current !== '') messages.push(current);
  return messages;
}
