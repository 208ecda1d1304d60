/** Gating exemptions (`gating_exemptions`, migration 11), merged into `createSqlStore`. */

import type { Exemption, ExemptionStore } from './exemptionTypes.ts';
import type { Row, SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';

const toExemption = (r: Row): Exemption => ({
  guildId: String(r.guild_id),
  kind: String(r.kind) === 'role' ? 'role' : 'member',
  targetId: String(r.target_id),
  addedBy: String(r.added_by),
  addedAt: Number(r.added_at),
});

const KEY = 'guild_id = $1 AND kind = $2 AND target_id = $3';

export function createSqlExemptions(
  driver: SqlDriver,
  o: { now: () => number; rows: SqlRows },
): ExemptionStore {
  const { now, rows } = o;
  return {
    async addExemption(input) {
      return driver.transaction(async (tx) => {
        const at = now();
        const key = [input.guildId, input.kind, input.targetId];
        // The primary key decides: of two concurrent adds, one inserts and the other finds its row.
        const inserted = await tx.query(
          `INSERT INTO gating_exemptions (guild_id, kind, target_id, added_by, added_at)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (guild_id, kind, target_id) DO NOTHING RETURNING *`,
          [...key, input.addedBy, at],
        );
        const created = inserted.length > 0;
        const row = inserted[0] ?? (await tx.query(`SELECT * FROM gating_exemptions WHERE ${KEY}`, key))[0];
        if (!row) throw new Error('exemption upsert returned no row');
        if (created) {
          await rows.insertAudit(tx, {
            guildId: input.guildId,
            userId: input.addedBy,
            kind: 'exemption_added',
            ...(input.kind === 'role' ? { roleId: input.targetId } : {}),
            reason: `${input.kind} ${input.targetId} exempt from gating removals`,
            details: { kind: input.kind, targetId: input.targetId },
            createdAt: at,
          });
        }
        return { exemption: toExemption(row), created };
      });
    },

    async removeExemption(key, actorId) {
      return driver.transaction(async (tx) => {
        const gone = await tx.query(`DELETE FROM gating_exemptions WHERE ${KEY} RETURNING target_id`, [
          key.guildId,
          key.kind,
          key.targetId,
        ]);
        if (gone.length === 0) return false;
        await rows.insertAudit(tx, {
          guildId: key.guildId,
          userId: actorId,
          kind: 'exemption_removed',
          ...(key.kind === 'role' ? { roleId: key.targetId } : {}),
          reason: `${key.kind} ${key.targetId} no longer exempt from gating removals`,
          details: { kind: key.kind, targetId: key.targetId },
        });
        return true;
      });
    },

    async listExemptions(guildId) {
      const found = await driver.query(
        `SELECT * FROM gating_exemptions WHERE guild_id = $1 ORDER BY kind, added_at, target_id`,
        [guildId],
      );
      return found.map(toExemption);
    },
  };
}
