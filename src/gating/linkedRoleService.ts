/**
 * Linked Roles for each member: write the metadata their proven identity earns to Discord, keep it in
 * step with the credentials on every re-check (never downgraded on a failed lookup), refresh the
 * Discord token before it expires, and clear it on /unverify. Needs no guild, no Manage Roles and no
 * GuildMembers intent: Discord enforces the roles from the metadata.
 */
import type { Logger } from '../log.ts';
import type { ProofMethod, RoleConnectionRecord, RoleConnectionStore } from '../store/types.ts';
import { parseIdentity } from '../web3bio/identity.ts';
import { type DiscordOAuthConfig, DiscordOAuthError, refreshGrant, type TokenGrant } from './discordOAuth.ts';
import type { Evaluator } from './evaluation.ts';
import {
  openToken,
  putRoleConnection,
  type RoleConnection,
  roleConnectionFor,
  sealToken,
} from './linkedRoles.ts';

/** Refresh the access token when it has less than this left (re-checks run at most a day apart by default). */
export const REFRESH_MARGIN_MS = 2 * 86_400_000;
const PAGE_SIZE = 200;
/** As GATING_CONFIRM_MINUTES' default. */
const DEFAULT_CONFIRM_MS = 60 * 60_000;

export type LinkedRoleOutcome =
  /** Metadata written (first time or changed). */
  | 'written'
  | 'unchanged'
  /** It got worse (likely human or score lost): held until a later re-check sees it again. */
  | 'loss_pending'
  /** A lookup failed: Discord keeps what it holds. */
  | 'lookup_failed'
  /** Discord refused the refresh token: marked stale, the member must open the verification URL again. */
  | 'stale'
  /** Discord could not be reached or answered an error: try again at the next re-check. */
  | 'discord_failed';

export interface LinkedRoleServiceOptions {
  store: RoleConnectionStore;
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes. */
  key: Buffer;
  evaluator: Pick<Evaluator, 'evidenceOf'>;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  now: () => number;
  /** A loss is written once seen at least this far apart (GATING_CONFIRM_MINUTES). Default 60 min. */
  confirmMs?: number;
}

/** The proven identity behind a connection. */
export interface ProvenIdentity {
  identity: string;
  platform: string;
  address: string | null;
  proofMethod: ProofMethod;
}

export class LinkedRoleService {
  readonly #o: LinkedRoleServiceOptions;

  constructor(options: LinkedRoleServiceOptions) {
    this.#o = options;
  }

  /**
   * After the member signed in (`identify role_connections.write`) and proved `proven` (by its record or
   * a wallet signature): write the metadata and keep the connection; returns what was written. Nothing
   * is written or kept when a lookup failed.
   */
  async connect(
    userId: string,
    grant: TokenGrant,
    proven: ProvenIdentity,
  ): Promise<RoleConnection | 'lookup_failed'> {
    const now = this.#o.now();
    const existing = await this.#o.store.getRoleConnection(userId);
    const provenAt = existing?.identity === proven.identity ? existing.provenAt : now;
    const connection = await this.#metadataFor({ ...proven, provenAt });
    if (!connection) return 'lookup_failed';
    await putRoleConnection(this.#o.oauth, grant.accessToken, connection);
    await this.#o.store.saveRoleConnection({
      userId,
      ...proven,
      provenAt,
      sealedAccessToken: sealToken(this.#o.key, grant.accessToken, userId),
      sealedRefreshToken:
        grant.refreshToken === null ? null : sealToken(this.#o.key, grant.refreshToken, userId),
      accessExpiresAt: now + grant.expiresIn * 1_000,
      metadata: connection.metadata,
      writtenAt: now,
      staleSince: null,
    });
    this.#o.logger.info({ userId }, 'linked role connection written');
    return connection;
  }

  /** One connection brought up to date with fresh credentials. */
  async recheck(record: RoleConnectionRecord): Promise<LinkedRoleOutcome> {
    const token = await this.#accessToken(record);
    if (token === 'stale' || token === 'discord_failed') return token;
    const fresh = await this.#metadataFor(record);
    if (!fresh) return 'lookup_failed';
    // As with roles: a new flag is written at once, a loss only once seen again confirmMs later.
    const now = this.#o.now();
    const held = holdLosses(record.metadata, fresh.metadata);
    const confirmed =
      held !== null &&
      record.lossSeenAt !== null &&
      now - record.lossSeenAt >= (this.#o.confirmMs ?? DEFAULT_CONFIRM_MS);
    const lossSeenAt = held === null || confirmed ? null : (record.lossSeenAt ?? now);
    if (lossSeenAt !== record.lossSeenAt)
      await this.#o.store.noteRoleConnectionLoss(record.userId, lossSeenAt);
    const connection = held === null || confirmed ? fresh : { ...fresh, metadata: held };
    if (sameMetadata(record.metadata, connection.metadata))
      return lossSeenAt === null ? 'unchanged' : 'loss_pending';
    try {
      await putRoleConnection(this.#o.oauth, token, connection);
    } catch (error) {
      return this.#discordFailure(record.userId, error);
    }
    await this.#o.store.recordRoleConnectionWrite(record.userId, connection.metadata, now);
    this.#o.logger.info({ userId: record.userId }, 'linked role connection updated');
    return 'written';
  }

  /** Every live connection, a page at a time; one failure never stops the pass. */
  async recheckAll(): Promise<Record<LinkedRoleOutcome, number>> {
    const counts: Record<LinkedRoleOutcome, number> = {
      written: 0,
      unchanged: 0,
      loss_pending: 0,
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
   * `identity`). False when there was nothing to clear.
   */
  async clear(userId: string, identity?: string): Promise<boolean> {
    const record = await this.#o.store.getRoleConnection(userId);
    if (!record || (identity !== undefined && record.identity !== normalised(identity))) return false;
    const token = await this.#accessToken(record);
    if (token !== 'stale' && token !== 'discord_failed') {
      await putRoleConnection(this.#o.oauth, token, {
        platform_name: null,
        platform_username: null,
        metadata: {},
      }).catch((error: unknown) => this.#discordFailure(userId, error));
    }
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
   * (Discord refused the token: the app was deauthorized), and the metadata last written.
   */
  async status(
    userId: string,
  ): Promise<{ identity: string; stale: boolean; metadata: Record<string, string> | null } | undefined> {
    const record = await this.#o.store.getRoleConnection(userId);
    return record
      ? { identity: record.identity, stale: record.staleSince !== null, metadata: record.metadata }
      : undefined;
  }

  async #metadataFor(
    proven: ProvenIdentity & { userId?: string; provenAt: number },
  ): Promise<RoleConnection | null> {
    const evidence = await this.#o.evaluator.evidenceOf(
      [
        {
          guildId: '',
          userId: proven.userId ?? '',
          identity: proven.identity,
          platform: proven.platform,
          address: proven.address,
          proofMethod: 'record',
          provenAt: proven.provenAt,
          lastCheckAt: null,
          lastCheckOk: null,
          lastResult: null,
          releasedAt: null,
        },
      ],
      true,
    );
    return roleConnectionFor({
      username: proven.identity,
      evidence,
      firstProvenAt: proven.provenAt,
      nowSec: Math.floor(this.#o.now() / 1_000),
    });
  }

  /** A working access token, refreshed when it is near its expiry. */
  async #accessToken(record: RoleConnectionRecord): Promise<string | 'stale' | 'discord_failed'> {
    const now = this.#o.now();
    const access =
      record.sealedAccessToken === null
        ? undefined
        : openToken(this.#o.key, record.sealedAccessToken, record.userId);
    if (access !== undefined && record.accessExpiresAt - now > REFRESH_MARGIN_MS) return access;
    const refresh =
      record.sealedRefreshToken === null
        ? undefined
        : openToken(this.#o.key, record.sealedRefreshToken, record.userId);
    if (refresh === undefined) return this.#markStale(record.userId, 'no usable refresh token');
    let grant: TokenGrant;
    try {
      grant = await refreshGrant(this.#o.oauth, { refreshToken: refresh, needs: ['role_connections.write'] });
    } catch (error) {
      return this.#discordFailure(record.userId, error);
    }
    await this.#o.store.updateRoleConnectionTokens(record.userId, {
      sealedAccessToken: sealToken(this.#o.key, grant.accessToken, record.userId),
      sealedRefreshToken:
        grant.refreshToken === null
          ? record.sealedRefreshToken
          : sealToken(this.#o.key, grant.refreshToken, record.userId),
      accessExpiresAt: now + grant.expiresIn * 1_000,
    });
    return grant.accessToken;
  }

  async #discordFailure(userId: string, error: unknown): Promise<'stale' | 'discord_failed'> {
    const refused =
      error instanceof DiscordOAuthError &&
      (error.kind === 'invalid_grant' || error.kind === 'scope' || error.status === 401);
    if (refused) return this.#markStale(userId, error.message);
    this.#o.logger.warn(
      { userId, err: error instanceof Error ? { name: error.name, message: error.message } : String(error) },
      'linked role call to Discord failed; trying again at the next re-check',
    );
    return 'discord_failed';
  }

  async #markStale(userId: string, why: string): Promise<'stale'> {
    await this.#o.store.markRoleConnectionStale(userId, this.#o.now());
    this.#o.logger.warn({ userId, why }, 'linked role connection stale: Discord refused the token');
    return 'stale';
  }
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
