/**
 * The gating service: proves identities (the identity's own record, or a wallet signature), evaluates
 * the guild's rules on each proven identity's credentials, and queues the role changes that follow.
 * It never rewards an unproven claim, never hands out a role its invoker could not, never removes a role
 * because a lookup failed or on a single sighting in an automated pass, and records why every change
 * happened.
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
import type { Logger } from '../log.ts';
import type { GatingStore, GuildSettings, LinkInput, LinkRecord, NonceRecord } from '../store/types.ts';
import { escapeLine, truncate } from '../text/safety.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { InvalidIdentityError } from '../web3bio/errors.ts';
import { type ParsedIdentity, parseIdentity } from '../web3bio/identity.ts';
import {
  botCanManageRoles,
  delay,
  guildOf,
  guildRoleProblems,
  hasMembersIntent,
  invokerRights,
  loadMembers,
  memberOf,
} from './discordReads.ts';
import {
  type EvaluateOptions,
  type Evaluation,
  Evaluator,
  type MemberState,
  resolvedAddressOf,
  signerAddressOf,
} from './evaluation.ts';
import type { RoleProblem } from './hierarchy.ts';
import { LogChannel } from './logChannel.ts';
import type { RemovalMode } from './losses.ts';
import { recordNamesDiscordUser } from './recordProof.ts';
import { PassLosses, RoleSync } from './roleSync.ts';
import { RoleWorker, type RoleWorkerOptions } from './roleWorker.ts';
import { carriesFlag, type RoleDiff } from './rules.ts';
import { IntervalScheduler, type RecheckScheduler } from './scheduler.ts';
import { createChallenge, type SiweConfig } from './siwe.ts';
import type {
  GuildPreview,
  GuildStatus,
  MemberReport,
  MemberSync,
  RecheckResult,
  SetupInput,
  SignatureLinkResult,
  VerifyRefusal,
  VerifyResult,
} from './types.ts';

export interface GatingServiceOptions {
  store: GatingStore;
  web3bio: Web3BioClient;
  /** discord.js, logged in. */
  discord: Client;
  logger: Logger;
  siwe: SiweConfig;
  recheckIntervalMs: number;
  now?: () => number;
  /** Default: an IntervalScheduler on `recheckIntervalMs` with ±10% jitter. */
  scheduler?: RecheckScheduler;
  /** Role worker tuning (tests shorten the waits). */
  worker?: Pick<
    RoleWorkerOptions,
    'pollMs' | 'maxAttempts' | 'backoffMs' | 'probeMs' | 'maxProbeMs' | 'leaseMs'
  >;
  /** How long log-channel lines are gathered into one message. Default 1000 ms. */
  logFlushMs?: number;
  /** Members evaluated at once during a guild re-check. Default 16. */
  recheckConcurrency?: number;
  /** An automated removal needs the loss seen twice at least this far apart. Default 60 min. */
  confirmMs?: number;
  /** Audit events older than this are deleted. Default 180 days. */
  auditRetentionMs?: number;
}

/** At most this many proven identities per member and guild, which bounds the lookups one member costs. */
export const MAX_LINKS_PER_MEMBER = 5;
const LINK_PAGE = 500;
const PREVIEW_SAMPLE = 10;
const MAX_REASON = 400;
const STOP_GRACE_MS = 10_000;
const EMPTY_DIFF: RoleDiff = { add: [], remove: [] };
const NO_SYNC: MemberSync = { applied: EMPTY_DIFF, waiting: [] };
const DAY_MS = 86_400_000;
const MAINTENANCE_MS = 60 * 60_000;
/** Finished role changes are kept this long (their audit events stay for the audit retention). */
const FINISHED_CHANGE_RETENTION_MS = 7 * DAY_MS;

interface SyncOptions {
  fresh: boolean;
  checkRecords: boolean;
  mode: RemovalMode;
}

/** The gating module's core: verification, evaluation, role queue and re-checks. */
export class GatingService {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #siwe: SiweConfig;
  readonly #recheckIntervalMs: number;
  readonly #now: () => number;
  readonly #scheduler: RecheckScheduler;
  readonly #worker: RoleWorker;
  readonly #logChannel: LogChannel;
  readonly #evaluator: Evaluator;
  readonly #roles: RoleSync;
  readonly #concurrency: number;
  readonly #auditRetentionMs: number;
  /** Background work (setup re-checks, follow-up syncs) per guild, awaited by `idle` and `stop`. */
  readonly #background = new Map<string, Set<Promise<unknown>>>();
  readonly #rechecks = new Map<string, { fresh: boolean; run: Promise<RecheckResult> }>();
  #unlisten: (() => void) | null = null;
  #maintenance: NodeJS.Timeout | null = null;
  #started = false;
  #stopping = false;

  constructor(options: GatingServiceOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#siwe = options.siwe;
    this.#recheckIntervalMs = options.recheckIntervalMs;
    this.#now = options.now ?? Date.now;
    this.#concurrency = Math.max(1, options.recheckConcurrency ?? 16);
    this.#auditRetentionMs = options.auditRetentionMs ?? 180 * DAY_MS;
    this.#scheduler =
      options.scheduler ??
      new IntervalScheduler({ intervalMs: options.recheckIntervalMs, logger: options.logger });
    this.#logChannel = new LogChannel({
      discord: options.discord,
      logger: options.logger,
      channelOf: async (guildId) => (await this.#store.getGuildSettings(guildId))?.logChannelId ?? null,
      ...(options.logFlushMs === undefined ? {} : { flushMs: options.logFlushMs }),
    });
    this.#worker = new RoleWorker({
      store: options.store,
      discord: options.discord,
      logger: options.logger,
      notices: this.#logChannel,
      now: this.#now,
      ...options.worker,
    });
    this.#evaluator = new Evaluator({
      web3bio: options.web3bio,
      store: options.store,
      logger: options.logger,
      now: this.#now,
    });
    this.#roles = new RoleSync({
      store: options.store,
      logger: options.logger,
      notices: this.#logChannel,
      kick: (guildId) => this.#worker.kick(guildId),
      dropLink: (link, reason) => this.#dropLink(link, reason),
      now: this.#now,
      confirmMs: options.confirmMs ?? 60 * 60_000,
    });
  }

  /**
   * Save the guild's rules when every role can be managed by the bot and handed out by the invoker;
   * then re-check the whole guild with fresh lookups.
   */
  async setup(
    guildId: string,
    input: SetupInput,
    actorId: string,
  ): Promise<{ settings: GuildSettings | null; problems: RoleProblem[] }> {
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) throw new Error('the bot is not in this server');
    const roleIds = [input.humanRoleId, input.spamRoleId, input.riskyRoleId].filter((r) => r !== null);
    const invoker = invokerRights(guild, await memberOf(guild, actorId));
    const problems = guildRoleProblems(guild, roleIds, invoker);
    if (problems.length > 0) return { settings: null, problems };

    const previous = await this.#store.getGuildSettings(guildId);
    const minScore = input.minScore !== null && Number.isFinite(input.minScore) ? input.minScore : null;
    const settings = await this.#store.saveGuildSettings(
      {
        guildId,
        enabled: true,
        humanRoleId: input.humanRoleId,
        spamRoleId: input.spamRoleId,
        riskyRoleId: input.riskyRoleId,
        minScore,
        spamRemovesHuman: input.spamRemovesHuman ?? previous?.spamRemovesHuman ?? true,
        logChannelId: input.logChannelId,
      },
      { userId: actorId, reason: previous ? 'gating settings changed' : 'gating set up' },
    );
    await this.#worker.unblock(guildId);
    this.#inBackground(guildId, () => this.recheckGuild(guildId, { fresh: true, cause: 'setup' }));
    return { settings, problems: [] };
  }

  /** Turn gating off in a guild (roles stay as they are); false when it was never set up. */
  async disable(guildId: string, actorId: string): Promise<boolean> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return false;
    const { lastFullSyncAt: _sync, updatedAt: _updated, ...input } = settings;
    await this.#store.saveGuildSettings(
      { ...input, enabled: false },
      { userId: actorId, reason: 'gating disabled' },
    );
    return true;
  }

  /** The guild's gating settings, if it was ever set up. */
  getSettings(guildId: string): Promise<GuildSettings | undefined> {
    return this.#store.getGuildSettings(guildId);
  }

  /**
   * Start proving an identity: linked at once when its own record (read fresh) names the member,
   * otherwise a one-time signing link for its Ethereum address. Nothing is stored when a lookup fails.
   */
  async verify(
    guildId: string,
    user: { id: string; username: string },
    identityInput: string,
  ): Promise<VerifyResult> {
    let parsed: ParsedIdentity;
    try {
      parsed = parseIdentity(identityInput);
    } catch (error) {
      if (error instanceof InvalidIdentityError)
        return refused({ code: 'invalid_identity', reason: error.reason });
      throw error;
    }
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return refused({ code: 'not_enabled' });
    const capped = await this.#capRefusal(guildId, user.id, parsed.identity);
    if (capped) return refused(capped);

    const name = parsed.identity;
    if (parsed.kind === 'evm-address' || parsed.kind === 'solana-address')
      return this.#challenge(guildId, user, name, name);

    const read = await this.#evaluator.readRecord(parsed, true);
    if (read.failed) return refused({ code: 'lookup_failed', identity: name });
    if (recordNamesDiscordUser(read, user)) {
      const linked = await this.#link(
        {
          guildId,
          userId: user.id,
          identity: name,
          platform: String(parsed.platform),
          address: resolvedAddressOf(read),
          proofMethod: 'record',
          provenAt: this.#now(),
        },
        `the discord record of ${name} names ${user.username}`,
      );
      if ('refusal' in linked) return refused(linked.refusal);
      const diff = await this.#syncAfterLink(guildId, user.id);
      return {
        kind: 'linked',
        link: linked.link,
        diff,
        moved: linked.moved,
        blockedRoleIds: this.#worker.blockedRoles(guildId),
      };
    }
    if (read.profiles.length === 0 && read.domain === null)
      return refused({ code: 'not_found', identity: name });
    const address = signerAddressOf(read);
    if (!address) return refused({ code: 'no_address', identity: name, username: user.username });
    return this.#challenge(guildId, user, name, address);
  }

  /** The verify server's onVerified: store the signature link (the link cap checked again), then sync. */
  async completeSignature(result: { record: NonceRecord; address: string }): Promise<SignatureLinkResult> {
    const { record } = result;
    const settings = await this.#store.getGuildSettings(record.guildId);
    if (!settings?.enabled) return { ok: false, refusal: { code: 'not_enabled' } };
    const capped = await this.#capRefusal(record.guildId, record.userId, record.identity);
    if (capped) return { ok: false, refusal: capped };
    let platform = 'ethereum';
    try {
      platform = String(parseIdentity(record.identity).platform);
    } catch {
      // The identity was parsed when the challenge was made; keep the link even if parsing rules changed.
    }
    const address = result.address.startsWith('0x') ? result.address.toLowerCase() : result.address;
    const linked = await this.#link(
      {
        guildId: record.guildId,
        userId: record.userId,
        identity: record.identity,
        platform,
        address,
        proofMethod: 'signature',
        provenAt: this.#now(),
      },
      `wallet signature by ${address}`,
    );
    if ('refusal' in linked) return { ok: false, refusal: linked.refusal };
    await this.#syncAfterLink(record.guildId, record.userId);
    return { ok: true };
  }

  /**
   * Remove the member's links (one identity, or all); roles follow. An identity that carried a spam or
   * risky flag stays on the re-check list until its own credentials clear. Returns how many were removed.
   */
  async unverify(guildId: string, userId: string, identity?: string): Promise<number> {
    const links = await this.#store.getUserLinks(guildId, userId);
    const wanted = identity === undefined ? undefined : normalisedIdentity(identity);
    let removed = 0;
    for (const link of links) {
      if (link.releasedAt !== null || (wanted !== undefined && link.identity !== wanted)) continue;
      await this.#dropLink(link, 'removed by the member with /unverify');
      removed += 1;
    }
    if (removed > 0)
      await this.#sync(guildId, userId, 'unverify', { fresh: false, checkRecords: false, mode: 'immediate' });
    return removed;
  }

  /** A member's proven identities, their credentials, and the roles the rules want against the roles held. */
  async report(guildId: string, userId: string, opts: { fresh?: boolean } = {}): Promise<MemberReport> {
    const [settings, all, losses] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.getUserLinks(guildId, userId),
      this.#store.listPendingLosses(guildId, userId),
    ]);
    const guild = await guildOf(this.#discord, guildId);
    const state = memberState(userId, guild ? await memberOf(guild, userId) : null);
    const confirmMs = this.#roles.confirmMs;
    const base = {
      userId,
      links: all.filter((l) => l.releasedAt === null),
      released: all.filter((l) => l.releasedAt !== null),
      currentRoleIds: [...state.roleIds].filter((id) => id !== guildId),
      pendingRemovals: losses.map((l) => ({ ...l, confirmAt: l.firstSeenAt + confirmMs })),
      blockedRoleIds: this.#worker.blockedRoles(guildId),
    };
    if (!settings) {
      const evidence = await this.#evaluator.evidenceOf(base.links, opts.fresh === true);
      return { ...base, evidence, decisions: [], diff: EMPTY_DIFF };
    }
    const evaluation = await this.#evaluator.evaluate(state, all, {
      settings,
      fresh: opts.fresh === true,
      dryRun: true,
      checkRecords: false,
    });
    return { ...base, evidence: evaluation.evidence, decisions: evaluation.decisions, diff: evaluation.diff };
  }

  /**
   * Re-evaluate one member with fresh lookups and queue the changes, for a moderator: a removal applies
   * at once only when the fresh answer shows the loss (a failure or a sudden "not found" never does).
   */
  async recheckMember(guildId: string, userId: string, cause: string): Promise<MemberSync> {
    return this.#sync(guildId, userId, cause, { fresh: true, checkRecords: true, mode: 'answered' });
  }

  /** Re-evaluate one member in an automated pass (join, rule change): removals need confirmation. */
  async syncMember(guildId: string, userId: string, cause: string): Promise<MemberSync> {
    return this.#sync(guildId, userId, cause, { fresh: false, checkRecords: true, mode: 'confirmed' });
  }

  /**
   * Re-evaluate every linked member of the guild (records re-checked in batches) and queue the changes.
   * Removals need confirmation, and a mass removal is held; `confirmRemovals` (a moderator) releases it.
   */
  async recheckGuild(
    guildId: string,
    opts: { fresh?: boolean; cause?: string; confirmRemovals?: boolean } = {},
  ): Promise<RecheckResult> {
    const fresh = opts.fresh === true;
    const running = this.#rechecks.get(guildId);
    // One walk per guild at a time: a request the running walk already covers joins it.
    if (running && (running.fresh || !fresh) && !opts.confirmRemovals) return running.run;
    const run = (async () => {
      if (running) await running.run.catch(() => undefined);
      return this.#recheck(guildId, fresh, opts.cause ?? 'recheck', opts.confirmRemovals === true);
    })();
    const entry = { fresh, run };
    this.#rechecks.set(guildId, entry);
    this.#track(guildId, run);
    try {
      return await run;
    } finally {
      if (this.#rechecks.get(guildId) === entry) this.#rechecks.delete(guildId);
    }
  }

  async #recheck(
    guildId: string,
    fresh: boolean,
    cause: string,
    confirmRemovals: boolean,
  ): Promise<RecheckResult> {
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
    const pass = new PassLosses();
    const complete = await this.#walkGuild(
      guild,
      { settings, fresh, dryRun: false, checkRecords: true },
      async (state, evaluation) => {
        totals.members += 1;
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
          const { applied } = await this.#sync(guildId, state.userId, cause, {
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
    return totals;
  }

  /** A dry run of a guild re-check (cached lookups, nothing written). */
  async preview(guildId: string): Promise<GuildPreview> {
    const result: GuildPreview = { members: 0, addCount: 0, removeCount: 0, unknownCount: 0, sample: [] };
    const settings = await this.#store.getGuildSettings(guildId);
    const guild = await guildOf(this.#discord, guildId);
    if (!settings || !guild) return result;
    await this.#walkGuild(
      guild,
      { settings, fresh: false, dryRun: true, checkRecords: true },
      async (state, { diff, failed }) => {
        result.members += 1;
        result.addCount += diff.add.length;
        result.removeCount += diff.remove.length;
        if (failed) result.unknownCount += 1;
        const changes = diff.add.length + diff.remove.length;
        if (changes > 0 && result.sample.length < PREVIEW_SAMPLE) {
          result.sample.push({
            userId: state.userId,
            add: diff.add.map((a) => a.roleId),
            remove: diff.remove.map((r) => r.roleId),
            because: [...diff.add, ...diff.remove].map((c) => c.because),
          });
        }
      },
      () => {
        result.unknownCount += 1;
      },
    );
    return result;
  }

  /** Permissions, intents, hierarchy problems, blocked roles, held removals, last sync and queue. */
  async status(guildId: string): Promise<GuildStatus> {
    const [settings, queueLength, linkedMembers, losses] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.pendingRoleChanges(guildId),
      this.#store.countLinkedUsers(guildId),
      this.#store.listPendingLosses(guildId),
    ]);
    const guild = await guildOf(this.#discord, guildId);
    const roleIds = settings ? [settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId] : [];
    return {
      enabled: settings?.enabled ?? false,
      settings: settings ?? null,
      manageRoles: guild ? botCanManageRoles(guild) : false,
      guildMembersIntent: hasMembersIntent(this.#discord),
      problems: guild
        ? guildRoleProblems(
            guild,
            roleIds.filter((r) => r !== null),
          )
        : [],
      lastFullSyncAt: settings?.lastFullSyncAt ?? null,
      queueLength,
      linkedMembers,
      blockedRoleIds: this.#worker.blockedRoles(guildId),
      heldRemovals: losses.filter((l) => l.heldAt !== null).length,
      signingLinksBound: this.#siwe.discordSignIn === true,
    };
  }

  /** A member joined: if they proved identities here before, their roles follow at once. */
  async onMemberJoin(member: GuildMember): Promise<void> {
    if (this.#stopping) return;
    const guildId = member.guild.id;
    try {
      const settings = await this.#store.getGuildSettings(guildId);
      if (!settings?.enabled) return;
      if ((await this.#store.getUserLinks(guildId, member.id)).length === 0) return;
      await this.syncMember(guildId, member.id, 'join');
    } catch (error) {
      this.#logger.error({ err: error, guildId, userId: member.id }, 'gating on member join failed');
    }
  }

  /**
   * A member's Discord username changed: the old one can be taken by someone else, so each record link
   * is read again at once, and dropped when the record names someone else.
   */
  async onUsernameChange(userId: string): Promise<void> {
    const links = (await this.#store.getLinksOfUser(userId)).filter(
      (l) => l.proofMethod === 'record' && l.releasedAt === null,
    );
    for (const guildId of new Set(links.map((l) => l.guildId))) {
      await this.#sync(guildId, userId, 'username changed', {
        fresh: true,
        checkRecords: true,
        mode: 'answered',
      });
    }
  }

  /** Start the role worker (resuming pending changes left by a crash), the periodic re-check and upkeep. */
  start(): void {
    if (this.#started || this.#stopping) return;
    this.#started = true;
    this.#listen();
    this.#worker
      .resume()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'could not resume role changes'));
    this.#scheduler.start(() => this.#periodic(false));
    this.#inBackground('', () => this.#periodic(true));
    this.#inBackground('', () => this.prune());
    this.#maintenance = setInterval(() => this.#inBackground('', () => this.prune()), MAINTENANCE_MS);
    this.#maintenance.unref();
  }

  /** Stop taking work, let in-progress role edits finish (bounded), stop timers. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#scheduler.stop();
    if (this.#maintenance) clearInterval(this.#maintenance);
    this.#unlisten?.();
    const background = [...this.#background.values()].flatMap((set) => [...set]);
    await Promise.race([Promise.allSettled(background), delay(STOP_GRACE_MS)]);
    await this.#worker.stop(STOP_GRACE_MS);
    await this.#logChannel.stop(STOP_GRACE_MS);
  }

  /** Resolves when the role queue is empty (for tests and graceful shutdown). */
  async idle(guildId?: string): Promise<void> {
    for (;;) {
      const tasks =
        guildId === undefined
          ? [...this.#background.values()].flatMap((set) => [...set])
          : [...(this.#background.get(guildId) ?? []), ...(this.#background.get('') ?? [])];
      if (tasks.length === 0) break;
      await Promise.allSettled(tasks);
    }
    await this.#worker.idle(guildId);
    await this.#logChannel.idle();
  }

  /** Delete expired nonces, finished role changes and audit events past their retention. */
  async prune(): Promise<{ nonces: number; changes: number; auditEvents: number }> {
    const now = this.#now();
    const pruned = {
      nonces: await this.#store.deleteExpiredNonces(now),
      changes: await this.#store.deleteFinishedRoleChanges(now - FINISHED_CHANGE_RETENTION_MS),
      auditEvents: await this.#store.deleteAuditEvents(now - this.#auditRetentionMs),
    };
    this.#logger.debug(pruned, 'gating store pruned');
    return pruned;
  }

  /** Discord reports a change that may fix a blocked role, or a username change. */
  #listen(): void {
    const discord = this.#discord;
    const unblock = (guildId: string) => this.#inBackground(guildId, () => this.#worker.unblock(guildId));
    const onRole = (_old: Role, role: Role) => unblock(role.guild.id);
    const onGuild = (_old: Guild, guild: Guild) => unblock(guild.id);
    const onMember = (_old: GuildMember | PartialGuildMember, member: GuildMember) => {
      if (member.id === discord.user?.id) unblock(member.guild.id);
    };
    const onUser = (old: User | PartialUser, user: User) => {
      if (old.username !== user.username) this.#inBackground('', () => this.onUsernameChange(user.id));
    };
    discord.on(Events.GuildRoleUpdate, onRole);
    discord.on(Events.GuildUpdate, onGuild);
    discord.on(Events.GuildMemberUpdate, onMember);
    discord.on(Events.UserUpdate, onUser);
    this.#unlisten = () => {
      discord.off(Events.GuildRoleUpdate, onRole);
      discord.off(Events.GuildUpdate, onGuild);
      discord.off(Events.GuildMemberUpdate, onMember);
      discord.off(Events.UserUpdate, onUser);
    };
  }

  // --- verification -------------------------------------------------------------------------------

  /** The link cap, counted over the member's other active links. */
  async #capRefusal(guildId: string, userId: string, identity: string): Promise<VerifyRefusal | null> {
    const existing = await this.#store.getUserLinks(guildId, userId);
    const others = existing.filter((l) => l.releasedAt === null && l.identity !== identity);
    return others.length >= MAX_LINKS_PER_MEMBER
      ? { code: 'too_many_links', count: others.length, max: MAX_LINKS_PER_MEMBER }
      : null;
  }

  async #challenge(
    guildId: string,
    user: { id: string; username: string },
    identity: string,
    address: string,
  ): Promise<VerifyResult> {
    const guild = await guildOf(this.#discord, guildId);
    const challenge = await createChallenge(this.#store, this.#siwe, {
      guildId,
      userId: user.id,
      userName: user.username || null,
      guildName: guild?.name ?? null,
      identity,
      address,
    });
    return {
      kind: 'challenge',
      url: challenge.url,
      expiresAt: challenge.expiresAt,
      address: address.startsWith('0x') ? address.toLowerCase() : address,
    };
  }

  /**
   * Store a proven link. One identity and one address back at most one member per guild. An identity
   * goes to the member its proof names now (its record, or a signature). An address goes to whoever
   * proves it by wallet signature; a record proof links an address only when no other member backs it,
   * since a name's record can point at any wallet. A member who loses a link is told, and loses what it gave.
   */
  async #link(
    input: LinkInput,
    reason: string,
  ): Promise<{ link: LinkRecord; moved: boolean } | { refusal: VerifyRefusal }> {
    const { guildId, userId } = input;
    const others = (links: LinkRecord[]) => links.filter((l) => l.userId !== userId && l.releasedAt === null);
    const sameIdentity = others(await this.#store.getIdentityLinks(guildId, input.identity));
    const sameAddress = input.address
      ? others(await this.#store.getAddressLinks(guildId, input.address)).filter(
          (l) => l.identity !== input.identity,
        )
      : [];
    if (input.proofMethod === 'record' && sameAddress.length > 0) {
      return { refusal: { code: 'address_taken', address: input.address ?? '' } };
    }
    const link = await this.#store.saveLink(input, truncate(reason, MAX_REASON));
    this.#logChannel.post(
      guildId,
      `Verified <@${userId}> as ${escapeLine(input.identity)} (${input.proofMethod === 'record' ? 'record' : 'wallet signature'}).`,
    );
    const guildName = (await guildOf(this.#discord, guildId))?.name ?? 'a server';
    const losers = new Set<string>();
    for (const other of [...sameIdentity, ...sameAddress]) {
      const why =
        other.identity === input.identity
          ? `${input.identity} was proven by another member`
          : `its wallet ${other.address} was proven by another member with a signature`;
      await this.#dropLink(other, why);
      losers.add(other.userId);
      this.#tell(
        other.userId,
        `Your link of ${other.identity} in ${guildName} moved to another Discord account: ${why}. Run /whoami there to see your roles.`,
      );
    }
    for (const loser of losers) {
      this.#inBackground(guildId, () =>
        this.#sync(guildId, loser, 'unlinked', { fresh: false, checkRecords: false, mode: 'immediate' }),
      );
    }
    return { link, moved: losers.size > 0 };
  }

  /** Unlink; an identity that carried (or may carry) a flag is released instead, so its flag holds. */
  async #dropLink(link: LinkRecord, reason: string): Promise<void> {
    const key = { guildId: link.guildId, userId: link.userId, identity: link.identity };
    const nowSec = Math.floor(this.#now() / 1000);
    const mayBeFlagged = link.lastResult === null || carriesFlag(link.lastResult, nowSec);
    const done = mayBeFlagged
      ? await this.#store.releaseLink(key, truncate(reason, MAX_REASON))
      : await this.#store.removeLink(key, truncate(reason, MAX_REASON));
    if (done) {
      this.#logChannel.post(
        link.guildId,
        `Unlinked ${escapeLine(link.identity)} from <@${link.userId}>: ${escapeLine(reason)}.${mayBeFlagged ? ' Any spam or risky flag it carries stays until its own credentials clear.' : ''}`,
      );
    }
  }

  /** A best-effort direct message (members may have DMs closed). */
  #tell(userId: string, text: string): void {
    this.#inBackground('', async () => {
      try {
        await this.#discord.users.send(userId, { content: escapeLine(text), allowedMentions: { parse: [] } });
      } catch (error) {
        this.#logger.info({ err: error, userId }, 'could not send a direct message');
      }
    });
  }

  /** Roles after a fresh proof: the record was just read, so it is not read again. */
  async #syncAfterLink(guildId: string, userId: string): Promise<RoleDiff> {
    try {
      const { applied } = await this.#sync(guildId, userId, 'verify', {
        fresh: false,
        checkRecords: false,
        mode: 'immediate',
      });
      return applied;
    } catch (error) {
      // The link is stored; the next re-check applies the roles.
      this.#logger.error({ err: error, guildId, userId }, 'sync after verification failed');
      return EMPTY_DIFF;
    }
  }

  // --- evaluation ---------------------------------------------------------------------------------

  async #sync(guildId: string, userId: string, cause: string, o: SyncOptions): Promise<MemberSync> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return NO_SYNC;
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) return NO_SYNC;
    const member = await memberOf(guild, userId);
    if (!member) return NO_SYNC;
    const links = await this.#store.getUserLinks(guildId, userId);
    const evaluation = await this.#evaluator.evaluate(memberState(userId, member), links, {
      settings,
      fresh: o.fresh,
      dryRun: false,
      checkRecords: o.checkRecords,
    });
    const { applied, waiting } = await this.#roles.applyMember(guildId, userId, evaluation, o.mode, cause);
    return { applied, waiting };
  }

  /**
   * Every linked member of the guild, page by page, a few at a time; record proofs of each page are
   * re-checked with one batched lookup per 30 identities. False when the walk was cut short.
   */
  async #walkGuild(
    guild: Guild,
    o: EvaluateOptions,
    onMember: (state: MemberState, evaluation: Evaluation) => Promise<void>,
    onError: (userId: string) => void,
  ): Promise<boolean> {
    const allCached = await loadMembers(this.#discord, guild, this.#logger);
    let afterUserId: string | undefined;
    for (;;) {
      if (this.#stopping) return false;
      const page = await this.#store.listLinks(guild.id, {
        limit: LINK_PAGE,
        ...(afterUserId ? { afterUserId } : {}),
      });
      if (page.length === 0) return true;
      const groups = groupByUser(page);
      afterUserId = groups.at(-1)?.userId;
      const batch = o.checkRecords ? this.#evaluator.batchRecords(page, o.fresh) : undefined;
      // Keep an unhandled rejection from firing before the first member awaits the batch.
      batch?.catch(() => undefined);
      await eachLimit(groups, this.#concurrency, async ({ userId, links }) => {
        if (this.#stopping) return;
        try {
          const member = allCached
            ? (guild.members.cache.get(userId) ?? null)
            : await memberOf(guild, userId);
          if (!member) return;
          const state = memberState(userId, member);
          await onMember(
            state,
            await this.#evaluator.evaluate(state, links, { ...o, ...(batch ? { batch } : {}) }),
          );
        } catch (error) {
          this.#logger.warn({ err: error, guildId: guild.id, userId }, 'member re-check failed');
          onError(userId);
        }
      });
    }
  }

  async #periodic(catchUpOnly: boolean): Promise<void> {
    const now = this.#now();
    for (const settings of await this.#store.listGuildSettings({ enabledOnly: true })) {
      if (this.#stopping) return;
      const last = settings.lastFullSyncAt;
      // At start only guilds that missed a run; on the timer, all but those re-checked very recently.
      const due = catchUpOnly
        ? last === null || now - last >= this.#recheckIntervalMs
        : last === null || now - last >= this.#recheckIntervalMs / 2;
      if (!due) continue;
      try {
        await this.recheckGuild(settings.guildId, {
          fresh: false,
          cause: catchUpOnly ? 'catch-up' : 'periodic',
        });
      } catch (error) {
        this.#logger.error({ err: error, guildId: settings.guildId }, 'periodic re-check of a guild failed');
      }
    }
  }

  #inBackground(guildId: string, task: () => Promise<unknown>): void {
    if (this.#stopping) return;
    this.#track(
      guildId,
      task().catch((error: unknown) =>
        this.#logger.error({ err: error, guildId }, 'background gating task failed'),
      ),
    );
  }

  /** Remember work in progress so `idle` and `stop` can wait for it. */
  #track(guildId: string, work: Promise<unknown>): void {
    const set = this.#background.get(guildId) ?? new Set();
    this.#background.set(guildId, set);
    const settled: Promise<unknown> = work
      .catch(() => undefined)
      .finally(() => {
        set.delete(settled);
        if (set.size === 0) this.#background.delete(guildId);
      });
    set.add(settled);
  }
}

function refused(refusal: VerifyRefusal): VerifyResult {
  return { kind: 'refused', refusal };
}

function memberState(userId: string, member: GuildMember | null): MemberState {
  return {
    userId,
    username: member?.user.username ?? null,
    roleIds: new Set(member ? member.roles.cache.keys() : []),
  };
}

function groupByUser(links: LinkRecord[]): { userId: string; links: LinkRecord[] }[] {
  const groups = new Map<string, LinkRecord[]>();
  for (const link of links) {
    const list = groups.get(link.userId) ?? [];
    list.push(link);
    groups.set(link.userId, list);
  }
  return [...groups].map(([userId, list]) => ({ userId, links: list }));
}

function normalisedIdentity(input: string): string {
  try {
    return parseIdentity(input).identity;
  } catch {
    return input.trim().toLowerCase();
  }
}

async function eachLimit<T>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (;;) {
      const item = items[next];
      next += 1;
      if (item === undefined) return;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
