/** Guild authority snapshots (`guild_authority`, migration 15), merged into `createSqlStore`. */
import type { GuildAuthorityStore, StoredGuildChannel, StoredGuildRole } from './guildAuthorityTypes.ts';
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
    roles.push({
      id: r.id,
      name: r.name,
      position: r.position,
      permissions: BigInt(r.permissions),
      ...(typeof r.managed === 'boolean' ? { managed: r.managed } : {}),
    });
  }
  return roles;
}

/** The stored channels; anything that does not read as channels is none. */
function toChannels(value: unknown): StoredGuildChannel[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw) => {
    const c = raw as Record<string, unknown> | null;
    return typeof c?.id === 'string' && typeof c.name === 'string' ? [{ id: c.id, name: c.name }] : [];
  });
}

const MAX_LISTED = 200;

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
        `INSERT INTO guild_authority (guild_id, owner_id, roles, name, icon, channels, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)
         ON CONFLICT (guild_id) DO UPDATE SET
           owner_id = excluded.owner_id, roles = excluded.roles, name = excluded.name, icon = excluded.icon,
           channels = excluded.channels, updated_at = excluded.updated_at`,
        [
          snapshot.guildId,
          snapshot.ownerId,
          rows.toJson(roles),
          snapshot.name ?? null,
          snapshot.icon ?? null,
          rows.toJson(snapshot.channels ?? []),
          now(),
        ],
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
      let channels: StoredGuildChannel[];
      try {
        channels = toChannels(rows.fromJson(row.channels));
      } catch {
        channels = [];
      }
      return {
        guildId,
        ownerId: String(row.owner_id),
        roles,
        name: rows.optStr(row.name),
        icon: rows.optStr(row.icon),
        channels,
        updatedAt: Number(row.updated_at),
      };
    },

    async listGuildAuthorities(guildIds) {
      const ids = [...new Set(guildIds)].slice(0, MAX_LISTED);
      if (ids.length === 0) return [];
      const list = ids.map((_, i) => `$${i + 1}`).join(', ');
      const found = await driver.query(
        `SELECT guild_id, name, icon FROM guild_authority WHERE guild_id IN (${list})`,
        ids,
      );
      return found.map((r) => ({
        guildId: String(r.guild_id),
        name: rows.optStr(r.name),
        icon: rows.optStr(r.icon),
      }));
    },

    async listGuildAuthorityIds() {
      const found = await driver.query('SELECT guild_id FROM guild_authority ORDER BY guild_id');
      return found.map((r) => String(r.guild_id));
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
