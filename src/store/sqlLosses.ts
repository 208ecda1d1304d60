/** Pending losses (`pending_losses`) and the audit log (`audit_events`), merged into `createSqlStore`. */
import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { AuditQuery, GatingStore } from './types.ts';

const DEFAULT_AUDIT_LIMIT = 50;
const MAX_AUDIT_LIMIT = 500;

type LossAuditStore = Pick<
  GatingStore,
  | 'listPendingLosses'
  | 'notePendingLoss'
  | 'holdPendingLosses'
  | 'clearPendingLoss'
  | 'addAuditEvent'
  | 'listAuditEvents'
  | 'deleteAuditEvents'
>;

export function createSqlLosses(driver: SqlDriver, rows: SqlRows): LossAuditStore {
  const { toLoss, toAudit, first, insertAudit } = rows;
  return {
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
  };
}
