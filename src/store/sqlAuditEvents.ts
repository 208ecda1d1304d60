import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { AuditQuery, GatingStore, HeldRole } from './types.ts';

const DEFAULT_AUDIT_LIMIT = 50;
const MAX_AUDIT_LIMIT = 500;
const DEFAULT_PAGE_LIMIT = 500;
const MAX_PAGE_LIMIT = 1_000;

const pageLimit = (limit: number | undefined) =>
  Math.min(MAX_PAGE_LIMIT, Math.max(1, Math.floor(limit ?? DEFAULT_PAGE_LIMIT)));

/** The audit log (`audit_events`), merged into `createSqlStore`. */
/**
 * The roles members hold by the audit trail, a page after (user, role): each member's latest given role
 * with no later given or removed event for that member and role (audit_events_by_member_role, migration
 * 19, finds those in the member's own events).
 */
export const HELD_ROLES_SQL = `SELECT e.user_id, e.role_id, e.reason, e.created_at FROM audit_events e
  WHERE e.guild_id = $1 AND e.kind = 'role_added' AND e.user_id IS NOT NULL AND e.role_id IS NOT NULL
    AND (e.user_id > $2 OR (e.user_id = $2 AND e.role_id > $3))
    AND NOT EXISTS (
      SELECT 1 FROM audit_events l
      WHERE l.guild_id = e.guild_id AND l.user_id = e.user_id AND l.role_id = e.role_id
        AND l.kind IN ('role_added', 'role_removed')
        AND (l.created_at > e.created_at OR (l.created_at = e.created_at AND l.id > e.id)))
  ORDER BY e.user_id, e.role_id LIMIT $4`;

export function createSqlAuditEvents(
  driver: SqlDriver,
  rows: SqlRows,
): Pick<
  GatingStore,
  'addAuditEvent' | 'listAuditEvents' | 'pageAuditEvents' | 'listHeldRoles' | 'deleteAuditEvents'
> {
  const { toAudit, insertAudit, str, num } = rows;
  return {
    async addAuditEvent(event) {
      // The event and its daily count land together.
      return driver.transaction((tx) => insertAudit(tx, event));
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

    async pageAuditEvents(q) {
      const after = q.after ?? { createdAt: q.since, id: -1 };
      const rows = await driver.query(
        `SELECT * FROM audit_events
         WHERE guild_id = $1 AND created_at >= $2 AND (created_at, id) > ($3, $4)
         ORDER BY created_at, id LIMIT $5`,
        [q.guildId, q.since, after.createdAt, after.id, pageLimit(q.limit)],
      );
      return rows.map(toAudit);
    },

    async listHeldRoles(guildId, o = {}) {
      const after = o.after ?? { userId: '', roleId: '' };
      const rows = await driver.query(HELD_ROLES_SQL, [
        guildId,
        after.userId,
        after.roleId,
        pageLimit(o.limit),
      ]);
      return rows.map(
        (r): HeldRole => ({
          userId: str(r.user_id),
          roleId: str(r.role_id),
          reason: str(r.reason),
          at: num(r.created_at),
        }),
      );
    },

    async deleteAuditEvents(before) {
      const rows = await driver.query('DELETE FROM audit_events WHERE created_at < $1 RETURNING id', [
        before,
      ]);
      return rows.length;
    },
  };
}
