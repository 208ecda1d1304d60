/** The dashboard's reads, its request queue (migration 17) and sign-outs (20), merged into `createSqlStore`. */
import type { DashboardSignOutStore } from './dashboardSignOutTypes.ts';
import type { DashboardStore, FilteredAuditQuery } from './dashboardTypes.ts';
import type { SqlDriver, SqlParam } from './sql.ts';
import { createSqlDashboardRequests } from './sqlDashboardRequests.ts';
import { createSqlDashboardSignOuts } from './sqlDashboardSignOuts.ts';
import type { SqlRows } from './sqlRows.ts';

const DEFAULT_PAGE = 50;
const MAX_PAGE = 500;
const MAX_METRICS = 16;

export function createSqlDashboard(
  driver: SqlDriver,
  o: { now: () => number; leaseMs: number; rows: SqlRows },
): DashboardStore & DashboardSignOutStore {
  const { now, leaseMs, rows } = o;
  const { toAudit, toLoss, num } = rows;
  return {
    ...createSqlDashboardSignOuts(driver),
    ...createSqlDashboardRequests(driver, { now, leaseMs, rows }),
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
  };
}
