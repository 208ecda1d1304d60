import type { SqlDriver } from './sql.ts';
import type { VerifyPanelStore } from './verifyPanelTypes.ts';

/** The verify panels' message ids (`verify_panels`, migration 10), merged into `createSqlStore`. */
export function createSqlVerifyPanels(driver: SqlDriver, now: () => number): VerifyPanelStore {
  return {
    async getVerifyPanel(guildId, channelId) {
      const [row] = await driver.query(
        'SELECT message_id FROM verify_panels WHERE guild_id = $1 AND channel_id = $2',
        [guildId, channelId],
      );
      return row ? String(row.message_id) : undefined;
    },

    async saveVerifyPanel(guildId, channelId, messageId) {
      await driver.query(
        `INSERT INTO verify_panels (guild_id, channel_id, message_id, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (guild_id, channel_id)
         DO UPDATE SET message_id = excluded.message_id, updated_at = excluded.updated_at`,
        [guildId, channelId, messageId, now()],
      );
    },
  };
}
