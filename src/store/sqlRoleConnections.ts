import { type Row, type SqlDriver, toStorableJson } from './sql.ts';
import type { RoleConnectionRecord, RoleConnectionStore } from './types.ts';

const DEFAULT_LIST_LIMIT = 200;
const MAX_LIST_LIMIT = 1_000;

/** The Linked Roles connections table (`role_connections`, migration 5), merged into `createSqlStore`. */
export function createSqlRoleConnections(driver: SqlDriver, now: () => number): RoleConnectionStore {
  const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const toRecord = (r: Row): RoleConnectionRecord => ({
    userId: String(r.user_id),
    identity: String(r.identity),
    platform: String(r.platform),
    address: optStr(r.address),
    provenAt: Number(r.proven_at),
    sealedAccessToken: optStr(r.sealed_access_token),
    sealedRefreshToken: optStr(r.sealed_refresh_token),
    accessExpiresAt: Number(r.access_expires_at),
    metadata:
      r.metadata === null || r.metadata === undefined
        ? null
        : ((driver.dialect.parsesJson ? r.metadata : JSON.parse(String(r.metadata))) as Record<
            string,
            string
          >),
    writtenAt: optNum(r.written_at),
    staleSince: optNum(r.stale_since),
    lossSeenAt: optNum(r.loss_seen_at),
    updatedAt: Number(r.updated_at),
  });
  const changed = (rows: Row[]) => rows.length > 0;

  return {
    async saveRoleConnection(c) {
      const rows = await driver.query(
        `INSERT INTO role_connections (user_id, identity, platform, address, proven_at, sealed_access_token,
           sealed_refresh_token, access_expires_at, metadata, written_at, stale_since, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
         ON CONFLICT (user_id) DO UPDATE SET identity = excluded.identity, platform = excluded.platform,
           address = excluded.address, proven_at = excluded.proven_at,
           sealed_access_token = excluded.sealed_access_token, sealed_refresh_token = excluded.sealed_refresh_token,
           access_expires_at = excluded.access_expires_at, metadata = excluded.metadata,
           written_at = excluded.written_at, stale_since = excluded.stale_since, loss_seen_at = NULL,
           updated_at = excluded.updated_at
         RETURNING *`,
        [
          c.userId,
          c.identity,
          c.platform,
          c.address,
          c.provenAt,
          c.sealedAccessToken,
          c.sealedRefreshToken,
          c.accessExpiresAt,
          toStorableJson(c.metadata),
          c.writtenAt,
          c.staleSince,
          now(),
        ],
      );
      const [row] = rows;
      if (!row) throw new Error('role connection upsert returned no row');
      return toRecord(row);
    },

    async getRoleConnection(userId) {
      const [row] = await driver.query('SELECT * FROM role_connections WHERE user_id = $1', [userId]);
      return row ? toRecord(row) : undefined;
    },

    async listRoleConnections(opts = {}) {
      const limit = Math.min(Math.max(1, opts.limit ?? DEFAULT_LIST_LIMIT), MAX_LIST_LIMIT);
      const rows = await driver.query(
        `SELECT * FROM role_connections WHERE user_id > $1 ${opts.includeStale ? '' : 'AND stale_since IS NULL'}
         ORDER BY user_id LIMIT $2`,
        [opts.afterUserId ?? '', limit],
      );
      return rows.map(toRecord);
    },

    async updateRoleConnectionTokens(userId, t) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET sealed_access_token = $2, sealed_refresh_token = $3, access_expires_at = $4,
             updated_at = $5 WHERE user_id = $1 RETURNING user_id`,
          [userId, t.sealedAccessToken, t.sealedRefreshToken, t.accessExpiresAt, now()],
        ),
      );
    },

    async recordRoleConnectionWrite(userId, metadata, at) {
      return changed(
        await driver.query(
          'UPDATE role_connections SET metadata = $2, written_at = $3, updated_at = $4 WHERE user_id = $1 RETURNING user_id',
          [userId, toStorableJson(metadata), at, now()],
        ),
      );
    },

    async noteRoleConnectionLoss(userId, seenAt) {
      return changed(
        await driver.query(
          'UPDATE role_connections SET loss_seen_at = $2, updated_at = $3 WHERE user_id = $1 RETURNING user_id',
          [userId, seenAt, now()],
        ),
      );
    },

    async markRoleConnectionStale(userId, at) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET stale_since = COALESCE(stale_since, $2), sealed_access_token = NULL,
             sealed_refresh_token = NULL, updated_at = $3 WHERE user_id = $1 RETURNING user_id`,
          [userId, at, now()],
        ),
      );
    },

    async deleteRoleConnection(userId, opts = {}) {
      if (opts.notWrittenAfter === undefined)
        return changed(
          await driver.query('DELETE FROM role_connections WHERE user_id = $1 RETURNING user_id', [userId]),
        );
      return changed(
        await driver.query(
          `DELETE FROM role_connections WHERE user_id = $1 AND (written_at IS NULL OR written_at <= $2)
           RETURNING user_id`,
          [userId, opts.notWrittenAfter],
        ),
      );
    },
  };
}
