import type { GuildLeaseStore } from './guildLeaseTypes.ts';
import type { SqlDriver } from './sql.ts';

/** Guild re-check leases (`guild_leases`, migration 4), merged into `createSqlStore`. */
export function createSqlGuildLeases(driver: SqlDriver, now: () => number, leaseMs: number): GuildLeaseStore {
  return {
    guildLeaseMs: leaseMs,

    async acquireGuildLease(guildId, holder, until) {
      const rows = await driver.query(
        `INSERT INTO guild_leases (guild_id, holder, lease_until) VALUES ($1, $2, $3)
         ON CONFLICT (guild_id) DO UPDATE SET holder = excluded.holder, lease_until = excluded.lease_until
         WHERE guild_leases.lease_until <= $4 OR guild_leases.holder = excluded.holder
         RETURNING holder`,
        [guildId, holder, until, now()],
      );
      return rows.length > 0;
    },

    async releaseGuildLease(guildId, holder) {
      await driver.query('DELETE FROM guild_leases WHERE guild_id = $1 AND holder = $2', [guildId, holder]);
    },

    async expireGuildLease(guildId, processId) {
      // A holder is `<process>/<part>`: compared by its prefix, not LIKE (a host name may hold `_`).
      const prefix = `${processId}/`;
      const rows = await driver.query(
        `UPDATE guild_leases SET lease_until = $4
         WHERE guild_id = $1 AND substr(holder, 1, $3) = $2 AND lease_until > $4 RETURNING guild_id`,
        [guildId, prefix, prefix.length, now()],
      );
      return rows.length > 0;
    },

    async lapsedGuildLeases(limit) {
      const rows = await driver.query(
        'SELECT guild_id, holder FROM guild_leases WHERE lease_until <= $1 ORDER BY lease_until, guild_id LIMIT $2',
        [now(), Math.max(1, Math.floor(limit))],
      );
      return rows.map((r) => ({ guildId: String(r.guild_id), holder: String(r.holder) }));
    },
  };
}
