/** Due checks (`gating_due_checks`, migrations 12 and 23), merged into `createSqlStore`. */

import type { DueCheck, DueCheckStore } from './dueCheckTypes.ts';
import type { Row, SqlDriver, SqlExecutor } from './sql.ts';

const toDueCheck = (r: Row): DueCheck => ({
  guildId: String(r.guild_id),
  userId: String(r.user_id),
  dueAt: Number(r.due_at),
  ...(r.member_asked ? { memberAsked: true } : {}),
});

/**
 * In the caller's transaction: the member is due at `check.dueAt`, or at the earlier time already saved.
 * A proof saves "now" with its link, so the roles it decides follow even if the sync after it fails.
 */
export async function dueNoLaterThan(tx: SqlExecutor, check: DueCheck): Promise<void> {
  await tx.query(
    `INSERT INTO gating_due_checks (guild_id, user_id, due_at) VALUES ($1, $2, $3)
     ON CONFLICT (guild_id, user_id) DO UPDATE SET due_at = CASE
       WHEN excluded.due_at < gating_due_checks.due_at THEN excluded.due_at ELSE gating_due_checks.due_at END`,
    [check.guildId, check.userId, check.dueAt],
  );
}

export function createSqlDueChecks(driver: SqlDriver): DueCheckStore {
  return {
    async saveDueCheck(check) {
      // A member's own request is not forgotten when a later time replaces the check's.
      await driver.query(
        `INSERT INTO gating_due_checks (guild_id, user_id, due_at, member_asked) VALUES ($1, $2, $3, $4)
         ON CONFLICT (guild_id, user_id) DO UPDATE SET due_at = excluded.due_at,
           member_asked = (excluded.member_asked OR gating_due_checks.member_asked)`,
        [check.guildId, check.userId, check.dueAt, check.memberAsked === true],
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
