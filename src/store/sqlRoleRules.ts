/** Role rules (`gating_rules`, migration 13), merged into `createSqlStore`. */

import type { RoleRuleStore, StoredRuleCondition } from './roleRuleTypes.ts';
import type { Row, SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';

const toCondition = (r: Row): StoredRuleCondition => ({
  guildId: String(r.guild_id),
  roleId: String(r.role_id),
  condition: String(r.condition),
  match: String(r.match_mode) === 'any' ? 'any' : 'all',
  addedBy: String(r.added_by),
  addedAt: Number(r.added_at),
});

export function createSqlRoleRules(
  driver: SqlDriver,
  o: { now: () => number; rows: SqlRows },
): RoleRuleStore {
  const { now, rows } = o;
  return {
    async addRuleCondition(input) {
      return driver.transaction(async (tx) => {
        const at = now();
        const [counted] = await tx.query('SELECT COUNT(*) AS n FROM gating_rules WHERE guild_id = $1', [
          input.guildId,
        ]);
        const [own] = await tx.query(
          'SELECT match_mode FROM gating_rules WHERE guild_id = $1 AND role_id = $2 LIMIT 1',
          [input.guildId, input.roleId],
        );
        const match = input.match ?? (own ? String(own.match_mode) : 'all');
        const exists = await tx.query(
          'SELECT 1 FROM gating_rules WHERE guild_id = $1 AND role_id = $2 AND condition = $3',
          [input.guildId, input.roleId, input.condition],
        );
        if (exists.length === 0 && Number(counted?.n ?? 0) >= input.maxPerGuild) {
          return { created: false, full: true };
        }
        // The primary key decides: of two concurrent adds, one inserts and the other finds its row.
        const inserted = await tx.query(
          `INSERT INTO gating_rules (guild_id, role_id, condition, match_mode, added_by, added_at)
           VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (guild_id, role_id, condition) DO NOTHING RETURNING role_id`,
          [input.guildId, input.roleId, input.condition, match, input.addedBy, at],
        );
        if (input.match !== null) {
          await tx.query('UPDATE gating_rules SET match_mode = $3 WHERE guild_id = $1 AND role_id = $2', [
            input.guildId,
            input.roleId,
            input.match,
          ]);
        }
        const created = inserted.length > 0;
        if (created || (own && input.match !== null && String(own.match_mode) !== input.match)) {
          await rows.insertAudit(tx, {
            guildId: input.guildId,
            userId: input.addedBy,
            kind: 'rule_added',
            roleId: input.roleId,
            reason: `role rule: ${input.condition} (match ${match}) added`,
            details: { condition: input.condition, match },
            createdAt: at,
          });
        }
        return { created, full: false };
      });
    },

    async removeRuleCondition(key, actorId) {
      return driver.transaction(async (tx) => {
        const gone = await tx.query(
          'DELETE FROM gating_rules WHERE guild_id = $1 AND role_id = $2 AND condition = $3 RETURNING role_id',
          [key.guildId, key.roleId, key.condition],
        );
        if (gone.length === 0) return false;
        await rows.insertAudit(tx, {
          guildId: key.guildId,
          userId: actorId,
          kind: 'rule_removed',
          roleId: key.roleId,
          reason: `role rule: ${key.condition} removed`,
          details: { condition: key.condition },
        });
        return true;
      });
    },

    async listRuleConditions(guildId) {
      const found = await driver.query(
        'SELECT * FROM gating_rules WHERE guild_id = $1 ORDER BY added_at, role_id, condition',
        [guildId],
      );
      return found.map(toCondition);
    },
  };
}
