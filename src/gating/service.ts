/**
 * The gating service: proves identities (the identity's own record, or a wallet signature), evaluates
 * the guild's rules on each proven identity's credentials, and queues the role changes that follow.
 * It never rewards an unproven claim, never hands out a role its invoker could not, never removes a role
 * because a lookup failed or on a single sighting in an automated pass, and records why every change
 * happened. This file builds the parts and runs their lifecycle; each part owns one job:
 * `verification` (proofs), `members` (one member), `guilds` (rules, status, whole-guild re-checks).
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
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import type { Logger } from '../ops/log.ts';
import type { GatingStore, VerifyPanelStore } from '../store/types.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { DashboardExecutor } from './dashboard/operations.ts';
import { DashboardRequestInbox } from './dashboard/requests.ts';
import { ExemptionGating } from './exemptionGating.ts';
import type { ExportStore } from './exports/gatingExport.ts';
import { GuildGating } from './guildGating.ts';
import type { HoldingsReader } from './holdings/holdingsReader.ts';
import { type LinkedRolePagesSetup, LinkedRoleService } from './linkedRoles/linkedRoleService.ts';
import type { SiweConfig } from './proofs/challengeMessage.ts';
import { LinkBook } from './proofs/linkBook.ts';
import { SignedProofInbox } from './proofs/signedProofs.ts';
import { Verification } from './proofs/verification.ts';
import { BackgroundTasks } from './rechecks/backgroundTasks.ts';
import { DueChecks } from './rechecks/dueChecks.ts';
import { GuildRechecks, type RecheckEvent } from './rechecks/guildRechecks.ts';
import { GuildWalk } from './rechecks/guildWalk.ts';
import { LapsedPasses } from './rechecks/lapsedPasses.ts';
import { IntervalScheduler, type RecheckScheduler, schedulerTickMs } from './rechecks/scheduler.ts';
import { DEFAULT_AUDIT_RETENTION_MS, type PruneCounts, StoreUpkeep } from './rechecks/storeUpkeep.ts';
import { AuthoritySnapshots } from './roles/authoritySnapshots.ts';
import { servesGuild, shardFilterOf } from './roles/discordReads.ts';
import { LogChannel } from './roles/logChannel.ts';
import { MemberGating } from './roles/memberGating.ts';
import { RoleSync } from './roles/roleSync.ts';
import { RoleWorker, type RoleWorkerOptions } from './roles/roleWorker.ts';
import { RuleGating } from './ruleGating.ts';
import { Evaluator } from './rules/evaluation.ts';
import type { NoticeText } from './types.ts';

export interface GatingServiceOptions {
  store: GatingStore;
  web3bio: Web3BioClient;
  /** discord.js, logged in. */
  discord: Client;
  logger: Logger;
  siwe: SiweConfig;
  /** Sign in with Farcaster is configured (OPTIMISM_RPC_URL): `/verify` offers it for Farcaster identities. */
  farcaster?: boolean;
  /** The sentences of the log channel and direct messages (render's `gatingNoticeText`). */
  noticeText: NoticeText;
  recheckIntervalMs: number;
  now?: () => number;
  /** Default: an IntervalScheduler on `recheckIntervalMs` with ±10% jitter. */
  scheduler?: RecheckScheduler;
  /** Role worker tuning (tests shorten the waits). */
  worker?: Pick<
    RoleWorkerOptions,
    'pollMs' | 'maxAttempts' | 'backoffMs' | 'probeMs' | 'maxProbeMs' | 'leaseMs'
  >;
  /** With LINKED_ROLES_ENABLED: the OAuth2 client and TOKEN_ENCRYPTION_KEY as bytes. */
  linkedRoles?: { oauth: DiscordOAuthConfig; key: Buffer };
  /** Runs the Linked Roles re-checks. Default: an IntervalScheduler on `recheckIntervalMs`. */
  linkedRoleScheduler?: RecheckScheduler;
  /** Whether this process runs the Linked Roles re-check (with shards, the manager does). Default true. */
  linkedRoleRechecks?: boolean;
  /**
   * With shards: the HTTP server runs in the shard manager and queues verified signatures in the store;
   * this process links those of the guilds its shards serve (see signedProofs.ts), looking every `pollMs`.
   */
  signedProofInbox?: { pollMs?: number };
  /** How long log-channel lines are gathered into one message. Default 1000 ms. */
  logFlushMs?: number;
  /** Member-list pages a second for re-check walks (a share of the bot's REST limit). Default 40. */
  memberListPagesPerSecond?: number;
  /** Members evaluated at once during a guild re-check. Default 16. */
  recheckConcurrency?: number;
  /** An automated removal needs the loss seen twice at least this far apart. Default 60 min. */
  confirmMs?: number;
  /** Holdings rules' chain reads (issue #35): the chains whose RPC URL is set. */
  holdings?: HoldingsReader | undefined;
  /** Told after each guild's re-check (metrics). */
  onRechecked?: (event: RecheckEvent) => void;
  /** Audit events older than this are deleted. Default 180 days. */
  auditRetentionMs?: number;
  /**
   * With web replicas (INTERACTIONS=http): keep each server's owner and roles in the store, where the
   * replicas read them (authoritySnapshots.ts). `debounceMs`: how long a server's events are gathered.
   */
  authoritySnapshots?: { debounceMs?: number };
  /** How often the due-check pass runs. Default 60 s. */
  dueCheckMs?: number;
  /**
   * With the owners' dashboard: answer the dashboard requests of this process's guilds that other
   * processes queue in the store (requests.ts), looking every `pollMs` and when nudged.
   */
  dashboardInbox?: { pollMs: number; leaseMs: number };
}

const STOP_GRACE_MS = 10_000;

/** The gating module's core: builds verification, member and guild gating, and runs their lifecycle. */
export class GatingService {
  /** /verify, the signing page's completed signature, /unverify. */
  readonly verification: Verification;
  /** One member: report, re-check, sync, and the member events Discord sends. */
  readonly members: MemberGating;
  /** One guild: setup, disable, settings, status, whole-guild re-check and its preview. */
  readonly guilds: GuildGating;
  /** Where each channel's verify panel message is, so `/gating panel` edits it instead of posting twice. */
  readonly panels: VerifyPanelStore;
  /** `/gating exempt`: members and roles gating never removes a gated role from. */
  readonly exemptions: ExemptionGating;
  /** `/gating rule`: roles given for conditions on what members proved. */
  readonly rules: RuleGating;
  /** The paged reads `/gating export` streams from. */
  readonly exports: ExportStore;
  /** Linked Roles (LINKED_ROLES_ENABLED): the metadata each member's proven identity earns; null when off. */
  readonly linkedRoles: LinkedRoleService | null;
  /** What `PUBLIC_URL/linked-role` needs; undefined when Linked Roles are off. */
  readonly linkedRolePages: LinkedRolePagesSetup | undefined;
  /** Members synced again once their due time has passed (old enough; a proof whose sync failed). */
  readonly dueChecks: DueChecks;
  /** With `signedProofInbox`: look for queued proofs now (the manager said one is waiting). */
  nudgeSignedProofs: () => void = () => {};
  /** The owners' dashboard's requests, run against this process's gateway state (operations.ts). */
  readonly dashboard: DashboardExecutor;
  /** With `dashboardInbox`: look for queued dashboard requests now (the manager said one is waiting). */
  nudgeDashboard: () => void = () => {};

  /** The guild as the gateway cache has it (names, channels, the bot's member); undefined when not cached. */
  cachedGuild(guildId: string): Guild | undefined {
    return this.#discord.guilds.cache.get(guildId);
  }

  /** A user's name from the gateway cache, if it has them. */
  cachedUserName(userId: string): string | undefined {
    return this.#discord.users.cache.get(userId)?.username;
  }

  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #worker: RoleWorker;
  readonly #logChannel: LogChannel;
  readonly #upkeep: StoreUpkeep;
  /** What runs on a timer while started: the periodic re-check, upkeep, the Linked Roles re-check, the proof inbox. */
  readonly #timers: Timer[] = [];
  /** Background work (setup re-checks, follow-up syncs) per guild, awaited by `idle` and `stop`. */
  readonly #tasks: BackgroundTasks;
  /** Set while started: stops listening to Discord. */
  #unlisten: (() => void) | null = null;

  constructor(options: GatingServiceOptions) {
    const { store, discord, logger } = options;
    const now = options.now ?? Date.now;
    this.panels = store;
    this.exports = store;
    this.#discord = discord;
    this.#logger = logger;
    const tasks = new BackgroundTasks(logger);
    this.#tasks = tasks;
    const scheduler =
      options.scheduler ??
      new IntervalScheduler({ intervalMs: schedulerTickMs(options.recheckIntervalMs), logger });
    this.#upkeep = new StoreUpkeep({
      store,
      logger,
      tasks,
      now,
      auditRetentionMs: options.auditRetentionMs ?? DEFAULT_AUDIT_RETENTION_MS,
    });
    const notices = new LogChannel({
      discord,
      logger,
      channelOf: async (guildId) => (await store.getGuildSettings(guildId))?.logChannelId ?? null,
      text: options.noticeText,
      ...(options.logFlushMs === undefined ? {} : { flushMs: options.logFlushMs }),
    });
    this.#logChannel = notices;
    const worker = new RoleWorker({ store, discord, logger, notices, now, ...options.worker });
    this.#worker = worker;
    const evaluator = new Evaluator({ ...options, store, logger, now });
    const linked = options.linkedRoles
      ? createLinkedRoles({ ...options, ...options.linkedRoles, evaluator, now })
      : null;
    this.linkedRoles = linked?.service ?? null;
    this.linkedRolePages = linked?.pages;
    if (linked && options.linkedRoleRechecks !== false) {
      this.#timers.push(
        linkedRoleRechecks(
          linked.service,
          options.linkedRoleScheduler ??
            new IntervalScheduler({ intervalMs: options.recheckIntervalMs, logger }),
          logger,
        ),
      );
    }
    const links: LinkBook = new LinkBook({
      store,
      discord,
      logger,
      notices,
      noticeText: options.noticeText,
      tasks,
      now,
      afterLoss: (guildId, userId) =>
        members.sync(guildId, userId, 'unlinked', { fresh: false, checkRecords: false, mode: 'immediate' }),
    });
    const roles = new RoleSync({
      store,
      logger,
      notices,
      kick: (guildId) => worker.kick(guildId),
      dropLink: (link, reason) => links.drop(link, reason),
      now,
      confirmMs: options.confirmMs ?? 60 * 60_000,
    });
    const members = new MemberGating({ store, discord, logger, evaluator, roles, worker, tasks });
    this.members = members;
    this.verification = new Verification({
      store,
      discord,
      logger,
      siwe: options.siwe,
      now,
      evaluator,
      links,
      members,
      worker,
      farcaster: options.farcaster === true,
    });
    if (options.signedProofInbox) {
      const inbox = new SignedProofInbox({
        store,
        logger: logger.child({ part: 'signed-proofs' }),
        ownsGuild: (guildId) => servesGuild(discord, guildId),
        complete: (proof) => this.verification.completeSignature(proof),
        ...options.signedProofInbox,
      });
      this.#timers.push(inbox);
      this.nudgeSignedProofs = () => inbox.nudge();
    }
    const walk = new GuildWalk({
      store,
      discord,
      logger,
      evaluator,
      tasks,
      concurrency: options.recheckConcurrency ?? 16,
      pagesPerSecond: options.memberListPagesPerSecond,
    });
    const rechecks = new GuildRechecks({
      store,
      discord,
      logger,
      now,
      roles,
      members,
      tasks,
      walk,
      recheckIntervalMs: options.recheckIntervalMs,
      onRechecked: options.onRechecked,
    });
    this.dueChecks = new DueChecks({
      store,
      logger,
      tasks,
      now,
      servesGuild: (guildId) => servesGuild(discord, guildId),
      sync: (guildId, userId) => members.syncMember(guildId, userId, 'due check'),
      ...(options.dueCheckMs === undefined ? {} : { intervalMs: options.dueCheckMs }),
    });
    this.#timers.push(
      this.dueChecks,
      {
        start: () => {
          scheduler.start(() => rechecks.recheckDue('periodic'));
          tasks.run('', () => rechecks.recheckDue('catch-up'));
        },
        stop: () => scheduler.stop(),
      },
      new LapsedPasses({ store, discord, logger, tasks, recheck: (g) => rechecks.resume(g) }),
      this.#upkeep,
    );
    if (options.authoritySnapshots) {
      this.#timers.push(
        new AuthoritySnapshots({
          discord,
          store,
          logger: logger.child({ part: 'authority-snapshots' }),
          ...options.authoritySnapshots,
        }),
      );
    }
    this.exemptions = new ExemptionGating({ store, discord });
    this.guilds = new GuildGating({
      store,
      discord,
      worker,
      tasks,
      rechecks,
      walk,
      signingLinksBound: options.siwe.discordSignIn === true,
      holdings: options.holdings,
    });
    this.rules = new RuleGating({ ...options, store, discord, guilds: this.guilds, tasks });
    this.dashboard = new DashboardExecutor({
      discord,
      store,
      guilds: this.guilds,
      rules: this.rules,
      exemptions: this.exemptions,
      logger: logger.child({ module: 'dashboard' }),
    });
    if (options.dashboardInbox) {
      const inbox = new DashboardRequestInbox({
        store,
        logger: logger.child({ module: 'dashboard-requests' }),
        shards: () => shardFilterOf(discord),
        run: (request) => this.dashboard.run(request),
        ...options.dashboardInbox,
      });
      this.#timers.push(inbox);
      this.nudgeDashboard = () => inbox.nudge();
    }
  }

  /** Start the role worker (resuming pending changes left by a crash), the periodic re-check and upkeep. */
  start(): void {
    if (this.#unlisten || this.#tasks.stopping) return;
    this.#unlisten = listenToDiscord(this.#discord, {
      unblock: (guildId) => this.#tasks.run(guildId, () => this.#worker.unblock(guildId)),
      usernameChanged: (userId) => this.#tasks.run('', () => this.members.onUsernameChange(userId)),
    });
    this.#worker
      .resume()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'could not resume role changes'));
    for (const timer of this.#timers) timer.start();
  }

  /** Stop taking work, let in-progress role edits finish (bounded), stop timers. */
  async stop(): Promise<void> {
    if (this.#tasks.stopping) return;
    const stopped = this.#tasks.stop(STOP_GRACE_MS);
    const timersStopped = Promise.all(this.#timers.map((timer) => timer.stop()));
    this.#unlisten?.();
    await stopped;
    await timersStopped;
    await this.#worker.stop(STOP_GRACE_MS);
    await this.#logChannel.stop(STOP_GRACE_MS);
  }

  /** Delete expired nonces, finished role changes and audit events past their retention. */
  prune(): Promise<PruneCounts> {
    return this.#upkeep.prune();
  }

  /** Resolves when the role queue is empty (for tests and graceful shutdown). */
  async idle(guildId?: string): Promise<void> {
    await this.#tasks.settle(guildId);
    await this.#worker.idle(guildId);
    await this.#logChannel.idle();
  }
}

interface Timer {
  start(): void;
  stop(): void | Promise<void>;
}

/**
 * Linked Roles on their own: the service and what its pages need. The gating service builds them, and so
 * does the shard manager, whose HTTP server serves the pages and which runs their re-check.
 */
export function createLinkedRoles(o: {
  store: GatingStore;
  evaluator: Evaluator;
  logger: Logger;
  now: () => number;
  confirmMs?: number | undefined;
  oauth: DiscordOAuthConfig;
  key: Buffer;
}): { service: LinkedRoleService; pages: LinkedRolePagesSetup } {
  const service = new LinkedRoleService({
    store: o.store,
    evaluator: o.evaluator,
    logger: o.logger.child({ part: 'linked-roles' }),
    now: o.now,
    oauth: o.oauth,
    key: o.key,
    ...(o.confirmMs === undefined ? {} : { confirmMs: o.confirmMs }),
  });
  return { service, pages: { oauth: o.oauth, key: o.key, evaluator: o.evaluator, service } };
}

/** The periodic Linked Roles re-check, as a timer. */
export function linkedRoleRechecks(
  service: LinkedRoleService,
  scheduler: RecheckScheduler,
  logger: Logger,
): Timer {
  return {
    start: () =>
      scheduler.start(async () => {
        const counts = await service.recheckAll();
        logger.info({ counts }, 'linked roles re-checked');
      }),
    stop: () => scheduler.stop(),
  };
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
