import { randomBytes } from 'node:crypto';
import type { CredentialSet } from '../web3bio/types.ts';
import { type Row, type SqlDriver, type SqlExecutor, toStorableJson } from './sql.ts';
import { createSqlRoleConnections } from './sqlRoleConnections.ts';
import type {
  AuditEvent,
  AuditEventInput,
  AuditQuery,
  EnqueueOutcome,
  GatingStore,
  GuildSettings,
  GuildSettingsInput,
  JsonValue,
  LinkCheck,
  LinkInput,
  LinkKey,
  LinkRecord,
  NonceRecord,
  PendingLoss,
  ProofMethod,
  RoleChange,
  RoleChangeInput,
  RoleChangeStatus,
  RoleOp,
  StoreOptions,
} from './types.ts';

export const DEFAULT_LEASE_MS = 60_000;
const DEFAULT_AUDIT_LIMIT = 50;
const MAX_AUDIT_LIMIT = 500;

/** The `GatingStore` both implementations share, on top of a dialect-aware driver. */
export function createSqlStore(driver: SqlDriver, opts: StoreOptions = {}): GatingStore {
  const now = opts.now ?? Date.now;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;
  const { dialect } = driver;

  const str = (v: unknown): string => String(v);
  const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const num = (v: unknown): number => Number(v);
  const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const optBool = (v: unknown): boolean | null => (v === null || v === undefined ? null : Boolean(v));
  const fromJson = (v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    return dialect.parsesJson ? v : JSON.parse(String(v));
  };
  const toJson = toStorableJson;

  const toSettings = (r: Row): GuildSettings => ({
    guildId: str(r.guild_id),
    enabled: Boolean(r.enabled),
    humanRoleId: str(r.human_role_id),
    spamRoleId: optStr(r.spam_role_id),
    riskyRoleId: optStr(r.risky_role_id),
    minScore: optNum(r.min_score),
    spamRemovesHuman: Boolean(r.spam_removes_human),
    logChannelId: optStr(r.log_channel_id),
    lastFullSyncAt: optNum(r.last_full_sync_at),
    updatedAt: num(r.updated_at),
  });

  const toLink = (r: Row): LinkRecord => ({
    guildId: str(r.guild_id),
    userId: str(r.user_id),
    identity: str(r.identity),
    platform: str(r.platform),
    address: optStr(r.address),
    proofMethod: str(r.proof_method) as ProofMethod,
    provenAt: num(r.proven_at),
    lastCheckAt: optNum(r.last_check_at),
    lastCheckOk: optBool(r.last_check_ok),
    lastResult: fromJson(r.last_result) as CredentialSet | null,
    releasedAt: optNum(r.released_at),
  });

  const toLoss = (r: Row): PendingLoss => ({
    guildId: str(r.guild_id),
    userId: str(r.user_id),
    subject: str(r.subject),
    firstSeenAt: num(r.first_seen_at),
    reason: str(r.reason),
    heldAt: optNum(r.held_at),
  });

  const toAudit = (r: Row): AuditEvent => ({
    id: num(r.id),
    guildId: str(r.guild_id),
    userId: optStr(r.user_id),
    kind: str(r.kind),
    roleId: optStr(r.role_id),
    reason: str(r.reason),
    details: fromJson(r.details) as JsonValue | null,
    createdAt: num(r.created_at),
  });

  const toNonce = (r: Row): NonceRecord => ({
    nonce: str(r.nonce),
    guildId: str(r.guild_id),
    userId: str(r.user_id),
    userName: optStr(r.user_name),
    guildName: optStr(r.guild_name),
    identity: str(r.identity),
    address: str(r.address),
    expiresAt: num(r.expires_at),
    usedAt: optNum(r.used_at),
    failedAttempts: num(r.failed_attempts ?? 0),
  });

  const toChange = (r: Row): RoleChange => ({
    id: num(r.id),
    guildId: str(r.guild_id),
    userId: str(r.user_id),
    roleId: str(r.role_id),
    op: str(r.op) as RoleOp,
    reason: str(r.reason),
    status: str(r.status) as RoleChangeStatus,
    attempts: num(r.attempts),
    leaseUntil: optNum(r.lease_until),
    claimToken: optStr(r.claim_token),
    notBefore: optNum(r.not_before),
    detail: optStr(r.detail),
    createdAt: num(r.created_at),
    updatedAt: num(r.updated_at),
  });

  const first = <T>(rows: Row[], map: (r: Row) => T): T | undefined => {
    const row = rows[0];
    return row ? map(row) : undefined;
  };

  async function insertAudit(db: SqlExecutor, e: AuditEventInput): Promise<AuditEvent> {
    const rows = await db.query(
      `INSERT INTO audit_events (guild_id, user_id, kind, role_id, reason, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        e.guildId,
        e.userId ?? null,
        e.kind,
        e.roleId ?? null,
        e.reason,
        toJson(e.details),
        e.createdAt ?? now(),
      ],
    );
    const event = first(rows, toAudit);
    if (!event) throw new Error('audit insert returned no row');
    return event;
  }

  const linkWhere = 'guild_id = $1 AND user_id = $2 AND identity = $3';
  const linkParams = (k: LinkKey) => [k.guildId, k.userId, k.identity];

  return {
    ...createSqlRoleConnections(driver, now),

    async getGuildSettings(guildId) {
      const rows = await driver.query('SELECT * FROM guild_settings WHERE guild_id = $1', [guildId]);
      return first(rows, toSettings);
    },

    async saveGuildSettings(s: GuildSettingsInput, actor) {
      return driver.transaction(async (tx) => {
        const at = now();
        const rows = await tx.query(
          `INSERT INTO guild_settings (guild_id, enabled, human_role_id, spam_role_id, risky_role_id,
             min_score, spam_removes_human, log_channel_id, updated_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
           ON CONFLICT (guild_id) DO UPDATE SET
             enabled = excluded.enabled, human_role_id = excluded.human_role_id,
             spam_role_id = excluded.spam_role_id, risky_role_id = excluded.risky_role_id,
             min_score = excluded.min_score, spam_removes_human = excluded.spam_removes_human,
             log_channel_id = excluded.log_channel_id, updated_at = excluded.updated_at
           RETURNING *`,
          [
            s.guildId,
            s.enabled,
            s.humanRoleId,
            s.spamRoleId,
            s.riskyRoleId,
            s.minScore,
            s.spamRemovesHuman,
            s.logChannelId,
            at,
          ],
        );
        const saved = first(rows, toSettings);
        if (!saved) throw new Error('settings upsert returned no row');
        if (actor) {
          const { lastFullSyncAt: _sync, updatedAt: _updated, ...settings } = saved;
          await insertAudit(tx, {
            guildId: s.guildId,
            userId: actor.userId,
            kind: 'settings_changed',
            reason: actor.reason,
            details: settings,
            createdAt: at,
          });
        }
        return saved;
      });
    },

    async listGuildSettings(o = {}) {
      const rows = o.enabledOnly
        ? await driver.query('SELECT * FROM guild_settings WHERE enabled = $1 ORDER BY guild_id', [true])
        : await driver.query('SELECT * FROM guild_settings ORDER BY guild_id');
      return rows.map(toSettings);
    },

    async markFullSync(guildId, at) {
      await driver.query('UPDATE guild_settings SET last_full_sync_at = $2 WHERE guild_id = $1', [
        guildId,
        at,
      ]);
    },

    async acquireGuildLease(guildId, holder, until) {
      const rows = await driver.query(
        `INSERT INTO guild_leases (guild_id, holder, lease_until) VALUES ($1, $2, $3)
         ON CONFLICT (guild_id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE guild_leases.lease_until <= $4 OR guild_leases.holder = excluded.holder
         RETURNING holder`,
        [guildId, holder, until, now()],
      );
      return rows.length > 0;
    },

    async releaseGuildLease(guildId, holder) {
      await driver.query('DELETE FROM guild_leases WHERE guild_id = $1 AND holder = $2', [guildId, holder]);
    },

    async saveLink(link: LinkInput, reason) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `INSERT INTO links (guild_id, user_id, identity, platform, address, proof_method, proven_at,
             last_check_at, last_check_ok, last_result)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT (guild_id, user_id, identity) DO UPDATE SET
             platform = excluded.platform, address = excluded.address,
             proof_method = excluded.proof_method, proven_at = excluded.proven_at,
             last_check_at = excluded.last_check_at, last_check_ok = excluded.last_check_ok,
             last_result = excluded.last_result, released_at = NULL
           RETURNING *`,
          [
            link.guildId,
            link.userId,
            link.identity,
            link.platform,
            link.address,
            link.proofMethod,
            link.provenAt,
            link.lastCheckAt ?? null,
            link.lastCheckOk ?? null,
            toJson(link.lastResult),
          ],
        );
        const saved = first(rows, toLink);
        if (!saved) throw new Error('link upsert returned no row');
        await insertAudit(tx, {
          guildId: link.guildId,
          userId: link.userId,
          kind: 'linked',
          reason,
          details: { identity: link.identity, platform: link.platform, proofMethod: link.proofMethod },
        });
        return saved;
      });
    },

    async removeLink(key, reason) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `DELETE FROM links WHERE ${linkWhere} RETURNING proof_method`,
          linkParams(key),
        );
        const removed = rows[0];
        if (!removed) return false;
        await insertAudit(tx, {
          guildId: key.guildId,
          userId: key.userId,
          kind: 'unlinked',
          reason,
          details: { identity: key.identity, proofMethod: str(removed.proof_method) },
        });
        return true;
      });
    },

    async releaseLink(key, reason) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE links SET released_at = $4 WHERE ${linkWhere} AND released_at IS NULL
           RETURNING proof_method`,
          [...linkParams(key), now()],
        );
        const released = rows[0];
        if (!released) return false;
        await insertAudit(tx, {
          guildId: key.guildId,
          userId: key.userId,
          kind: 'unlinked',
          reason,
          details: { identity: key.identity, proofMethod: str(released.proof_method), flagKept: true },
        });
        return true;
      });
    },

    async getLink(key) {
      return first(await driver.query(`SELECT * FROM links WHERE ${linkWhere}`, linkParams(key)), toLink);
    },

    async getUserLinks(guildId, userId) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND user_id = $2 ORDER BY proven_at, identity',
        [guildId, userId],
      );
      return rows.map(toLink);
    },

    async getIdentityLinks(guildId, identity) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND identity = $2 ORDER BY user_id',
        [guildId, identity],
      );
      return rows.map(toLink);
    },

    async getAddressLinks(guildId, address) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND address = $2 ORDER BY user_id, identity',
        [guildId, address],
      );
      return rows.map(toLink);
    },

    async getLinksOfUser(userId) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE user_id = $1 ORDER BY guild_id, proven_at, identity',
        [userId],
      );
      return rows.map(toLink);
    },

    async listLinks(guildId, o = {}) {
      const after = o.afterUserId ?? '';
      const rows =
        o.limit === undefined
          ? await driver.query(
              'SELECT * FROM links WHERE guild_id = $1 AND user_id > $2 ORDER BY user_id, identity',
              [guildId, after],
            )
          : await driver.query(
              `SELECT * FROM links WHERE guild_id = $1 AND user_id IN (
                 SELECT DISTINCT user_id FROM links WHERE guild_id = $1 AND user_id > $2
                 ORDER BY user_id LIMIT $3)
               ORDER BY user_id, identity`,
              [guildId, after, Math.max(0, Math.floor(o.limit))],
            );
      return rows.map(toLink);
    },

    async countLinkedUsers(guildId) {
      const rows = await driver.query(
        'SELECT COUNT(DISTINCT user_id) AS n FROM links WHERE guild_id = $1 AND released_at IS NULL',
        [guildId],
      );
      return num(rows[0]?.n ?? 0);
    },

    async recordLinkCheck(key, check: LinkCheck) {
      const rows = check.ok
        ? await driver.query(
            `UPDATE links SET last_check_at = $4, last_check_ok = $5, last_result = $6
             WHERE ${linkWhere} RETURNING identity`,
            [...linkParams(key), check.at, true, toJson(check.result)],
          )
        : await driver.query(
            `UPDATE links SET last_check_at = $4, last_check_ok = $5 WHERE ${linkWhere} RETURNING identity`,
            [...linkParams(key), check.at, false],
          );
      return rows.length > 0;
    },

    async listPendingLosses(guildId, userId) {
      const rows =
        userId === undefined
          ? await driver.query('SELECT * FROM pending_losses WHERE guild_id = $1 ORDER BY user_id, subject', [
              guildId,
            ])
          : await driver.query(
              'SELECT * FROM pending_losses WHERE guild_id = $1 AND user_id = $2 ORDER BY subject',
              [guildId, userId],
            );
      return rows.map(toLoss);
    },

    async notePendingLoss(loss) {
      await driver.query(
        `INSERT INTO pending_losses (guild_id, user_id, subject, first_seen_at, reason, held_at)
         VALUES ($1, $2, $3, $4, $5, NULL)
         ON CONFLICT (guild_id, user_id, subject) DO UPDATE SET reason = excluded.reason`,
        [loss.guildId, loss.userId, loss.subject, loss.firstSeenAt, loss.reason],
      );
      const rows = await driver.query(
        'SELECT * FROM pending_losses WHERE guild_id = $1 AND user_id = $2 AND subject = $3',
        [loss.guildId, loss.userId, loss.subject],
      );
      const stored = first(rows, toLoss);
      if (!stored) throw new Error('pending loss upsert returned no row');
      return stored;
    },

    async holdPendingLosses(guildId, keys, at) {
      if (keys.length === 0) return;
      await driver.transaction(async (tx) => {
        for (const key of keys) {
          await tx.query(
            'UPDATE pending_losses SET held_at = $4 WHERE guild_id = $1 AND user_id = $2 AND subject = $3',
            [guildId, key.userId, key.subject, at],
          );
        }
      });
    },

    async clearPendingLoss(guildId, userId, subject) {
      const rows = await driver.query(
        'DELETE FROM pending_losses WHERE guild_id = $1 AND user_id = $2 AND subject = $3 RETURNING subject',
        [guildId, userId, subject],
      );
      return rows.length > 0;
    },

    async addAuditEvent(event) {
      return insertAudit(driver, event);
    },

    async listAuditEvents(q: AuditQuery) {
      const limit = Math.min(MAX_AUDIT_LIMIT, Math.max(1, Math.floor(q.limit ?? DEFAULT_AUDIT_LIMIT)));
      const where = ['guild_id = $1'];
      const params: (string | number)[] = [q.guildId];
      if (q.userId !== undefined) {
        params.push(q.userId);
        where.push(`user_id = $${params.length}`);
      }
      if (q.beforeId !== undefined) {
        params.push(q.beforeId);
        where.push(`id < $${params.length}`);
      }
      params.push(limit);
      const rows = await driver.query(
        `SELECT * FROM audit_events WHERE ${where.join(' AND ')}
         ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
        params,
      );
      return rows.map(toAudit);
    },

    async deleteAuditEvents(before) {
      const rows = await driver.query('DELETE FROM audit_events WHERE created_at < $1 RETURNING id', [
        before,
      ]);
      return rows.length;
    },

    async createNonce(r) {
      await driver.query(
        `INSERT INTO nonces (nonce, guild_id, user_id, user_name, guild_name, identity, address, expires_at, used_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)`,
        [
          r.nonce,
          r.guildId,
          r.userId,
          r.userName,
          r.guildName,
          r.identity,
          r.address.startsWith('0x') ? r.address.toLowerCase() : r.address,
          r.expiresAt,
        ],
      );
    },

    async countFailedAttempt(nonce, limit, at) {
      const rows = await driver.query(
        `UPDATE nonces SET failed_attempts = failed_attempts + 1,
           used_at = CASE WHEN failed_attempts + 1 >= $2 THEN $3 ELSE used_at END
         WHERE nonce = $1 AND used_at IS NULL AND expires_at > $3 RETURNING failed_attempts`,
        [nonce, limit, at],
      );
      const row = rows[0];
      return row ? num(row.failed_attempts) : undefined;
    },

    async consumeNonce(nonce, at) {
      // One conditional UPDATE: the database row lock makes it single-use under concurrency.
      const rows = await driver.query(
        `UPDATE nonces SET used_at = $2
         WHERE nonce = $1 AND used_at IS NULL AND expires_at > $2 RETURNING *`,
        [nonce, at],
      );
      return first(rows, toNonce);
    },

    async getNonce(nonce) {
      return first(await driver.query('SELECT * FROM nonces WHERE nonce = $1', [nonce]), toNonce);
    },

    async deleteExpiredNonces(at) {
      const rows = await driver.query('DELETE FROM nonces WHERE expires_at <= $1 RETURNING nonce', [at]);
      return rows.length;
    },

    async createOAuthState(r, at) {
      await driver.query('DELETE FROM oauth_states WHERE expires_at <= $1', [at]);
      await driver.query(
        'INSERT INTO oauth_states (state_hash, purpose, nonce, expires_at) VALUES ($1, $2, $3, $4)',
        [r.stateHash, r.purpose, r.nonce, r.expiresAt],
      );
    },

    async consumeOAuthState(stateHash, at) {
      // One DELETE … RETURNING: of two concurrent callbacks with the same state, only one gets the row.
      const rows = await driver.query('DELETE FROM oauth_states WHERE state_hash = $1 RETURNING *', [
        stateHash,
      ]);
      const row = rows[0];
      if (!row || num(row.expires_at) <= at) return undefined;
      return {
        stateHash: str(row.state_hash),
        purpose: str(row.purpose) === 'linked-role' ? 'linked-role' : 'verify',
        nonce: row.nonce === null || row.nonce === undefined ? null : str(row.nonce),
        expiresAt: num(row.expires_at),
      };
    },

    async enqueueRoleChange(c: RoleChangeInput) {
      return driver.transaction<{ change: RoleChange; outcome: EnqueueOutcome }>(async (tx) => {
        const at = now();
        const key = [c.guildId, c.userId, c.roleId];
        const open = (
          await tx.query(
            `SELECT * FROM role_changes
             WHERE guild_id = $1 AND user_id = $2 AND role_id = $3 AND status IN ('pending', 'in_progress')
             ORDER BY id`,
            key,
          )
        ).map(toChange);
        const pending = open.find((o) => o.status === 'pending');
        const inFlight = open.filter((o) => o.status === 'in_progress').at(-1);
        if (pending?.op === c.op) return { change: pending, outcome: 'duplicate' };
        if (inFlight?.op === c.op) {
          // The in-flight change already does what is asked; a pending opposite one is now stale.
          if (pending) await tx.query('DELETE FROM role_changes WHERE id = $1', [pending.id]);
          return { change: inFlight, outcome: 'duplicate' };
        }
        const rows = await tx.query(
          `INSERT INTO role_changes (guild_id, user_id, role_id, op, reason, status, attempts, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)
           ON CONFLICT (guild_id, user_id, role_id) WHERE status = 'pending' DO UPDATE SET
             op = excluded.op, reason = excluded.reason, updated_at = excluded.updated_at
           RETURNING *`,
          [...key, c.op, c.reason, at],
        );
        const change = first(rows, toChange);
        if (!change) throw new Error('role change upsert returned no row');
        return { change, outcome: pending ? 'replaced' : 'created' };
      });
    },

    async claimRoleChanges(guildId, limit) {
      const at = now();
      const token = randomBytes(12).toString('hex');
      const params: (string | number)[] = [at, at + leaseMs, Math.max(0, Math.floor(limit)), token];
      let guildFilter = '';
      if (guildId !== undefined) {
        params.push(guildId);
        guildFilter = 'AND c.guild_id = $5';
      }
      // A materialised CTE picks the rows once; under PostgreSQL its SKIP LOCKED keeps workers apart.
      const rows = await driver.query(
        `WITH picked AS MATERIALIZED (
           SELECT c.id FROM role_changes c
           WHERE (c.status = 'pending' OR (c.status = 'in_progress' AND c.lease_until <= $1)) ${guildFilter}
             AND (c.not_before IS NULL OR c.not_before <= $1)
             AND NOT EXISTS (
               SELECT 1 FROM role_changes o
               WHERE o.guild_id = c.guild_id AND o.user_id = c.user_id AND o.role_id = c.role_id
                 AND o.status = 'in_progress' AND o.lease_until > $1 AND o.id < c.id)
           ORDER BY c.id LIMIT $3${dialect.skipLocked})
         UPDATE role_changes
         SET status = 'in_progress', lease_until = $2, attempts = attempts + 1, updated_at = $1,
           claim_token = $4
         WHERE id IN (SELECT id FROM picked)
         RETURNING *`,
        params,
      );
      return rows.map(toChange).sort((a, b) => a.id - b.id);
    },

    async completeRoleChange(id, claimToken, outcome, detail) {
      return driver.transaction(async (tx) => {
        const at = now();
        const rows = await tx.query(
          `UPDATE role_changes SET status = $2, lease_until = NULL, claim_token = NULL, detail = $3,
             updated_at = $4
           WHERE id = $1 AND status = 'in_progress' AND claim_token = $5 RETURNING *`,
          [id, outcome, detail ?? null, at, claimToken],
        );
        const change = first(rows, toChange);
        if (!change) return false;
        const kind =
          outcome === 'failed' ? 'role_failed' : change.op === 'add' ? 'role_added' : 'role_removed';
        await insertAudit(tx, {
          guildId: change.guildId,
          userId: change.userId,
          kind,
          roleId: change.roleId,
          reason: change.reason,
          details: { changeId: change.id, op: change.op, attempts: change.attempts, detail: detail ?? null },
          createdAt: at,
        });
        return true;
      });
    },

    async renewRoleChange(id, claimToken) {
      const at = now();
      const rows = await driver.query(
        `UPDATE role_changes SET lease_until = $3, updated_at = $2
         WHERE id = $1 AND status = 'in_progress' AND claim_token = $4 RETURNING id`,
        [id, at, at + leaseMs, claimToken],
      );
      return rows.length > 0;
    },

    async deferRoleChange(id, claimToken, notBefore) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          "SELECT * FROM role_changes WHERE id = $1 AND status = 'in_progress' AND claim_token = $2",
          [id, claimToken],
        );
        const change = first(rows, toChange);
        if (!change) return false;
        const newer = await tx.query(
          `SELECT id FROM role_changes
           WHERE guild_id = $1 AND user_id = $2 AND role_id = $3 AND status = 'pending'`,
          [change.guildId, change.userId, change.roleId],
        );
        if (newer.length > 0) {
          await tx.query('DELETE FROM role_changes WHERE id = $1', [id]);
          return true;
        }
        await tx.query(
          `UPDATE role_changes SET status = 'pending', lease_until = NULL, claim_token = NULL,
             not_before = $2, attempts = attempts - 1, updated_at = $3
           WHERE id = $1`,
          [id, notBefore, now()],
        );
        return true;
      });
    },

    async resumeDeferredRoleChanges(guildId) {
      const rows = await driver.query(
        `UPDATE role_changes SET not_before = NULL
         WHERE guild_id = $1 AND status = 'pending' AND not_before IS NOT NULL RETURNING id`,
        [guildId],
      );
      return rows.length;
    },

    async openRoleChanges(guildId, userId) {
      const open = "status IN ('pending', 'in_progress')";
      const rows =
        userId === undefined
          ? await driver.query(`SELECT * FROM role_changes WHERE guild_id = $1 AND ${open} ORDER BY id`, [
              guildId,
            ])
          : await driver.query(
              `SELECT * FROM role_changes WHERE guild_id = $1 AND user_id = $2 AND ${open} ORDER BY id`,
              [guildId, userId],
            );
      return rows.map(toChange);
    },

    async pendingRoleChanges(guildId) {
      const rows =
        guildId === undefined
          ? await driver.query(
              "SELECT COUNT(*) AS n FROM role_changes WHERE status IN ('pending', 'in_progress')",
            )
          : await driver.query(
              "SELECT COUNT(*) AS n FROM role_changes WHERE status IN ('pending', 'in_progress') AND guild_id = $1",
              [guildId],
            );
      return num(rows[0]?.n ?? 0);
    },

    async oldestOpenRoleChangeAt() {
      const rows = await driver.query(
        "SELECT MIN(created_at) AS at FROM role_changes WHERE status IN ('pending', 'in_progress')",
      );
      return optNum(rows[0]?.at);
    },

    async deleteFinishedRoleChanges(before) {
      const rows = await driver.query(
        "DELETE FROM role_changes WHERE status IN ('done', 'failed') AND updated_at < $1 RETURNING id",
        [before],
      );
      return rows.length;
    },

    close: () => driver.close(),
  };
}
