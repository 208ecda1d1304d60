import { type Row, type SqlDriver, toStorableJson } from './sql.ts';
import { createSqlRoleConnectionClaims } from './sqlRoleConnectionClaims.ts';
import { createSqlRoleConnectionHolds } from './sqlRoleConnectionHolds.ts';
import type { ProofMethod, RoleConnectionRecord, RoleConnectionStore } from './types.ts';

const DEFAULT_LIST_LIMIT = 200;
const MAX_LIST_LIMIT = 1_000;

const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

/** A `role_connections` row as a record; `parsesJson`: the driver hands the metadata back parsed. */
function toRoleConnection(r: Row, parsesJson: boolean): RoleConnectionRecord {
  return {
    userId: String(r.user_id),
    identity: String(r.identity),
    platform: String(r.platform),
    address: optStr(r.address),
    proofMethod: (optStr(r.proof_method) ?? 'record') as ProofMethod,
    provenAt: Number(r.proven_at),
    sealedAccessToken: optStr(r.sealed_access_token),
    sealedRefreshToken: optStr(r.sealed_refresh_token),
    accessExpiresAt: Number(r.access_expires_at),
    metadata:
      r.metadata === null || r.metadata === undefined
        ? null
        : ((parsesJson ? r.metadata : JSON.parse(String(r.metadata))) as Record<string, string>),
    writtenAt: optNum(r.written_at),
    staleSince: optNum(r.stale_since),
    lossSeenAt: optNum(r.loss_seen_at),
    releasedAt: optNum(r.released_at),
    releasedReason: optStr(r.released_reason),
    recordLossSeenAt: optNum(r.record_loss_seen_at),
    updatedAt: Number(r.updated_at),
  };
}

/**
 * The Linked Roles connections table (`role_connections`, migration 5), merged into `createSqlStore`:
 * the transactions that take and give up a connection (sqlRoleConnectionClaims.ts), the holds of flagged
 * identities (sqlRoleConnectionHolds.ts), and the reads and notes of one connection here.
 */
export function createSqlRoleConnections(driver: SqlDriver, now: () => number): RoleConnectionStore {
  const toRecord = (r: Row): RoleConnectionRecord => toRoleConnection(r, driver.dialect.parsesJson);
  const changed = (rows: Row[]) => rows.length > 0;

  return {
    ...createSqlRoleConnectionClaims(driver, { now, toRecord }),
    ...createSqlRoleConnectionHolds(driver),

    async noteRoleConnectionRecordLoss(userId, seenAt) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET record_loss_seen_at = $2, updated_at = $3 WHERE user_id = $1
           RETURNING user_id`,
          [userId, seenAt, now()],
        ),
      );
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
  };
}
