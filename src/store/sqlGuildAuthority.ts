/** Guild authority snapshots (`guild_authority`, migration 15), merged into `createSqlStore`. */
import type { GuildAuthorityStore, StoredGuildRole } from './guildAuthorityTypes.ts';
import type { SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';

/** The stored roles, checked field by field: a row that does not read as roles is no snapshot. */
function toRoles(value: unknown): StoredGuildRole[] | null {
  if (!Array.isArray(value)) return null;
  const roles: StoredGuildRole[] = [];
  for (const raw of value) {
    const r = raw as Record<string, unknown> | null;
    if (
      typeof r?.id !== 'string' ||
      typeof r.name !== 'string' ||
      typeof r.position !== 'number' ||
      typeof r.permissions !== 'string' ||
      !/^\d+$/.test(r.permissions)
    )
      return null;
    roles.push({ id: r.id, name: r.name, position: r.position, permissions: BigInt(r.permissions) });
  }
  return roles;
}

export function createSqlGuildAuthority(
  driver: SqlDriver,
  o: { now: () => number; rows: SqlRows },
): GuildAuthorityStore {
  const { now, rows } = o;
  return {
    async saveGuildAuthority(snapshot) {
      // Bitfields as decimal text: JSON has no 64-bit integers.
      const roles = snapshot.roles.map((r) => ({ ...r, permissions: r.permissions.toString() }));
      await driver.query(
        `INSERT INTO guild_authority (guild_id, owner_id, roles, updated_at) VALUES ($1, $2, $3, $4)
         ON CONFLICT (guild_id) DO UPDATE SET
           owner_id = excluded.owner_id, roles = excluded.roles, updated_at = excluded.updated_at`,
        [snapshot.guildId, snapshot.ownerId, rows.toJson(roles), now()],
      );
    },

    async getGuildAuthority(guildId) {
      const [row] = await driver.query('SELECT * FROM guild_authority WHERE guild_id = $1', [guildId]);
      if (!row) return undefined;
      let roles: StoredGuildRole[] | null;
      try {
        roles = toRoles(rows.fromJson(row.roles));
      } catch {
        roles = null;
      }
      if (!roles) return undefined;
      return { guildId, ownerId: String(row.owner_id), roles, updatedAt: Number(row.updated_at) };
    },

    async deleteGuildAuthority(guildId) {
      const deleted = await driver.query(
        'DELETE FROM guild_authority WHERE guild_id = $1 RETURNING guild_id',
        [guildId],
      );
      return deleted.length > 0;
    },
  };
}
