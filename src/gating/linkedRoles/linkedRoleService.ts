/**
 * Linked Roles for each member: write the metadata their proven identity earns to Discord, keep it in
 * step with the credentials on every re-check (never downgraded on a failed lookup), read a record
 * proof's record again, refresh the Discord token, and clear it on /unverify. One identity and one
 * address back one Discord account across the app (the store's registry): a proof that takes them from
 * another account rewrites that account's metadata without them. A flag seen on any identity the
 * account proved stays until that identity's own credentials clear it (the store's holds). Needs no
 * guild, no Manage Roles and no GuildMembers intent: Discord enforces the roles from the metadata.
 */

import { type DiscordOAuthConfig, fetchCurrentUser, type TokenGrant } from '../../discord/oauth.ts';
import type { Logger } from '../../ops/log.ts';
import type {
  HoldingRefusal,
  LinkRecord,
  ProofMethod,
  RoleConnectionHold,
  RoleConnectionRecord,
  RoleConnectionStore,
} from '../../store/types.ts';
import { parseIdentity } from '../../web3bio/identity.ts';
import { recordNamesDiscordUser } from '../proofs/recordProof.ts';
import type { UncountedCredential } from '../rules/credentialSubjects.ts';
import type { Evaluator, Seen } from '../rules/evaluation.ts';
import { carriesFlag, type IdentityEvidence } from '../rules/rules.ts';
import { putRoleConnection, type RoleConnection, roleConnectionFor, sealToken } from './linkedRoles.ts';
import { type MemberCallFailure, MemberTokens } from './linkedRoleTokens.ts';

export { REFRESH_MARGIN_MS } from './linkedRoleTokens.ts';

const PAGE_SIZE = 200;
/** As GATING_CONFIRM_MINUTES' default. */
const DEFAULT_CONFIRM_MS = 60 * 60_000;
const CLEARED = { platform_name: null, platform_username: null, metadata: {} } as const;

export type LinkedRoleOutcome =
  /** Metadata written (first time or changed). */
  | 'written'
  | 'unchanged'
  /** It got worse (likely human or score lost): held until a later re-check sees it again. */
  | 'loss_pending'
  /** The record no longer names the member (confirmed): the connection proves nothing now, and says so. */
  | 'released'
  /** A lookup failed: Discord keeps what it holds. */
  | 'lookup_failed'
  /** Discord refused the refresh token: marked stale, the member must open the verification URL again. */
  | 'stale'
  /** Discord could not be reached or answered an error: try again at the next re-check. */
  | 'discord_failed';

/** Why a connection stopped backing its account (`releasedReason`); render says it in words. */
export type ReleaseReason =
  /** Its wallet signed for another Discord account. */
  | 'signed_elsewhere'
  /** Another Discord account proved the identity (its record names that account now). */
  | 'proven_elsewhere'
  /** A re-check read the record, twice, without the member's Discord username. */
  | 'record_gone';

/** What a proof on the Linked Roles page came to. */
export type ConnectOutcome =
  /** Written to Discord; `displaced` accounts lost the identity or its wallet to it and were rewritten. */
  | {
      kind: 'connected';
      connection: RoleConnection;
      displaced: number;
      /** Credentials of the proven identity's answer that do not count (another wallet's), with why. */
      uncounted: UncountedCredential[];
    }
  /** The proof is kept, but the metadata could not be written yet: the next re-check writes it. */
  | { kind: 'pending'; why: 'lookup_failed' | MemberCallFailure }
  /** Web3.bio failed before anything was kept. */
  | { kind: 'lookup_failed' }
  /** The registry refused the proof: nothing was kept or written. */
  | { kind: 'refused'; refusal: HoldingRefusal };

export interface LinkedRoleServiceOptions {
  store: RoleConnectionStore;
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes. */
  key: Buffer;
  evaluator: Pick<Evaluator, 'answersOf' | 'readRecord'>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  now: () => number;
  /**
   * A loss (lower metadata, a record that stopped naming the member, a flag hold clearing) is applied
   * once seen at least this far apart (GATING_CONFIRM_MINUTES). Default 60 min.
   */
  confirmMs?: number;
}

/** What the web tier's Linked Roles pages need from the gating module. */
export interface LinkedRolePagesSetup {
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes: seals the session cookie and the stored tokens. */
  key: Buffer;
  evaluator: Pick<Evaluator, 'readRecord'>;
  service: LinkedRoleService;
}

/** The proven identity behind a connection. */
export interface ProvenIdentity {
  identity: string;
  platform: string;
  address: string | null;
  proofMethod: ProofMethod;
}

type Answer = { evidence: IdentityEvidence; seen: Seen };

export class LinkedRoleService {
  readonly #o: LinkedRoleServiceOptions;

  constructor(options: LinkedRoleServiceOptions) {
    this.#o = options;
  }

  get #confirmMs(): number {
    return this.#o.confirmMs ?? DEFAULT_CONFIRM_MS;
  }

  /**
   * After the member signed in (`identify role_connections.write`) and proved `proven` (by its record or
   * a wallet signature; `challengeIssuedAt` for a signature): claim it app-wide, write the metadata, and
   * rewrite the accounts it was taken from. Nothing is kept when the first lookup fails or the claim is
   * refused.
   */
  async connect(
    userId: string,
    grant: TokenGrant,
    proven: ProvenIdentity,
    opts: { challengeIssuedAt?: number } = {},
  ): Promise<ConnectOutcome> {
    const now = this.#o.now();
    const existing = await this.#o.store.getRoleConnection(userId);
    const provenAt =
      existing?.releasedAt === null && existing.identity === proven.identity ? existing.provenAt : now;
    const [live] = await this.#o.evaluator.answersOf([linkOf({ userId, ...proven, provenAt })], true);
    if (!live || live.evidence.credentials === null) return { kind: 'lookup_failed' };
    const reason: ReleaseReason =
      proven.proofMethod === 'signature' ? 'signed_elsewhere' : 'proven_elsewhere';
    const proved = await this.#o.store.proveRoleConnection(
      {
        userId,
        ...proven,
        provenAt,
        sealedAccessToken: sealToken(this.#o.key, grant.accessToken, userId),
        sealedRefreshToken:
          grant.refreshToken === null ? null : sealToken(this.#o.key, grant.refreshToken, userId),
        accessExpiresAt: now + grant.expiresIn * 1_000,
        // Written below; until then a re-check sees nothing written and writes it.
        metadata: null,
        writtenAt: now,
        staleSince: null,
      },
      { reason, ...opts },
    );
    if ('refusal' in proved) {
      this.#o.logger.info(
        { userId, refusal: proved.refusal.code, holderId: proved.refusal.holding.userId },
        'linked role proof refused: another account holds the identity or its wallet',
      );
      return { kind: 'refused', refusal: proved.refusal };
    }
    const tokens = new MemberTokens(this.#o, proved.record, grant.accessToken);
    const outcome = await this.#write(proved.record, tokens, live);
    for (const other of proved.displaced) {
      this.#o.logger.info(
        { userId: other.userId, byUserId: userId, reason },
        'linked role connection released: another account proved its identity or wallet',
      );
      const rewritten = await this.recheck(other).catch((error: unknown) => {
        this.#o.logger.error({ err: error, userId: other.userId }, 'linked role rewrite failed');
        return 'discord_failed' as const;
      });
      if (rewritten !== 'written' && rewritten !== 'unchanged')
        this.#o.logger.warn({ userId: other.userId, outcome: rewritten }, 'linked role rewrite waits');
    }
    if (outcome.kind !== 'written' && outcome.kind !== 'unchanged')
      return { kind: 'pending', why: outcome.kind };
    this.#o.logger.info({ userId }, 'linked role connection written');
    return {
      kind: 'connected',
      connection: outcome.connection,
      displaced: proved.displaced.length,
      uncounted: live.evidence.uncounted ?? [],
    };
  }

  /**
   * One connection brought up to date: a record proof's record read again (released once it is seen,
   * twice, not to name the member), then fresh credentials written. A released connection is rewritten
   * without its identity, its holds' flags still counted.
   */
  async recheck(record: RoleConnectionRecord): Promise<LinkedRoleOutcome> {
    const tokens = new MemberTokens(this.#o, record);
    const unusable = await tokens.ready();
    if (unusable) return unusable;
    let current = record;
    if (record.releasedAt === null && record.proofMethod === 'record') {
      const check = await this.#checkRecord(record, tokens);
      if (check === 'stale') return check;
      if (check === 'released') current = (await this.#o.store.getRoleConnection(record.userId)) ?? record;
    }
    const outcome = await this.#write(current, tokens);
    if (outcome.kind !== 'written' && outcome.kind !== 'unchanged') return outcome.kind;
    if (current !== record) return 'released';
    return outcome.kind === 'unchanged' && outcome.lossPending ? 'loss_pending' : outcome.kind;
  }

  /** Every connection (released ones too: their holds and tokens), a page at a time; one failure never stops the pass. */
  async recheckAll(): Promise<Record<LinkedRoleOutcome, number>> {
    const counts: Record<LinkedRoleOutcome, number> = {
      written: 0,
      unchanged: 0,
      loss_pending: 0,
      released: 0,
      lookup_failed: 0,
      stale: 0,
      discord_failed: 0,
    };
    let after: string | undefined;
    for (;;) {
      const page = await this.#o.store.listRoleConnections({
        limit: PAGE_SIZE,
        ...(after === undefined ? {} : { afterUserId: after }),
      });
      for (const record of page) {
        const outcome = await this.recheck(record).catch((error: unknown) => {
          this.#o.logger.error({ err: error, userId: record.userId }, 'linked role re-check failed');
          return 'discord_failed' as const;
        });
        counts[outcome] += 1;
      }
      if (page.length < PAGE_SIZE) return counts;
      after = page.at(-1)?.userId;
    }
  }

  /**
   * Clear the member's metadata on Discord and forget the connection (all of it, or only when it holds
   * `identity`); an identity that may carry a flag is kept as a hold. False when there was nothing to clear.
   */
  async clear(userId: string, identity?: string): Promise<boolean> {
    const record = await this.#o.store.getRoleConnection(userId);
    if (!record || (identity !== undefined && record.identity !== normalised(identity))) return false;
    await new MemberTokens(this.#o, record).call((token) => putRoleConnection(this.#o.oauth, token, CLEARED));
    await this.#o.store.deleteRoleConnection(userId);
    this.#o.logger.info({ userId }, 'linked role connection cleared');
    return true;
  }

  /**
   * The member deauthorized the app at `at` (Discord's webhook event): Discord already dropped their role
   * connection and tokens, so only the stored connection goes, unless it was written after `at` (the
   * member reconnected before the event arrived). False when there was nothing to forget.
   */
  async forgetDeauthorized(userId: string, at: number): Promise<boolean> {
    const forgotten = await this.#o.store.deleteRoleConnection(userId, { notWrittenAfter: at });
    if (forgotten)
      this.#o.logger.info({ userId }, 'linked role connection removed: the member deauthorized the app');
    return forgotten;
  }

  /**
   * What /whoami and the Linked Roles page show: the proven identity, whether the member must reconnect
   * (Discord refused the token: the app was deauthorized), why it no longer backs the account when it was
   * released (a `ReleaseReason`), and the metadata last written.
   */
  async status(userId: string): Promise<
    | {
        identity: string;
        stale: boolean;
        releasedReason: string | null;
        metadata: Record<string, string> | null;
      }
    | undefined
  > {
    const record = await this.#o.store.getRoleConnection(userId);
    return record
      ? {
          identity: record.identity,
          stale: record.staleSince !== null,
          releasedReason: record.releasedAt === null ? null : (record.releasedReason ?? 'proven_elsewhere'),
          metadata: record.metadata,
        }
      : undefined;
  }

  /**
   * Reads the record of a record-proven connection again with the member's current Discord username. A
   * real answer without the name is noted, and releases the connection when a later re-check at least
   * confirmMs after sees it again; a failed lookup or a "not found" tells nothing.
   */
  async #checkRecord(
    record: RoleConnectionRecord,
    tokens: MemberTokens,
  ): Promise<'kept' | 'released' | 'stale'> {
    let parsed: ReturnType<typeof parseIdentity>;
    try {
      parsed = parseIdentity(record.identity);
    } catch {
      return 'kept';
    }
    const user = await tokens.call((token) => fetchCurrentUser(this.#o.oauth, token));
    if (user === 'stale') return 'stale';
    if (user === 'discord_failed') return 'kept';
    const read = await this.#o.evaluator.readRecord(parsed, true);
    const { userId, recordLossSeenAt } = record;
    if (recordNamesDiscordUser(read, { username: user.value.username })) {
      if (recordLossSeenAt !== null) await this.#o.store.noteRoleConnectionRecordLoss(userId, null);
      return 'kept';
    }
    if (read.failed || (read.profiles.length === 0 && read.domain === null)) return 'kept';
    const now = this.#o.now();
    if (recordLossSeenAt === null) {
      await this.#o.store.noteRoleConnectionRecordLoss(userId, now);
      return 'kept';
    }
    if (now - recordLossSeenAt < this.#confirmMs) return 'kept';
    const reason: ReleaseReason = 'record_gone';
    await this.#o.store.releaseRoleConnection(userId, reason, now);
    this.#o.logger.info(
      { userId, reason },
      'linked role connection released: the record no longer names the member',
    );
    return 'released';
  }

  /**
   * Computes what the connection earns now (its live identity's credentials unless released, plus the
   * flags of its holds), settles the holds, holds back a loss until confirmed, and writes it when it
   * changed. `live`: the live identity's answer when the caller just read it.
   */
  async #write(
    record: RoleConnectionRecord,
    tokens: MemberTokens,
    live?: Answer,
  ): Promise<
    | { kind: 'written'; connection: RoleConnection }
    | { kind: 'unchanged'; connection: RoleConnection; lossPending: boolean }
    | { kind: 'lookup_failed' | MemberCallFailure }
  > {
    const { userId } = record;
    const released = record.releasedAt !== null;
    const holds = await this.#o.store.listRoleConnectionHolds(userId);
    const [liveAnswers, heldAnswers] = await Promise.all([
      released ? [] : live ? [live] : this.#o.evaluator.answersOf([linkOf(record)], true),
      this.#o.evaluator.answersOf(holds.map(holdLinkOf), true),
    ]);
    await this.#settleHolds(holds, heldAnswers);
    // A held identity Web3.bio no longer finds keeps the flags it was held with.
    const keptFlags = holds.flatMap((hold, i) => (heldAnswers[i]?.seen === 'not_found' ? hold.flags : []));
    const fresh = roleConnectionFor({
      username: released ? null : record.identity,
      evidence: liveAnswers.map((a) => a.evidence),
      held: heldAnswers.map((a) => a.evidence),
      keptFlags,
      firstProvenAt: record.provenAt,
      nowSec: Math.floor(this.#o.now() / 1_000),
    });
    if (!fresh) return { kind: 'lookup_failed' };
    // As with roles: a new flag is written at once, a loss only once seen again confirmMs later. A
    // released connection loses what its identity gave at once: the identity is someone else's now.
    const now = this.#o.now();
    const held = released ? null : holdLosses(record.metadata, fresh.metadata);
    const confirmed =
      held !== null && record.lossSeenAt !== null && now - record.lossSeenAt >= this.#confirmMs;
    const lossSeenAt = held === null || confirmed ? null : (record.lossSeenAt ?? now);
    if (lossSeenAt !== record.lossSeenAt) await this.#o.store.noteRoleConnectionLoss(userId, lossSeenAt);
    const connection = held === null || confirmed ? fresh : { ...fresh, metadata: held };
    if (sameMetadata(record.metadata, connection.metadata))
      return { kind: 'unchanged', connection, lossPending: lossSeenAt !== null };
    const put = await tokens.call((token) => putRoleConnection(this.#o.oauth, token, connection));
    if (put === 'stale' || put === 'discord_failed') return { kind: put };
    await this.#o.store.recordRoleConnectionWrite(userId, connection.metadata, now);
    if (live === undefined) this.#o.logger.info({ userId }, 'linked role connection updated');
    return { kind: 'written', connection };
  }

  /**
   * A hold goes once its own credentials, in real answers at least confirmMs apart, show no flag; a
   * flag seen again forgets the earlier sighting. A failure or a "not found" tells nothing.
   */
  async #settleHolds(holds: RoleConnectionHold[], answers: Answer[]): Promise<void> {
    const now = this.#o.now();
    const nowSec = Math.floor(now / 1_000);
    for (const [i, hold] of holds.entries()) {
      const answer = answers[i];
      const credentials = answer?.evidence.credentials ?? null;
      if (answer?.seen !== 'answer' || credentials === null) continue;
      if (carriesFlag(credentials, nowSec)) {
        if (hold.clearSeenAt !== null)
          await this.#o.store.noteRoleConnectionHoldClear(hold.userId, hold.identity, null);
      } else if (hold.clearSeenAt === null) {
        await this.#o.store.noteRoleConnectionHoldClear(hold.userId, hold.identity, now);
      } else if (now - hold.clearSeenAt >= this.#confirmMs) {
        await this.#o.store.removeRoleConnectionHold(hold.userId, hold.identity);
        this.#o.logger.info({ userId: hold.userId }, 'linked role flag hold dropped: its identity cleared');
      }
    }
  }
}

/** The connection's identity as the evaluator reads it, with its real proof method. */
function linkOf(c: ProvenIdentity & { userId: string; provenAt: number }): LinkRecord {
  return {
    guildId: '',
    userId: c.userId,
    identity: c.identity,
    platform: c.platform,
    address: c.address,
    proofMethod: c.proofMethod,
    provenAt: c.provenAt,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
  };
}

/** A held identity proves nothing (its humanity is dropped): only its flags are read. */
function holdLinkOf(hold: RoleConnectionHold): LinkRecord {
  return { ...linkOf({ ...hold, proofMethod: 'record', provenAt: hold.since }), releasedAt: hold.since };
}

/**
 * The metadata with its losses (likely human dropped, a lower humanity score) put back to what Discord
 * holds; null when nothing got worse. Flags (not spam, not risky) are not held.
 */
function holdLosses(
  written: Record<string, string> | null,
  fresh: Record<string, string>,
): Record<string, string> | null {
  if (written === null) return null;
  const held = { ...fresh };
  let losing = false;
  if (written.likely_human === '1' && fresh.likely_human === '0') {
    held.likely_human = '1';
    losing = true;
  }
  if (Number(fresh.humanity_score ?? 0) < Number(written.humanity_score ?? 0)) {
    held.humanity_score = written.humanity_score ?? '0';
    losing = true;
  }
  return losing ? held : null;
}

function sameMetadata(a: Record<string, string> | null, b: Record<string, string>): boolean {
  if (a === null) return false;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((k) => a[k] === b[k]);
}

function normalised(input: string): string {
  try {
    return parseIdentity(input).identity;
  } catch {
    return input.trim().toLowerCase();
  }
}
