import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { GatingStore } from './types.ts';

/** Losses seen but not applied yet (`pending_losses`), merged into `createSqlStore`. */
export function createSqlPendingLosses(
  driver: SqlDriver,
  rows: SqlRows,
): Pick<GatingStore, 'listPendingLosses' | 'notePendingLoss' | 'holdPendingLosses' | 'clearPendingLoss'> {
  const { toLoss, first } = rows;
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
  };
}
