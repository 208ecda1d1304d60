/**
 * The gating service: proves identities (the identity's own record, or a wallet signature), evaluates
 * the guild's rules on each proven identity's credentials, and queues the role changes that follow.
 * It never rewards an unproven claim, never removes a role because a lookup failed, and records why
 * every change happened.
 */
import {
  type Client,
  DiscordAPIError,
  GatewayIntentBits,
  type Guild,
  type GuildMember,
  PermissionFlagsBits,
} from 'discord.js';
import type { Logger } from '../log.ts';
import { escapeLine, truncate } from '../render/safe.ts';
import type {
  GatingStore,
  GuildSettings,
  LinkKey,
  LinkRecord,
  NonceRecord,
  ProofMethod,
} from '../store/types.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { InvalidIdentityError, NotFoundError } from '../web3bio/errors.ts';
import { type IdentityKind, type ParsedIdentity, parseBatchId, parseIdentity } from '../web3bio/identity.ts';
import type { CredentialSet, DomainInfo, Fetched, PlatformSegment, Profile } from '../web3bio/types.ts';
import { type RoleInfo, type RoleProblem, roleProblems } from './hierarchy.ts';
import { recordNamesDiscordUser } from './recordProof.ts';
import { LogChannel, REASON_PREFIX, RoleWorker, type RoleWorkerOptions } from './roleWorker.ts';
import {
  diffRoles,
  evaluateRules,
  type GatingRules,
  type IdentityEvidence,
  type RoleDecision,
  type RoleDiff,
} from './rules.ts';
import { IntervalScheduler, type RecheckScheduler } from './scheduler.ts';
import { createChallenge, type SiweConfig } from './siwe.ts';

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
  worker?: Pick<RoleWorkerOptions, 'pollMs' | 'maxAttempts' | 'backoffMs' | 'blockMs'>;
  /** How long log-channel lines are gathered into one message. Default 1000 ms. */
  logFlushMs?: number;
  /** Members evaluated at once during a guild re-check. Default 16. */
  recheckConcurrency?: number;
}

export type VerifyResult =
  | { kind: 'linked'; link: LinkRecord; diff: RoleDiff }
  | { kind: 'challenge'; url: string; expiresAt: number; address: string }
  | { kind: 'refused'; reason: string };

export interface MemberReport {
  userId: string;
  links: LinkRecord[];
  evidence: IdentityEvidence[];
  decisions: RoleDecision[];
  currentRoleIds: string[];
  diff: RoleDiff;
}

export interface GuildPreview {
  members: number;
  addCount: number;
  removeCount: number;
  unknownCount: number;
  /** At most 10 members who would change. */
  sample: { userId: string; add: string[]; remove: string[]; because: string[] }[];
}

export interface GuildStatus {
  enabled: boolean;
  settings: GuildSettings | null;
  manageRoles: boolean;
  guildMembersIntent: boolean;
  problems: RoleProblem[];
  lastFullSyncAt: number | null;
  queueLength: number;
  linkedMembers: number;
}

export interface SetupInput {
  humanRoleId: string;
  spamRoleId: string | null;
  riskyRoleId: string | null;
  minScore: number | null;
  logChannelId: string | null;
  spamRemovesHuman?: boolean;
}

export interface RecheckResult {
  members: number;
  changes: number;
  failures: number;
  unlinked: number;
}

/** At most this many proven identities per member and guild, which bounds the lookups one member costs. */
export const MAX_LINKS_PER_MEMBER = 5;
const LINK_PAGE = 500;
const PREVIEW_SAMPLE = 10;
const MAX_REASON = 400;
const STOP_GRACE_MS = 10_000;
const EMPTY_DIFF: RoleDiff = { add: [], remove: [] };
const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** The platform route that holds an identity's own profile. */
const PROFILE_SEGMENT: Partial<Record<IdentityKind, PlatformSegment>> = {
  ens: 'ens',
  basenames: 'basenames',
  linea: 'linea',
  farcaster: 'farcaster',
  'farcaster-fid': 'farcaster',
  lens: 'lens',
  sns: 'solana',
  'solana-address': 'solana',
  unstoppabledomains: 'unstoppabledomains',
  dotbit: 'dotbit',
};
/** Names whose ENS-style text records `/domain` reads. */
const DOMAIN_KINDS = new Set<IdentityKind>(['ens', 'basenames', 'linea']);

interface MemberState {
  userId: string;
  /** null when the member is not in the guild (then records cannot be compared). */
  username: string | null;
  roleIds: ReadonlySet<string>;
}

/** What a batch said about a record link's identity. */
type BatchedRecord = { kind: 'profile'; profile: Profile } | { kind: 'dropped' } | { kind: 'failed' };

interface EvaluateOptions {
  settings: GuildSettings;
  fresh: boolean;
  /** Read only: no link removed, no check recorded. */
  dryRun: boolean;
  checkRecords: boolean;
  batch?: Promise<Map<string, BatchedRecord>>;
}

interface Evaluation {
  links: LinkRecord[];
  evidence: IdentityEvidence[];
  decisions: RoleDecision[];
  diff: RoleDiff;
  unlinked: number;
  /** A credential lookup failed, so some decisions are "keep as is". */
  failed: boolean;
}

interface RecordRead {
  profiles: Profile[];
  domain: DomainInfo | null;
  /** A lookup failed (other than "not found"): absence proves nothing. */
  failed: boolean;
}

/** The gating module's core: verification, evaluation, role queue and re-checks. */
export class GatingService {
  readonly #store: GatingStore;
  readonly #web3bio: Web3BioClient;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #siwe: SiweConfig;
  readonly #recheckIntervalMs: number;
  readonly #now: () => number;
  readonly #scheduler: RecheckScheduler;
  readonly #worker: RoleWorker;
  readonly #logChannel: LogChannel;
  readonly #concurrency: number;
  /** Background work (setup re-checks, follow-up syncs) per guild, awaited by `idle` and `stop`. */
  readonly #background = new Map<string, Set<Promise<unknown>>>();
  readonly #rechecks = new Map<string, { fresh: boolean; run: Promise<RecheckResult> }>();
  #started = false;
  #stopping = false;

  constructor(options: GatingServiceOptions) {
    this.#store = options.store;
    this.#web3bio = options.web3bio;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#siwe = options.siwe;
    this.#recheckIntervalMs = options.recheckIntervalMs;
    this.#now = options.now ?? Date.now;
    this.#concurrency = Math.max(1, options.recheckConcurrency ?? 16);
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
  }

  /** Save the guild's rules when every role can be managed; then re-check the whole guild with fresh lookups. */
  async setup(
    guildId: string,
    input: SetupInput,
    actorId: string,
  ): Promise<{ settings: GuildSettings | null; problems: RoleProblem[] }> {
    const guild = await this.#guild(guildId);
    if (!guild) throw new Error('the bot is not in this server');
    const roleIds = [input.humanRoleId, input.spamRoleId, input.riskyRoleId].filter((r) => r !== null);
    const problems = this.#roleProblems(guild, roleIds);
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
    this.#worker.unblock(guildId);
    this.#inBackground(guildId, () => this.recheckGuild(guildId, { fresh: true, cause: 'setup' }));
    return { settings, problems: [] };
  }

  /** Turn gating off in a guild (roles stay as they are); false when it was never set up. */
  async disable(guildId: string, actorId: string): Promise<boolean> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return false;
    await this.#store.saveGuildSettings(
      {
        guildId,
        enabled: false,
        humanRoleId: settings.humanRoleId,
        spamRoleId: settings.spamRoleId,
        riskyRoleId: settings.riskyRoleId,
        minScore: settings.minScore,
        spamRemovesHuman: settings.spamRemovesHuman,
        logChannelId: settings.logChannelId,
      },
      { userId: actorId, reason: 'gating disabled' },
    );
    return true;
  }

  /** The guild's gating settings, if it was ever set up. */
  getSettings(guildId: string): Promise<GuildSettings | undefined> {
    return this.#store.getGuildSettings(guildId);
  }

  /**
   * Start proving an identity: linked at once when its own record names the member, otherwise a one-time
   * signing link for its Ethereum address. Nothing is stored when a lookup fails.
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
        return refused(`That doesn't look like a web3 identity: ${error.reason}.`);
      throw error;
    }
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) {
      return refused(
        'Role gating is not switched on in this server. An admin can set it up with /gating setup.',
      );
    }
    const existing = await this.#store.getUserLinks(guildId, user.id);
    const others = existing.filter((l) => l.identity !== parsed.identity);
    if (others.length >= MAX_LINKS_PER_MEMBER) {
      return refused(
        `You already have ${others.length} verified identities here. Remove one with /unverify first.`,
      );
    }

    const name = parsed.identity;
    if (parsed.kind === 'evm-address') return this.#challenge(guildId, user.id, name, name);

    const read = await this.#readRecord(parsed, true);
    if (read.failed) {
      return refused(`Web3.bio could not be reached to check ${name}. Nothing was changed: try again later.`);
    }
    if (recordNamesDiscordUser(read, user)) {
      const link = await this.#link(
        {
          guildId,
          userId: user.id,
          identity: name,
          platform: String(parsed.platform),
          address: evmAddressOf(read),
          proofMethod: 'record',
        },
        `the discord record of ${name} names ${user.username}`,
      );
      const diff = await this.#syncAfterLink(guildId, user.id);
      return { kind: 'linked', link, diff };
    }
    if (read.profiles.length === 0 && read.domain === null) {
      return refused(`Web3.bio has no profile for ${name}. Check the spelling, or verify a wallet address.`);
    }
    const address = evmAddressOf(read);
    if (!address) {
      return refused(
        `${name} has no Ethereum address to sign with, and its discord record does not name you. ` +
          `Set its discord record (profile link or com.discord text record) to ${user.username}, then run /verify again.`,
      );
    }
    return this.#challenge(guildId, user.id, name, address);
  }

  /** The verify server's onVerified: store the signature link, then sync the member. */
  async completeSignature(result: { record: NonceRecord; address: string }): Promise<void> {
    const { record } = result;
    let platform = 'ethereum';
    try {
      platform = String(parseIdentity(record.identity).platform);
    } catch {
      // The identity was parsed when the challenge was made; keep the link even if parsing rules changed.
    }
    await this.#link(
      {
        guildId: record.guildId,
        userId: record.userId,
        identity: record.identity,
        platform,
        address: result.address.toLowerCase(),
        proofMethod: 'signature',
      },
      `wallet signature by ${result.address.toLowerCase()}`,
    );
    await this.#syncAfterLink(record.guildId, record.userId);
  }

  /** Remove the member's links (one identity, or all); roles follow. Returns how many were removed. */
  async unverify(guildId: string, userId: string, identity?: string): Promise<number> {
    const links = await this.#store.getUserLinks(guildId, userId);
    const wanted = identity === undefined ? undefined : normalisedIdentity(identity);
    let removed = 0;
    for (const link of links) {
      if (wanted !== undefined && link.identity !== wanted) continue;
      if (await this.#unlink(link, 'removed by the member with /unverify')) removed += 1;
    }
    if (removed > 0) await this.syncMember(guildId, userId, 'unverify');
    return removed;
  }

  /** A member's proven identities, their credentials, and the roles the rules want against the roles held. */
  async report(guildId: string, userId: string, opts: { fresh?: boolean } = {}): Promise<MemberReport> {
    const [settings, links] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.getUserLinks(guildId, userId),
    ]);
    const guild = await this.#guild(guildId);
    const member = guild ? await this.#member(guild, userId) : null;
    const state = memberState(userId, member);
    const currentRoleIds = [...state.roleIds].filter((id) => id !== guildId);
    if (!settings) {
      const evidence = await Promise.all(links.map((l) => this.#credentialsOf(l, opts.fresh === true, true)));
      return { userId, links, evidence, decisions: [], currentRoleIds, diff: EMPTY_DIFF };
    }
    const evaluation = await this.#evaluate(state, links, {
      settings,
      fresh: opts.fresh === true,
      dryRun: true,
      checkRecords: false,
    });
    return {
      userId,
      links,
      evidence: evaluation.evidence,
      decisions: evaluation.decisions,
      currentRoleIds,
      diff: evaluation.diff,
    };
  }

  /** Re-evaluate one member and queue the role changes; returns them. */
  async syncMember(
    guildId: string,
    userId: string,
    cause: string,
    opts: { fresh?: boolean } = {},
  ): Promise<RoleDiff> {
    return this.#sync(guildId, userId, cause, { fresh: opts.fresh === true, checkRecords: true });
  }

  /** Re-evaluate every linked member of the guild (records re-checked in batches) and queue the changes. */
  async recheckGuild(
    guildId: string,
    opts: { fresh?: boolean; cause?: string } = {},
  ): Promise<RecheckResult> {
    const fresh = opts.fresh === true;
    const running = this.#rechecks.get(guildId);
    // One walk per guild at a time: a request the running walk already covers joins it.
    if (running && (running.fresh || !fresh)) return running.run;
    const run = (async () => {
      if (running) await running.run.catch(() => undefined);
      return this.#recheck(guildId, fresh, opts.cause ?? 'recheck');
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

  async #recheck(guildId: string, fresh: boolean, cause: string): Promise<RecheckResult> {
    const totals: RecheckResult = { members: 0, changes: 0, failures: 0, unlinked: 0 };
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return totals;
    const complete = await this.#walkGuild(
      guildId,
      { settings, fresh, dryRun: false, checkRecords: true },
      async (state, evaluation) => {
        totals.members += 1;
        totals.unlinked += evaluation.unlinked;
        if (evaluation.failed) totals.failures += 1;
        totals.changes += await this.#enqueue(guildId, state.userId, evaluation.diff, cause);
      },
      () => {
        totals.failures += 1;
      },
    );
    if (complete) await this.#store.markFullSync(guildId, this.#now());
    this.#logger.info({ guildId, cause, ...totals }, 'guild re-checked');
    return totals;
  }

  /** A dry run of a guild re-check (cached lookups, nothing written). */
  async preview(guildId: string): Promise<GuildPreview> {
    const result: GuildPreview = { members: 0, addCount: 0, removeCount: 0, unknownCount: 0, sample: [] };
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return result;
    await this.#walkGuild(
      guildId,
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

  /** Permissions, intents, hierarchy problems, last sync and queue length of a guild. */
  async status(guildId: string): Promise<GuildStatus> {
    const [settings, queueLength, linkedMembers] = await Promise.all([
      this.#store.getGuildSettings(guildId),
      this.#store.pendingRoleChanges(guildId),
      this.#store.countLinkedUsers(guildId),
    ]);
    const guild = await this.#guild(guildId);
    const me = guild?.members.me ?? null;
    const roleIds = settings ? [settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId] : [];
    return {
      enabled: settings?.enabled ?? false,
      settings: settings ?? null,
      manageRoles: me?.permissions.has(PermissionFlagsBits.ManageRoles) ?? false,
      guildMembersIntent: this.#discord.options.intents.has(GatewayIntentBits.GuildMembers),
      problems: guild
        ? this.#roleProblems(
            guild,
            roleIds.filter((r) => r !== null),
          )
        : [],
      lastFullSyncAt: settings?.lastFullSyncAt ?? null,
      queueLength,
      linkedMembers,
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

  /** Start the role worker (resuming pending changes left by a crash) and the periodic re-check. */
  start(): void {
    if (this.#started || this.#stopping) return;
    this.#started = true;
    this.#worker
      .resume()
      .catch((error: unknown) => this.#logger.error({ err: error }, 'could not resume role changes'));
    this.#scheduler.start(() => this.#periodic(false));
    this.#inBackground('', () => this.#periodic(true));
  }

  /** Stop taking work, let in-progress role edits finish (bounded), stop timers. */
  async stop(): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.#scheduler.stop();
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

  // --- verification -------------------------------------------------------------------------------

  async #challenge(
    guildId: string,
    userId: string,
    identity: string,
    address: string,
  ): Promise<VerifyResult> {
    const challenge = await createChallenge(this.#store, this.#siwe, {
      guildId,
      userId,
      identity,
      address: address as `0x${string}`,
    });
    return {
      kind: 'challenge',
      url: challenge.url,
      expiresAt: challenge.expiresAt,
      address: address.toLowerCase(),
    };
  }

  /** Store a proven link; the identity moves away from any other member who had proven it before. */
  async #link(
    input: Omit<LinkRecord, 'provenAt' | 'lastCheckAt' | 'lastCheckOk' | 'lastResult'> & {
      proofMethod: ProofMethod;
    },
    reason: string,
  ): Promise<LinkRecord> {
    const link = await this.#store.saveLink(
      { ...input, provenAt: this.#now() },
      truncate(reason, MAX_REASON),
    );
    this.#logChannel.post(
      input.guildId,
      `Verified <@${input.userId}> as ${escapeLine(input.identity)} (${input.proofMethod === 'record' ? 'record' : 'wallet signature'}).`,
    );
    for (const other of await this.#store.getIdentityLinks(input.guildId, input.identity)) {
      if (other.userId === input.userId) continue;
      await this.#unlink(other, `${input.identity} was proven by another member`);
      this.#inBackground(input.guildId, () => this.syncMember(input.guildId, other.userId, 'unlinked'));
    }
    return link;
  }

  async #unlink(link: LinkRecord, reason: string): Promise<boolean> {
    const key: LinkKey = { guildId: link.guildId, userId: link.userId, identity: link.identity };
    const removed = await this.#store.removeLink(key, truncate(reason, MAX_REASON));
    if (removed) {
      this.#logChannel.post(
        link.guildId,
        `Unlinked ${escapeLine(link.identity)} from <@${link.userId}>: ${escapeLine(reason)}.`,
      );
    }
    return removed;
  }

  /** Roles after a fresh proof: the record was just read, so it is not read again. */
  async #syncAfterLink(guildId: string, userId: string): Promise<RoleDiff> {
    try {
      return await this.#sync(guildId, userId, 'verify', { fresh: false, checkRecords: false });
    } catch (error) {
      // The link is stored; the next re-check applies the roles.
      this.#logger.error({ err: error, guildId, userId }, 'sync after verification failed');
      return EMPTY_DIFF;
    }
  }

  /** The identity's own profile (and ENS-style text records), as evidence for a record proof. */
  async #readRecord(parsed: ParsedIdentity, fresh: boolean): Promise<RecordRead> {
    const segment = PROFILE_SEGMENT[parsed.kind];
    const [profile, domain] = await Promise.all([
      segment ? settle(this.#web3bio.getPlatformProfile(segment, parsed.identity, { fresh })) : null,
      DOMAIN_KINDS.has(parsed.kind) ? settle(this.#web3bio.getDomain(parsed.identity, { fresh })) : null,
    ]);
    const failed = profile?.kind === 'failed' || domain?.kind === 'failed';
    return {
      profiles: profile?.kind === 'ok' ? [profile.data] : [],
      domain: domain?.kind === 'ok' ? domain.data : null,
      failed,
    };
  }

  /** true: the record still names the member; false: it does not (lookups worked); null: unknown. */
  async #recordStillNames(
    link: LinkRecord,
    username: string | null,
    o: EvaluateOptions,
  ): Promise<boolean | null> {
    if (username === null) return null;
    const batched = o.batch ? (await o.batch).get(link.identity) : undefined;
    if (batched?.kind === 'failed') return null;
    if (batched?.kind === 'profile') {
      if (recordNamesDiscordUser({ profiles: [batched.profile], domain: null }, { username })) return true;
    }
    // Not in the batched profile: the text record may still name them, so look before removing anything.
    let parsed: ParsedIdentity;
    try {
      parsed = parseIdentity(link.identity);
    } catch {
      return null;
    }
    const read = await this.#readRecord(parsed, o.fresh);
    if (recordNamesDiscordUser(read, { username })) return true;
    return read.failed ? null : false;
  }

  // --- evaluation ---------------------------------------------------------------------------------

  async #sync(
    guildId: string,
    userId: string,
    cause: string,
    o: { fresh: boolean; checkRecords: boolean },
  ): Promise<RoleDiff> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return EMPTY_DIFF;
    const guild = await this.#guild(guildId);
    if (!guild) return EMPTY_DIFF;
    const member = await this.#member(guild, userId);
    if (!member) return EMPTY_DIFF;
    const links = await this.#store.getUserLinks(guildId, userId);
    const evaluation = await this.#evaluate(memberState(userId, member), links, {
      settings,
      fresh: o.fresh,
      dryRun: false,
      checkRecords: o.checkRecords,
    });
    await this.#enqueue(guildId, userId, evaluation.diff, cause);
    return evaluation.diff;
  }

  async #evaluate(member: MemberState, links: LinkRecord[], o: EvaluateOptions): Promise<Evaluation> {
    const verdicts = await Promise.all(
      links.map(async (link) => {
        if (!o.checkRecords || link.proofMethod !== 'record') return true;
        const names = await this.#recordStillNames(link, member.username, o);
        if (names !== false) return true;
        if (!o.dryRun) {
          await this.#unlink(
            link,
            `the discord record of ${link.identity} no longer names ${member.username}`,
          );
        }
        return false;
      }),
    );
    const kept = links.filter((_, i) => verdicts[i]);
    const evidence = await Promise.all(kept.map((link) => this.#credentialsOf(link, o.fresh, o.dryRun)));
    const rules = rulesOf(o.settings);
    let decisions = evaluateRules(rules, evidence, Math.floor(this.#now() / 1000));
    if (kept.length === 0) decisions = keepFlags(decisions, rules);
    return {
      links: kept,
      evidence,
      decisions,
      diff: diffRoles(decisions, member.roleIds),
      unlinked: links.length - kept.length,
      failed: evidence.some((e) => e.credentials === null),
    };
  }

  /** A link's credentials; null when the lookup failed (then nothing is removed on its account). */
  async #credentialsOf(link: LinkRecord, fresh: boolean, dryRun: boolean): Promise<IdentityEvidence> {
    const key: LinkKey = { guildId: link.guildId, userId: link.userId, identity: link.identity };
    let credentials: CredentialSet | null;
    try {
      const answer = await this.#web3bio.getCredentials(link.identity, { fresh });
      // A stale answer means the upstream failed just now: treat it as the failure it is.
      credentials = answer.stale ? null : answer.data;
    } catch (error) {
      // "Not found" is an answer: the identity has no credentials.
      credentials = error instanceof NotFoundError ? { isHuman: [], isRisky: [], isSpam: [] } : null;
      if (credentials === null) {
        this.#logger.warn(
          { err: error, guildId: link.guildId, identity: link.identity },
          'credential lookup failed',
        );
      }
    }
    if (!dryRun) {
      const check = credentials
        ? { at: this.#now(), ok: true, result: credentials }
        : { at: this.#now(), ok: false };
      await this.#store
        .recordLinkCheck(key, check)
        .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not record a link check'));
    }
    return { identity: link.identity, credentials };
  }

  async #enqueue(guildId: string, userId: string, diff: RoleDiff, cause: string): Promise<number> {
    const changes = [
      ...diff.add.map((c) => ({ ...c, op: 'add' as const })),
      ...diff.remove.map((c) => ({ ...c, op: 'remove' as const })),
    ];
    for (const change of changes) {
      await this.#store.enqueueRoleChange({
        guildId,
        userId,
        roleId: change.roleId,
        op: change.op,
        reason: truncate(`${REASON_PREFIX}${change.because}`, MAX_REASON),
      });
    }
    if (changes.length > 0) {
      this.#logger.debug({ guildId, userId, cause, changes: changes.length }, 'role changes queued');
      this.#worker.kick(guildId);
    }
    return changes.length;
  }

  /**
   * Every linked member of the guild, page by page, a few at a time; record proofs of each page are
   * re-checked with one batched lookup per 30 identities. False when the walk was cut short.
   */
  async #walkGuild(
    guildId: string,
    o: EvaluateOptions,
    onMember: (state: MemberState, evaluation: Evaluation) => Promise<void>,
    onError: (userId: string) => void,
  ): Promise<boolean> {
    const guild = await this.#guild(guildId);
    if (!guild) return false;
    const allCached = await this.#loadMembers(guild);
    let afterUserId: string | undefined;
    for (;;) {
      if (this.#stopping) return false;
      const page = await this.#store.listLinks(guildId, {
        limit: LINK_PAGE,
        ...(afterUserId ? { afterUserId } : {}),
      });
      if (page.length === 0) return true;
      const groups = groupByUser(page);
      afterUserId = groups.at(-1)?.userId;
      const batch = o.checkRecords ? this.#batchRecords(page, o.fresh) : undefined;
      // Keep an unhandled rejection from firing before the first member awaits the batch.
      batch?.catch(() => undefined);
      await eachLimit(groups, this.#concurrency, async ({ userId, links }) => {
        if (this.#stopping) return;
        try {
          const member = allCached
            ? (guild.members.cache.get(userId) ?? null)
            : await this.#member(guild, userId);
          if (!member) return;
          const state = memberState(userId, member);
          await onMember(state, await this.#evaluate(state, links, { ...o, ...(batch ? { batch } : {}) }));
        } catch (error) {
          this.#logger.warn({ err: error, guildId, userId }, 'member re-check failed');
          onError(userId);
        }
      });
    }
  }

  async #batchRecords(links: LinkRecord[], fresh: boolean): Promise<Map<string, BatchedRecord>> {
    const identityById = new Map<string, string>();
    for (const link of links) {
      if (link.proofMethod !== 'record') continue;
      try {
        identityById.set(parseBatchId(link.identity).id, link.identity);
      } catch {
        // Platforms the batch route does not take are checked one by one.
      }
    }
    const result = new Map<string, BatchedRecord>();
    if (identityById.size === 0) return result;
    try {
      for (const entry of await this.#web3bio.getProfilesBatch([...identityById.keys()], { fresh })) {
        const identity = identityById.get(entry.input);
        if (identity === undefined) continue;
        result.set(identity, entry.result ? { kind: 'profile', profile: entry.result } : { kind: 'dropped' });
      }
    } catch (error) {
      this.#logger.warn({ err: error, identities: identityById.size }, 'batched record check failed');
      for (const identity of identityById.values()) result.set(identity, { kind: 'failed' });
    }
    return result;
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

  // --- Discord ------------------------------------------------------------------------------------

  async #guild(guildId: string): Promise<Guild | null> {
    const cached = this.#discord.guilds.cache.get(guildId);
    if (cached) return cached;
    try {
      return await this.#discord.guilds.fetch(guildId);
    } catch {
      return null;
    }
  }

  async #member(guild: Guild, userId: string): Promise<GuildMember | null> {
    const cached = guild.members.cache.get(userId);
    if (cached) return cached;
    try {
      return await guild.members.fetch(userId);
    } catch (error) {
      if (error instanceof DiscordAPIError && (error.status === 404 || Number(error.code) === 10_007))
        return null;
      throw error;
    }
  }

  /**
   * Fill the member cache with one gateway request per walk, so each member's roles come from the cache
   * (no request per member). False without the GuildMembers intent (Discord would never answer).
   */
  async #loadMembers(guild: Guild): Promise<boolean> {
    if (!this.#discord.options.intents.has(GatewayIntentBits.GuildMembers)) return false;
    try {
      await guild.members.fetch({ time: 30_000 });
      return true;
    } catch (error) {
      this.#logger.warn(
        { err: error, guildId: guild.id },
        'could not fetch the member list; fetching members one by one',
      );
      return false;
    }
  }

  #roleProblems(guild: Guild, roleIds: string[]): RoleProblem[] {
    const me = guild.members.me;
    const roles = new Map<string, RoleInfo>();
    for (const id of roleIds) {
      const role = guild.roles.cache.get(id);
      if (role)
        roles.set(id, { id: role.id, name: role.name, position: role.position, managed: role.managed });
    }
    return roleProblems({
      guildId: guild.id,
      roleIds,
      roles,
      botHighestPosition: me?.roles.highest.position ?? 0,
      botCanManageRoles: me?.permissions.has(PermissionFlagsBits.ManageRoles) ?? false,
    });
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

function refused(reason: string): VerifyResult {
  return { kind: 'refused', reason };
}

function rulesOf(settings: GuildSettings): GatingRules {
  return {
    humanRoleId: settings.humanRoleId,
    spamRoleId: settings.spamRoleId,
    riskyRoleId: settings.riskyRoleId,
    minScore: settings.minScore,
    spamRemovesHuman: settings.spamRemovesHuman,
  };
}

/**
 * With no proven identity left, the spam and risky roles stay as they are: otherwise a flagged member
 * could shed a flag by unlinking the identity that carries it. Moderators remove flags by hand.
 */
function keepFlags(decisions: RoleDecision[], rules: GatingRules): RoleDecision[] {
  return decisions.map((d) =>
    d.want === false && d.roleId !== rules.humanRoleId
      ? { ...d, want: null, because: 'no proven identity: a flag stays until a moderator removes it' }
      : d,
  );
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

function evmAddressOf(read: RecordRead): string | null {
  const candidates = [...read.profiles.map((p) => p.address), read.domain?.resolvedAddress ?? null];
  const address = candidates.find((a): a is string => typeof a === 'string' && EVM_ADDRESS.test(a));
  return address ? address.toLowerCase() : null;
}

function normalisedIdentity(input: string): string {
  try {
    return parseIdentity(input).identity;
  } catch {
    return input.trim().toLowerCase();
  }
}

type Settled<T> = { kind: 'ok'; data: T } | { kind: 'missing' } | { kind: 'failed' };

/** A lookup's outcome: a stale answer (the upstream just failed) counts as a failure. */
async function settle<T>(lookup: Promise<Fetched<T>>): Promise<Settled<T>> {
  try {
    const answer = await lookup;
    return answer.stale ? { kind: 'failed' } : { kind: 'ok', data: answer.data };
  } catch (error) {
    return error instanceof NotFoundError ? { kind: 'missing' } : { kind: 'failed' };
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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
