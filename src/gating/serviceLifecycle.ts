/**
 * The gating service's lifecycle: listening to Discord, the role worker, the timers (periodic re-checks,
 * upkeep, inboxes) and the background tasks, started and stopped together.
 */
import {
  type Client,
  Events,
  type Guild,
  type GuildMember,
  type PartialGuildMember,
  type PartialUser,
  type Role,
  type User,
} from 'discord.js';
import type { Logger } from '../ops/log.ts';
import type { BackgroundTasks } from './rechecks/backgroundTasks.ts';
import type { PruneCounts, StoreUpkeep } from './rechecks/storeUpkeep.ts';
import type { LogChannel } from './roles/logChannel.ts';
import type { MemberGating } from './roles/memberGating.ts';
import type { RoleWorker } from './roles/roleWorker.ts';

const STOP_GRACE_MS = 10_000;

/** Something that runs on a timer while the service is started. */
export interface Timer {
  start(): void;
  stop(): void | Promise<void>;
}

/** The parts whose lifecycle the service runs (built by gatingParts.ts). */
export interface LifecycleParts {
  discord: Client;
  logger: Logger;
  worker: RoleWorker;
  logChannel: LogChannel;
  upkeep: StoreUpkeep;
  members: MemberGating;
  /** Background work (setup re-checks, follow-up syncs) per guild, awaited by `idle` and `stop`. */
  tasks: BackgroundTasks;
  /** What runs on a timer while started: the periodic re-check, upkeep, the Linked Roles re-check, the inboxes. */
  timers: readonly Timer[];
}

/** Starts and stops the gating service's parts together. */
export class ServiceLifecycle {
  readonly #parts: LifecycleParts;
  /** Set while started: stops listening to Discord. */
  #unlisten: (() => void) | null = null;

  constructor(parts: LifecycleParts) {
    this.#parts = parts;
  }

  /** Start the role worker (resuming pending changes left by a crash), the periodic re-check and upkeep. */
  start(): void {
    const { discord, logger, worker, members, tasks, timers } = this.#parts;
    if (this.#unlisten || tasks.stopping) return;
    this.#unlisten = listenToDiscord(discord, {
      unblock: (guildId) => tasks.run(guildId, () => worker.unblock(guildId)),
      usernameChanged: (userId) => tasks.run('', () => members.onUsernameChange(userId)),
    });
    worker.resume().catch((error: unknown) => logger.error({ err: error }, 'could not resume role changes'));
    for (const timer of timers) timer.start();
  }

  /** Stop taking work, let in-progress role edits finish (bounded), stop timers. */
  async stop(): Promise<void> {
    const { worker, logChannel, tasks, timers } = this.#parts;
    if (tasks.stopping) return;
    const stopped = tasks.stop(STOP_GRACE_MS);
    const timersStopped = Promise.all(timers.map((timer) => timer.stop()));
    this.#unlisten?.();
    await stopped;
    await timersStopped;
    await worker.stop(STOP_GRACE_MS);
    await logChannel.stop(STOP_GRACE_MS);
  }

  /** Delete expired nonces, finished role changes and audit events past their retention. */
  prune(): Promise<PruneCounts> {
    return this.#parts.upkeep.prune();
  }

  /** Resolves when the role queue is empty (for tests and graceful shutdown). */
  async idle(guildId?: string): Promise<void> {
    await this.#parts.tasks.settle(guildId);
    await this.#parts.worker.idle(guildId);
    await this.#parts.logChannel.idle();
  }
}

/** Discord reports a change that may fix a blocked role, or a username change. Returns the way to stop listening. */
function listenToDiscord(
  discord: Client,
  on: { unblock: (guildId: string) => void; usernameChanged: (userId: string) => void },
): () => void {
  const onRole = (_old: Role, role: Role) => on.unblock(role.guild.id);
  const onGuild = (_old: Guild, guild: Guild) => on.unblock(guild.id);
  const onMember = (_old: GuildMember | PartialGuildMember, member: GuildMember) => {
    if (member.id === discord.user?.id) on.unblock(member.guild.id);
  };
  const onUser = (old: User | PartialUser, user: User) => {
    if (old.username !== user.username) on.usernameChanged(user.id);
  };
  discord.on(Events.GuildRoleUpdate, onRole);
  discord.on(Events.GuildUpdate, onGuild);
  discord.on(Events.GuildMemberUpdate, onMember);
  discord.on(Events.UserUpdate, onUser);
  return () => {
    discord.off(Events.GuildRoleUpdate, onRole);
    discord.off(Events.GuildUpdate, onGuild);
    discord.off(Events.GuildMemberUpdate, onMember);
    discord.off(Events.UserUpdate, onUser);
  };
}
