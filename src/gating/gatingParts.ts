/**
 * Builds the gating service's parts from its options and wires each to what it needs, once: the role
 * worker and log channel, proofs and member gating, the re-checks, the commands' parts, and the timers
 * that run them (serviceLifecycle.ts starts and stops those).
 */
import type { Client } from 'discord.js';
import type { Logger } from '../ops/log.ts';
import type { GatingStore } from '../store/types.ts';
import { DashboardExecutor } from './dashboard/operations.ts';
import { DashboardRequestInbox } from './dashboard/requests.ts';
import { ExemptionGating } from './exemptionGating.ts';
import { GuildGating } from './guildGating.ts';
import { createLinkedRoles, linkedRoleRechecks } from './linkedRoleParts.ts';
import type { LinkedRolePagesSetup, LinkedRoleService } from './linkedRoles/linkedRoleService.ts';
import { LinkBook } from './proofs/linkBook.ts';
import { SharingPickUp } from './proofs/sharingPickUp.ts';
import { SignedProofInbox } from './proofs/signedProofs.ts';
import { Verification } from './proofs/verification.ts';
import { BackgroundTasks } from './rechecks/backgroundTasks.ts';
import { DueChecks } from './rechecks/dueChecks.ts';
import { GuildRechecks } from './rechecks/guildRechecks.ts';
import { GuildWalk } from './rechecks/guildWalk.ts';
import { LapsedPasses } from './rechecks/lapsedPasses.ts';
import { IntervalScheduler, type RecheckScheduler, schedulerTickMs } from './rechecks/scheduler.ts';
import { DEFAULT_AUDIT_RETENTION_MS, StoreUpkeep } from './rechecks/storeUpkeep.ts';
import { AuthoritySnapshots } from './roles/authoritySnapshots.ts';
import { servesGuild, shardFilterOf } from './roles/discordReads.ts';
import { LogChannel } from './roles/logChannel.ts';
import { MemberGating } from './roles/memberGating.ts';
import { RoleSync } from './roles/roleSync.ts';
import { RoleWorker } from './roles/roleWorker.ts';
import { RuleGating } from './ruleGating.ts';
import { Evaluator } from './rules/evaluation.ts';
import type { LifecycleParts, Timer } from './serviceLifecycle.ts';
import type { GatingServiceOptions } from './serviceOptions.ts';

/** Everything the service exposes, and what its lifecycle runs. */
export interface GatingParts {
  verification: Verification;
  members: MemberGating;
  guilds: GuildGating;
  exemptions: ExemptionGating;
  rules: RuleGating;
  dashboard: DashboardExecutor;
  dueChecks: DueChecks;
  linkedRoles: LinkedRoleService | null;
  linkedRolePages: LinkedRolePagesSetup | undefined;
  /** Look for queued signed proofs now; a no-op without `signedProofInbox`. */
  nudgeSignedProofs: () => void;
  /** Look for queued dashboard requests now; a no-op without `dashboardInbox`. */
  nudgeDashboard: () => void;
  lifecycle: LifecycleParts;
}

/** The parts every other part is built on. */
interface Base {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  now: () => number;
  scheduler: RecheckScheduler;
  tasks: BackgroundTasks;
  upkeep: StoreUpkeep;
  notices: LogChannel;
  worker: RoleWorker;
  evaluator: Evaluator;
}

export function buildGatingParts(options: GatingServiceOptions): GatingParts {
  const base = buildBase(options);
  const timers: Timer[] = [];
  const linked = buildLinkedRoles(options, base, timers);
  const { members, verification, roles } = buildMemberParts(options, base);
  const nudgeSignedProofs = signedProofInbox(options, base, verification, timers);
  timers.push(sharingPickUp(options, base, verification));
  const { walk, rechecks, dueChecks } = buildRechecks(options, base, { roles, members }, timers);
  if (options.authoritySnapshots) {
    timers.push(
      new AuthoritySnapshots({
        discord: base.discord,
        store: base.store,
        logger: base.logger.child({ part: 'authority-snapshots' }),
        ...options.authoritySnapshots,
      }),
    );
  }
  const commands = buildCommandParts(options, base, { rechecks, walk });
  const nudgeDashboard = dashboardInbox(options, base, commands.dashboard, timers);
  const { discord, logger, worker, notices: logChannel, upkeep, tasks } = base;
  return {
    verification,
    members,
    ...commands,
    dueChecks,
    linkedRoles: linked?.service ?? null,
    linkedRolePages: linked?.pages,
    nudgeSignedProofs,
    nudgeDashboard,
    lifecycle: { discord, logger, worker, logChannel, upkeep, members, tasks, timers },
  };
}

/** The background tasks, upkeep, the log channel, the role worker and the evaluator. */
function buildBase(options: GatingServiceOptions): Base {
  const { store, discord, logger } = options;
  const now = options.now ?? Date.now;
  const tasks = new BackgroundTasks(logger);
  const scheduler =
    options.scheduler ??
    new IntervalScheduler({ intervalMs: schedulerTickMs(options.recheckIntervalMs), logger });
  const upkeep = new StoreUpkeep({
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
  const worker = new RoleWorker({ store, discord, logger, notices, now, ...options.worker });
  const evaluator = new Evaluator({ ...options, store, logger, now });
  return { store, discord, logger, now, scheduler, tasks, upkeep, notices, worker, evaluator };
}

/** With `linkedRoles`: the service and its pages, and (unless the manager runs it) its re-check timer. */
function buildLinkedRoles(options: GatingServiceOptions, base: Base, timers: Timer[]) {
  if (!options.linkedRoles) return null;
  const { evaluator, now, logger } = base;
  const linked = createLinkedRoles({ ...options, ...options.linkedRoles, evaluator, now });
  if (options.linkedRoleRechecks !== false) {
    timers.push(
      linkedRoleRechecks(
        linked.service,
        options.linkedRoleScheduler ??
          new IntervalScheduler({ intervalMs: options.recheckIntervalMs, logger }),
        logger,
      ),
    );
  }
  return linked;
}

/** The link book, role sync, member gating and verification, which need one another. */
function buildMemberParts(options: GatingServiceOptions, base: Base) {
  const { store, discord, logger, notices, tasks, now, worker, evaluator } = base;
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
  const verification = new Verification({
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
  return { members, verification, roles };
}

/** With `signedProofInbox`: the inbox of proofs verified elsewhere, as a timer. Returns its nudge. */
function signedProofInbox(
  options: GatingServiceOptions,
  base: Base,
  verification: Verification,
  timers: Timer[],
): () => void {
  if (!options.signedProofInbox) return () => {};
  const { store, discord, logger } = base;
  const inbox = new SignedProofInbox({
    store,
    logger: logger.child({ part: 'signed-proofs' }),
    ownsGuild: (guildId) => servesGuild(discord, guildId),
    complete: (proof) => verification.completeSignature(proof),
    ...options.signedProofInbox,
  });
  timers.push(inbox);
  return () => inbox.nudge();
}

/** Sharing turned on in any process, brought to this one's servers (sharingPickUp.ts). */
function sharingPickUp(options: GatingServiceOptions, base: Base, verification: Verification): SharingPickUp {
  const { store, logger, tasks, now } = base;
  return new SharingPickUp({
    store,
    logger: logger.child({ part: 'sharing-pick-up' }),
    tasks,
    now,
    bringToServed: (userId) => verification.carrier.bringToServed(userId),
    ...(options.sharingPickUpMs === undefined ? {} : { intervalMs: options.sharingPickUpMs }),
  });
}

/** Whole-guild walks and re-checks, due checks, lapsed passes and upkeep, with their timers. */
function buildRechecks(
  options: GatingServiceOptions,
  base: Base,
  parts: { roles: RoleSync; members: MemberGating },
  timers: Timer[],
) {
  const { store, discord, logger, now, tasks, evaluator, scheduler } = base;
  const { roles, members } = parts;
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
    quota: options.web3bio.rateLimit,
  });
  const dueChecks = new DueChecks({
    store,
    logger,
    tasks,
    now,
    servesGuild: (guildId) => servesGuild(discord, guildId),
    sync: (guildId, userId, memberAsked) =>
      memberAsked
        ? members.sync(guildId, userId, 'unverify', { fresh: false, checkRecords: false, mode: 'immediate' })
        : members.syncMember(guildId, userId, 'due check'),
    ...(options.dueCheckMs === undefined ? {} : { intervalMs: options.dueCheckMs }),
  });
  timers.push(
    dueChecks,
    {
      start: () => {
        scheduler.start(() => rechecks.recheckDue('periodic'));
        tasks.run('', () => rechecks.recheckDue('catch-up'));
      },
      stop: () => scheduler.stop(),
    },
    new LapsedPasses({ store, discord, logger, tasks, recheck: (g) => rechecks.resume(g) }),
    base.upkeep,
  );
  return { walk, rechecks, dueChecks };
}

/** What the `/gating` commands and the dashboard use: exemptions, guild gating, rules, the dashboard's runner. */
function buildCommandParts(
  options: GatingServiceOptions,
  base: Base,
  parts: { rechecks: GuildRechecks; walk: GuildWalk },
) {
  const { store, discord, logger, worker, tasks } = base;
  const exemptions = new ExemptionGating({ store, discord });
  const guilds = new GuildGating({
    store,
    discord,
    worker,
    tasks,
    rechecks: parts.rechecks,
    walk: parts.walk,
    signingLinksBound: options.siwe.discordSignIn === true,
    holdings: options.holdings,
  });
  const rules = new RuleGating({ ...options, store, discord, guilds, tasks });
  const dashboard = new DashboardExecutor({
    discord,
    store,
    guilds,
    rules,
    exemptions,
    logger: logger.child({ module: 'dashboard' }),
  });
  return { exemptions, guilds, rules, dashboard };
}

/** With `dashboardInbox`: the dashboard requests other processes queue for this one's guilds. Returns its nudge. */
function dashboardInbox(
  options: GatingServiceOptions,
  base: Base,
  dashboard: DashboardExecutor,
  timers: Timer[],
): () => void {
  if (!options.dashboardInbox) return () => {};
  const { store, discord, logger } = base;
  const inbox = new DashboardRequestInbox({
    store,
    logger: logger.child({ module: 'dashboard-requests' }),
    shards: () => shardFilterOf(discord),
    run: (request) => dashboard.run(request),
    ...options.dashboardInbox,
  });
  timers.push(inbox);
  return () => inbox.nudge();
}
