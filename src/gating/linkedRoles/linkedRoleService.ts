/**
 * Linked Roles for each member: write the metadata their proven identity earns to Discord, keep it in
 * step with the credentials on every re-check (never downgraded on a failed lookup), read a record
 * proof's record again, refresh the Discord token, and clear it on /unverify. One identity and one
 * address back one Discord account across the app (the store's registry): a proof that takes them from
 * another account rewrites that account's metadata without them. A flag seen on any identity the
 * account proved stays until that identity's own credentials clear it (the store's holds). Needs no
 * guild, no Manage Roles and no GuildMembers intent: Discord enforces the roles from the metadata.
 */

import type { DiscordOAuthConfig, TokenGrant } from '../../discord/oauth.ts';
import type { Logger } from '../../ops/log.ts';
import type {
  HoldingRefusal,
  ProofMethod,
  RoleConnectionRecord,
  RoleConnectionStore,
} from '../../store/types.ts';
import type { UncountedCredential } from '../rules/credentialSubjects.ts';
import type { Evaluator } from '../rules/evaluation.ts';
import { ConnectionUpdates, linkOf, type ReleaseReason } from './connectionUpdates.ts';
import { putRoleConnection, type RoleConnection, sealToken } from './linkedRoles.ts';
import { type MemberCallFailure, MemberTokens } from './linkedRoleTokens.ts';

export { REFRESH_MARGIN_MS } from './linkedRoleTokens.ts';

const PAGE_SIZE = 200;
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
  /** Identities the proof claims too (a Farcaster name's record: its FID), see `HoldingClaim.aliases`. */
  aliases?: readonly string[];
}

export class LinkedRoleService {
  readonly #o: LinkedRoleServiceOptions;
  readonly #updates: ConnectionUpdates;

  constructor(options: LinkedRoleServiceOptions) {
    this.#o = options;
    this.#updates = new ConnectionUpdates(options);
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
    const outcome = await this.#updates.write(proved.record, tokens, live);
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
      const check = await this.#updates.checkRecord(record, tokens);
      if (check === 'stale') return check;
      if (check === 'released') current = (await this.#o.store.getRoleConnection(record.userId)) ?? record;
    }
    const outcome = await this.#updates.write(current, tokens);
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
   * one of `names`, from Verification.namesOf); an identity that may carry a flag is kept as a hold. False when there was nothing to clear.
   */
  async clear(userId: string, names?: readonly string[]): Promise<boolean> {
    const record = await this.#o.store.getRoleConnection(userId);
    if (!record || (names !== undefined && !names.includes(record.identity))) return false;
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
}
