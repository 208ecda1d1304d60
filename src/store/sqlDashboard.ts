/** The dashboard's reads, its request queue (migration 17) and sign-outs (20), merged into `createSqlStore`. */
import { randomBytes } from 'node:crypto';
import type { DashboardSignOutStore } from './dashboardSignOutTypes.ts';
import type { DashboardStore, FilteredAuditQuery, ShardFilter } from './dashboardTypes.ts';
import { type Row, type SqlDriver, type SqlParam, toStorableJson } from './sql.ts';
import { createSqlDashboardSignOuts } from './sqlDashboardSignOuts.ts';
import type { SqlRows } from './sqlRows.ts';
import type { JsonValue } from './types.ts';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;
const MAX_METRICS = 16;
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

export function createSqlDashboard(
  driver: SqlDriver,
  o: { now: () => number; leaseMs: number; rows: SqlRows },
): DashboardStore & DashboardSignOutStore {
  const { now, leaseMs, rows } = o;
  const { toAudit, toLoss, num } = rows;
  const json = (v: unknown): JsonValue =>
    (driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue;

  /** `shard_key % count IN (…)`, with its parameters numbered from `next`. */
  function shardClause(shards: ShardFilter | null, next: number): { sql: string; params: SqlParam[] } {
    if (shards === null || shards.ids.length >= shards.count) return { sql: 'TRUE', params: [] };
    const ids = [...new Set(shards.ids)].filter((id) => Number.isInteger(id) && id >= 0);
    if (ids.length === 0) return { sql: 'FALSE', params: [] };
    const list = ids.map((_, i) => `$${next + 1 + i}`).join(', ');
    return { sql: `(shard_key % $${next}) IN (${list})`, params: [shards.count, ...ids] };
  }

  return {
    ...createSqlDashboardSignOuts(driver),
    async countAuditDaily(guildId, metrics, sinceDay) {
      const wanted = [...new Set(metrics)].slice(0, MAX_METRICS);
      if (wanted.length === 0) return [];
      const list = wanted.map((_, i) => `$${i + 3}`).join(', ');
      const found = await driver.query(
        `SELECT metric, day, count FROM audit_daily
         WHERE guild_id = $1 AND day >= $2 AND metric IN (${list}) ORDER BY metric, day`,
        [guildId, sinceDay, ...wanted],
      );
      return found.map((r) => ({ metric: String(r.metric), day: num(r.day), count: num(r.count) }));
    },

    async latestAuditEvent(guildId, kind) {
      const [row] = await driver.query(
        `SELECT * FROM audit_events WHERE guild_id = $1 AND kind = $2
         ORDER BY created_at DESC, id DESC LIMIT 1`,
        [guildId, kind],
      );
      return row ? toAudit(row) : undefined;
    },

    async filterAuditEvents(q: FilteredAuditQuery) {
      const params: SqlParam[] = [q.guildId];
      const where = ['guild_id = $1'];
      const add = (sql: string, value: SqlParam) => {
        params.push(value);
        where.push(sql.replace('?', `$${params.length}`));
      };
      if (q.userId !== undefined) add('user_id = ?', q.userId);
      if (q.roleId !== undefined) add('role_id = ?', q.roleId);
      if (q.kind !== undefined) add('kind = ?', q.kind);
      if (q.from !== undefined) add('created_at >= ?', q.from);
      if (q.to !== undefined) add('created_at < ?', q.to);
      // Forwards: oldest first, or the newer page of a newest-first list (read upwards, then turned round).
      const forwards = q.oldestFirst === true || (q.after !== undefined && q.before === undefined);
      const cursor = forwards ? q.after : q.before;
      if (cursor) {
        params.push(cursor.createdAt, cursor.id);
        const [at, id] = [`$${params.length - 1}`, `$${params.length}`];
        // A row comparison, which PostgreSQL takes as a bound of the index scan (an OR of the two
        // columns is only a filter: the 50th page then read the 2,450 events before it, 1.32x the first).
        where.push(forwards ? `(created_at, id) > (${at}, ${id})` : `(created_at, id) < (${at}, ${id})`);
      }
      const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(q.limit ?? DEFAULT_PAGE)));
      params.push(limit);
      const order = forwards ? 'created_at, id' : 'created_at DESC, id DESC';
      const found = await driver.query(
        `SELECT * FROM audit_events WHERE ${where.join(' AND ')} ORDER BY ${order} LIMIT $${params.length}`,
        params,
      );
      const events = found.map(toAudit);
      return forwards && q.oldestFirst !== true ? events.reverse() : events;
    },

    async countPendingLosses(guildId) {
      const [row] = await driver.query(
        `SELECT COUNT(*) AS pending, COUNT(held_at) AS held FROM pending_losses WHERE guild_id = $1`,
        [guildId],
      );
      return { pending: num(row?.pending ?? 0), held: num(row?.held ?? 0) };
    },

    async clearHeldLosses(guildId) {
      const cleared = await driver.query(
        'DELETE FROM pending_losses WHERE guild_id = $1 AND held_at IS NOT NULL RETURNING subject',
        [guildId],
      );
      return cleared.length;
    },

    async listHeldLosses(guildId, limit) {
      const held = await driver.query(
        `SELECT * FROM pending_losses WHERE guild_id = $1 AND held_at IS NOT NULL
         ORDER BY held_at DESC, user_id, subject LIMIT $2`,
        [guildId, Math.max(1, Math.floor(limit))],
      );
      return held.map(toLoss);
    },

    async listVerifyPanels(guildId) {
      const panels = await driver.query(
        'SELECT channel_id, message_id FROM verify_panels WHERE guild_id = $1 ORDER BY channel_id',
        [guildId],
      );
      return panels.map((r) => ({ channelId: String(r.channel_id), messageId: String(r.message_id) }));
    },

    async addUpstreamMinute(minute, sample) {
      await driver.query(
        `INSERT INTO upstream_minutes (minute, requests, errors, seconds, slow) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (minute) DO UPDATE SET requests = upstream_minutes.requests + excluded.requests,
           errors = upstream_minutes.errors + excluded.errors,
           seconds = upstream_minutes.seconds + excluded.seconds,
           slow = upstream_minutes.slow + excluded.slow`,
        [minute, sample.requests, sample.errors, sample.seconds, sample.slow],
      );
    },

    async upstreamSince(sinceMinute) {
      const [row] = await driver.query(
        `SELECT COALESCE(SUM(requests), 0) AS requests, COALESCE(SUM(errors), 0) AS errors,
           COALESCE(SUM(seconds), 0) AS seconds, COALESCE(SUM(slow), 0) AS slow
         FROM upstream_minutes WHERE minute >= $1`,
        [sinceMinute],
      );
      return {
        requests: num(row?.requests ?? 0),
        errors: num(row?.errors ?? 0),
        seconds: num(row?.seconds ?? 0),
        slow: num(row?.slow ?? 0),
      };
    },

    async deleteUpstreamMinutes(beforeMinute) {
      const deleted = await driver.query('DELETE FROM upstream_minutes WHERE minute < $1 RETURNING minute', [
        beforeMinute,
      ]);
      return deleted.length;
    },

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

    async renewDashboardRequest(id, claimToken) {
      const at = now();
      const renewed = await driver.query(
        `UPDATE dashboard_requests SET lease_until = $3, updated_at = $4
         WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
        [id, claimToken, at + leaseMs, at],
      );
      return renewed.length > 0;
    },

    async finishDashboardRequest(id, claimToken, result) {
      const finished = await driver.query(
        `UPDATE dashboard_requests SET status = 'done', result = $3, claim_token = NULL, lease_until = NULL,
           updated_at = $4
         WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
        [id, claimToken, toStorableJson(result), now()],
      );
      return finished.length > 0;
    },

    async dashboardRequestResult(id) {
      const [row] = await driver.query('SELECT status, result FROM dashboard_requests WHERE id = $1', [id]);
      if (!row) return undefined;
      return row.status === 'done' ? json(row.result) : null;
    },

    async deleteDashboardRequests(before) {
      const deleted = await driver.query(
        'DELETE FROM dashboard_requests WHERE created_at < $1 RETURNING id',
        [before],
      );
      return deleted.length;
    },
  };
}
