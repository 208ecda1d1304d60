import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { AuditQuery, GatingStore } from './types.ts';

const DEFAULT_AUDIT_LIMIT = 50;
const MAX_AUDIT_LIMIT = 500;

/** The audit log (`audit_events`), merged into `createSqlStore`. */
export function createSqlAuditEvents(
  driver: SqlDriver,
  rows: SqlRows,
): Pick<GatingStore, 'addAuditEvent' | 'listAuditEvents' | 'deleteAuditEvents'> {
  const { toAudit, insertAudit } = rows;
  return {
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
  };
}
