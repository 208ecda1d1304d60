import { randomBytes } from 'node:crypto';
import type { HandoffStore } from './handoffTypes.ts';
import { type Row, type SqlDriver, toStorableJson } from './sql.ts';
import type { JsonValue } from './types.ts';

/** The interaction hand-off queue (`interaction_handoffs`, migration 14), merged into `createSqlStore`. */
export function createSqlHandoffs(driver: SqlDriver, now: () => number, leaseMs: number): HandoffStore {
  const json = (v: unknown): JsonValue =>
    (driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue;

  return {
    async enqueueHandoff(guildId, interaction) {
      const [row] = await driver.query(
        `INSERT INTO interaction_handoffs (guild_id, interaction, created_at) VALUES ($1, $2, $3) RETURNING id`,
        [guildId, toStorableJson(interaction), now()],
      );
      if (!row) throw new Error('interaction hand-off insert returned no row');
      return Number(row.id);
    },

    async openHandoffs(limit) {
      const rows = await driver.query(
        `SELECT id, guild_id FROM interaction_handoffs
         WHERE lease_until IS NULL OR lease_until <= $1 ORDER BY id LIMIT $2`,
        [now(), Math.max(1, Math.floor(limit))],
      );
      return rows.map((r: Row) => ({ id: Number(r.id), guildId: String(r.guild_id) }));
    },

    async claimHandoff(id) {
      const at = now();
      const token = randomBytes(12).toString('hex');
      const [row] = await driver.query(
        `UPDATE interaction_handoffs SET claim_token = $2, lease_until = $3, attempts = attempts + 1
         WHERE id = $1 AND (lease_until IS NULL OR lease_until <= $4) RETURNING *`,
        [id, token, at + leaseMs, at],
      );
      if (!row) return null;
      return {
        id: Number(row.id),
        guildId: String(row.guild_id),
        interaction: json(row.interaction),
        createdAt: Number(row.created_at),
        attempts: Number(row.attempts),
        claimToken: token,
      };
    },

    async finishHandoff(id, claimToken) {
      const rows = await driver.query(
        'DELETE FROM interaction_handoffs WHERE id = $1 AND claim_token = $2 RETURNING id',
        [id, claimToken],
      );
      return rows.length > 0;
    },
  };
}
