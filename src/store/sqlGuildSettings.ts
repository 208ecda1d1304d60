/** Each guild's gating settings (`guild_settings`), merged into `createSqlStore`. */
import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { GatingStore, GuildSettingsInput } from './types.ts';

export type GuildSettingsStore = Pick<
  GatingStore,
  'getGuildSettings' | 'saveGuildSettings' | 'listGuildSettings' | 'markFullSync'
>;

export function createSqlGuildSettings(
  driver: SqlDriver,
  o: { now: () => number; rows: SqlRows },
): GuildSettingsStore {
  const { now } = o;
  const { first, toSettings, insertAudit } = o.rows;
  return {
    async getGuildSettings(guildId) {
      const rows = await driver.query('SELECT * FROM guild_settings WHERE guild_id = $1', [guildId]);
      return first(rows, toSettings);
    },

    async saveGuildSettings(s: GuildSettingsInput, actor) {
      return driver.transaction(async (tx) => {
        const at = now();
        const rows = await tx.query(
          `INSERT INTO guild_settings (guild_id, enabled, human_role_id, spam_role_id, risky_role_id,
             min_score, spam_removes_human, log_channel_id, updated_at, min_account_age_days, min_join_age_days)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (guild_id) DO UPDATE SET
             enabled = excluded.enabled, human_role_id = excluded.human_role_id,
             spam_role_id = excluded.spam_role_id, risky_role_id = excluded.risky_role_id,
             min_score = excluded.min_score, spam_removes_human = excluded.spam_removes_human,
             log_channel_id = excluded.log_channel_id, updated_at = excluded.updated_at,
             min_account_age_days = excluded.min_account_age_days, min_join_age_days = excluded.min_join_age_days
           RETURNING *`,
          [
            s.guildId,
            s.enabled,
            s.humanRoleId,
            s.spamRoleId,
            s.riskyRoleId,
            s.minScore,
            s.spamRemovesHuman,
            s.logChannelId,
            at,
            s.minAccountAgeDays || null,
            s.minJoinAgeDays || null,
          ],
        );
        const saved = first(rows, toSettings);
        if (!saved) throw new Error('settings upsert returned no row');
        if (actor) {
          const { lastFullSyncAt: _sync, updatedAt: _updated, ...settings } = saved;
          await insertAudit(tx, {
            guildId: s.guildId,
            userId: actor.userId,
            kind: 'settings_changed',
            reason: actor.reason,
            details: settings,
            createdAt: at,
          });
        }
        return saved;
      });
    },

    async listGuildSettings(o = {}) {
      const rows = o.enabledOnly
        ? await driver.query('SELECT * FROM guild_settings WHERE enabled = $1 ORDER BY guild_id', [true])
        : await driver.query('SELECT * FROM guild_settings ORDER BY guild_id');
      return rows.map(toSettings);
    },

    async markFullSync(guildId, at) {
      await driver.query('UPDATE guild_settings SET last_full_sync_at = $2 WHERE guild_id = $1', [
        guildId,
        at,
      ]);
    },
  };
}
