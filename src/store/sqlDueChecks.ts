/** Due checks (`gating_due_checks`, migration 12), merged into `createSqlStore`. */

import type { DueCheck, DueCheckStore } from './dueCheckTypes.ts';
import type { Row, SqlDriver } from './sql.ts';

const toDueCheck = (r: Row): DueCheck => ({
  guildId: String(r.guild_id),
  userId: String(r.user_id),
  dueAt: Number(r.due_at),
});

export function createSqlDueChecks(driver: SqlDriver): DueCheckStore {
  return {
    async saveDueCheck(check) {
      await driver.query(
        `INSERT INTO gating_due_checks (guild_id, user_id, due_at) VALUES ($1, $2, $3)
         ON CONFLICT (guild_id, user_id) DO UPDATE SET due_at = excluded.due_at`,
        [check.guildId, check.userId, check.dueAt],
      );
    },

    async listDueChecks(at, limit) {
      const rows = await driver.query(
        'SELECT * FROM gating_due_checks WHERE due_at <= $1 ORDER BY due_at, guild_id, user_id LIMIT $2',
        [at, limit],
      );
      return rows.map(toDueCheck);
    },

    async deleteDueCheck(check) {
      await driver.query(
        'DELETE FROM gating_due_checks WHERE guild_id = $1 AND user_id = $2 AND due_at = $3',
        [check.guildId, check.userId, check.dueAt],
      );
    },
  };
}
