/**
 * The identities a Linked Roles account proved before and may still carry a flag on
 * (`role_connection_holds`, migrations 7 and 8), merged into `createSqlRoleConnections`.
 */
import type { Row, SqlDriver, SqlExecutor } from './sql.ts';
import type { HeldFlag, RoleConnectionHold, RoleConnectionRecord, RoleConnectionStore } from './types.ts';

const HELD_FLAGS: readonly HeldFlag[] = ['isSpam', 'isRisky'];

/**
 * The flags written metadata may carry: those not written as "1" (not spam, not risky), and both when
 * nothing was written yet.
 */
function flagsOf(metadata: Record<string, string> | null): HeldFlag[] {
  if (metadata === null) return [...HELD_FLAGS];
  return HELD_FLAGS.filter((flag) => metadata[flag === 'isSpam' ? 'not_spam' : 'not_risky'] !== '1');
}

const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const toHold = (r: Row): RoleConnectionHold => ({
  userId: String(r.user_id),
  identity: String(r.identity),
  platform: String(r.platform),
  address: optStr(r.address),
  flags: String(r.flags ?? '')
    .split(',')
    .filter((f): f is HeldFlag => (HELD_FLAGS as readonly string[]).includes(f)),
  since: Number(r.since),
  clearSeenAt: optNum(r.clear_seen_at),
});

/**
 * A live connection's identity stops backing it: when its metadata may carry a flag, keep the identity
 * as a hold (flags merged into an earlier hold of it, whose clear sighting no longer stands).
 */
export async function holdIfFlagged(tx: SqlExecutor, c: RoleConnectionRecord, at: number): Promise<void> {
  const flags = flagsOf(c.metadata);
  if (flags.length === 0) return;
  const [earlier] = await tx.query(
    'SELECT * FROM role_connection_holds WHERE user_id = $1 AND identity = $2',
    [c.userId, c.identity],
  );
  const merged = HELD_FLAGS.filter(
    (f) => flags.includes(f) || (earlier && toHold(earlier).flags.includes(f)),
  );
  await tx.query(
    `INSERT INTO role_connection_holds (user_id, identity, platform, address, flags, since, clear_seen_at)
     VALUES ($1, $2, $3, $4, $5, $6, NULL)
     ON CONFLICT (user_id, identity) DO UPDATE SET flags = excluded.flags, clear_seen_at = NULL`,
    [c.userId, c.identity, c.platform, c.address, merged.join(','), at],
  );
}

export function createSqlRoleConnectionHolds(
  driver: SqlDriver,
): Pick<
  RoleConnectionStore,
  | 'addRoleConnectionHold'
  | 'noteRoleConnectionHoldClear'
  | 'listRoleConnectionHolds'
  | 'removeRoleConnectionHold'
> {
  return {
    async addRoleConnectionHold(h) {
      await driver.query(
        `INSERT INTO role_connection_holds (user_id, identity, platform, address, flags, since)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, identity) DO NOTHING`,
        [h.userId, h.identity, h.platform, h.address, h.flags.join(','), h.since],
      );
    },

    async noteRoleConnectionHoldClear(userId, identity, seenAt) {
      const rows = await driver.query(
        `UPDATE role_connection_holds SET clear_seen_at = $3 WHERE user_id = $1 AND identity = $2
         RETURNING user_id`,
        [userId, identity, seenAt],
      );
      return rows.length > 0;
    },

    async listRoleConnectionHolds(userId) {
      const rows = await driver.query(
        'SELECT * FROM role_connection_holds WHERE user_id = $1 ORDER BY since, identity',
        [userId],
      );
      return rows.map(toHold);
    },

    async removeRoleConnectionHold(userId, identity) {
      const rows = await driver.query(
        'DELETE FROM role_connection_holds WHERE user_id = $1 AND identity = $2 RETURNING user_id',
        [userId, identity],
      );
      return rows.length > 0;
    },
  };
}
