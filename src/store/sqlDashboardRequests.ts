/** The dashboard's request queue (migration 17): requests queued for the process that serves their guild. */
import { randomBytes } from 'node:crypto';
import type { DashboardStore, ShardFilter } from './dashboardTypes.ts';
import { type Row, type SqlDriver, type SqlParam, toStorableJson } from './sql.ts';
import { claimedRows } from './sqlClaims.ts';
import type { SqlRows } from './sqlRows.ts';
import type { JsonValue } from './types.ts';

/** Discord ids sort by time from bit 22 up: the shard a guild is on is this key modulo the shard count. */
const SHARD_SHIFT = 22n;

/** `(guild_id >> 22)`, which the shard filter works on in SQL (a guild id that is not a snowflake: 0). */
export function shardKeyOf(guildId: string): number {
  try {
    return Number(BigInt(guildId) >> SHARD_SHIFT);
  } catch {
    return 0;
  }
}

/** `shard_key % count IN (…)`, with its parameters numbered from `next`. */
function shardClause(shards: ShardFilter | null, next: number): { sql: string; params: SqlParam[] } {
  if (shards === null || shards.ids.length >= shards.count) return { sql: 'TRUE', params: [] };
  const ids = [...new Set(shards.ids)].filter((id) => Number.isInteger(id) && id >= 0);
  if (ids.length === 0) return { sql: 'FALSE', params: [] };
  const list = ids.map((_, i) => `$${next + 1 + i}`).join(', ');
  return { sql: `(shard_key % $${next}) IN (${list})`, params: [shards.count, ...ids] };
}

export type DashboardRequestStore = Pick<
  DashboardStore,
  | 'enqueueDashboardRequest'
  | 'claimDashboardRequests'
  | 'renewDashboardRequest'
  | 'finishDashboardRequest'
  | 'dashboardRequestResult'
  | 'deleteDashboardRequests'
>;

export function createSqlDashboardRequests(
  driver: SqlDriver,
  o: { now: () => number; leaseMs: number; rows: SqlRows },
): DashboardRequestStore {
  const { now, leaseMs } = o;
  const { num } = o.rows;
  const json = (v: unknown): JsonValue =>
    (driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue;
  const claims = claimedRows<string>(driver, 'dashboard_requests', { now, leaseMs, json });

  return {
    async enqueueDashboardRequest({ id, guildId, request }) {
      const at = now();
      await driver.query(
        `INSERT INTO dashboard_requests (id, guild_id, shard_key, request, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', $5, $5)`,
        [id, guildId, shardKeyOf(guildId), toStorableJson(request), at],
      );
    },

    async claimDashboardRequests(shards, limit, createdAfter) {
      const at = now();
      const token = randomBytes(12).toString('hex');
      const shard = shardClause(shards, 6);
      // One statement claims the batch: SKIP LOCKED (PostgreSQL) keeps two claimers off the same rows.
      const claimed = await driver.query(
        `UPDATE dashboard_requests SET status = 'in_progress', claim_token = $1, lease_until = $2,
           attempts = attempts + 1, updated_at = $3
         WHERE id IN (
           SELECT id FROM dashboard_requests
           WHERE (status = 'pending' OR (status = 'in_progress' AND lease_until <= $3))
             AND created_at > $4 AND ${shard.sql}
           ORDER BY created_at LIMIT $5 ${driver.dialect.skipLocked})
         RETURNING *`,
        [token, at + leaseMs, at, createdAfter, Math.max(1, Math.floor(limit)), ...shard.params],
      );
      return claimed
        .map((r: Row) => ({
          id: String(r.id),
          guildId: String(r.guild_id),
          request: json(r.request),
          createdAt: num(r.created_at),
          attempts: num(r.attempts),
          claimToken: token,
        }))
        .sort((a, b) => a.createdAt - b.createdAt);
    },

    renewDashboardRequest: claims.renew,
    finishDashboardRequest: claims.finish,
    dashboardRequestResult: claims.result,

    async deleteDashboardRequests(before) {
      const deleted = await driver.query(
        'DELETE FROM dashboard_requests WHERE created_at < $1 RETURNING id',
        [before],
      );
      return deleted.length;
    },
  };
}
