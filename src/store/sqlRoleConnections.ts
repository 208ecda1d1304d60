import { type Row, type SqlDriver, type SqlExecutor, toStorableJson } from './sql.ts';
import { claimHoldings } from './sqlHoldings.ts';
import type {
  HeldFlag,
  HoldingRefusal,
  ProofMethod,
  RoleConnectionHold,
  RoleConnectionInput,
  RoleConnectionRecord,
  RoleConnectionStore,
} from './types.ts';

/** The registry scope of Linked Roles: the account in every server (the challenges' `LINKED_ROLES_SCOPE`). */
const APP_SCOPE = '0';

const DEFAULT_LIST_LIMIT = 200;
const MAX_LIST_LIMIT = 1_000;
const HELD_FLAGS: readonly HeldFlag[] = ['isSpam', 'isRisky'];

/**
 * The flags written metadata may carry: those not written as "1" (not spam, not risky), and both when
 * nothing was written yet.
 */
function flagsOf(metadata: Record<string, string> | null): HeldFlag[] {
  if (metadata === null) return [...HELD_FLAGS];
  return HELD_FLAGS.filter((flag) => metadata[flag === 'isSpam' ? 'not_spam' : 'not_risky'] !== '1');
}

/** The Linked Roles connections table (`role_connections`, migration 5), merged into `createSqlStore`. */
export function createSqlRoleConnections(driver: SqlDriver, now: () => number): RoleConnectionStore {
  const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
  const toRecord = (r: Row): RoleConnectionRecord => ({
    userId: String(r.user_id),
    identity: String(r.identity),
    platform: String(r.platform),
    address: optStr(r.address),
    proofMethod: (optStr(r.proof_method) ?? 'record') as ProofMethod,
    provenAt: Number(r.proven_at),
    sealedAccessToken: optStr(r.sealed_access_token),
    sealedRefreshToken: optStr(r.sealed_refresh_token),
    accessExpiresAt: Number(r.access_expires_at),
    metadata:
      r.metadata === null || r.metadata === undefined
        ? null
        : ((driver.dialect.parsesJson ? r.metadata : JSON.parse(String(r.metadata))) as Record<
            string,
            string
          >),
    writtenAt: optNum(r.written_at),
    staleSince: optNum(r.stale_since),
    lossSeenAt: optNum(r.loss_seen_at),
    releasedAt: optNum(r.released_at),
    releasedReason: optStr(r.released_reason),
    recordLossSeenAt: optNum(r.record_loss_seen_at),
    updatedAt: Number(r.updated_at),
  });
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
  async function holdIfFlagged(tx: SqlExecutor, row: Row, at: number): Promise<void> {
    const c = toRecord(row);
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

  /**
   * Claim the connection's identity and address app-wide, release the connections that lost one to it,
   * then write it: all in the caller's transaction.
   */
  async function writeConnection(
    tx: SqlExecutor,
    c: RoleConnectionInput,
    o: { force: boolean; reason: string; challengeIssuedAt?: number },
  ): Promise<
    { record: RoleConnectionRecord; displaced: RoleConnectionRecord[] } | { refusal: HoldingRefusal }
  > {
    const at = now();
    const claimed = await claimHoldings(
      tx,
      driver.dialect.subjectLock,
      {
        scope: APP_SCOPE,
        userId: c.userId,
        identity: c.identity,
        address: c.address,
        proofMethod: c.proofMethod,
        at,
        ...(c.aliases ? { aliases: c.aliases } : {}),
        ...(o.challengeIssuedAt === undefined ? {} : { challengeIssuedAt: o.challengeIssuedAt }),
      },
      o.force,
    );
    if ('refusal' in claimed) return claimed;
    const displaced: RoleConnectionRecord[] = [];
    for (const lost of claimed.displaced) {
      // An identity holding is released with the connection that brought it (an alias's is another identity).
      const column = lost.kind === 'identity' ? 'identity' : 'address';
      const rows = await tx.query(
        `UPDATE role_connections SET released_at = $3, released_reason = $4, loss_seen_at = NULL,
           record_loss_seen_at = NULL, updated_at = $3
         WHERE user_id = $1 AND ${column} = $2 AND released_at IS NULL RETURNING *`,
        [lost.userId, lost.kind === 'identity' ? lost.identity : lost.subject, at, o.reason],
      );
      for (const row of rows) {
        await holdIfFlagged(tx, row, at);
        displaced.push(toRecord(row));
      }
      await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, lost.userId]);
    }
    // The identity this account proved before, replaced now, keeps its flags.
    const [before] = await tx.query(
      'SELECT * FROM role_connections WHERE user_id = $1 AND released_at IS NULL AND identity <> $2',
      [c.userId, c.identity],
    );
    if (before) await holdIfFlagged(tx, before, at);
    // One connection per account: what it proved before is no longer held.
    await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2 AND identity <> $3', [
      APP_SCOPE,
      c.userId,
      c.identity,
    ]);
    if (c.address === null) {
      await tx.query(`DELETE FROM holdings WHERE scope = $1 AND user_id = $2 AND kind = 'address'`, [
        APP_SCOPE,
        c.userId,
      ]);
    } else {
      await tx.query(
        `DELETE FROM holdings WHERE scope = $1 AND user_id = $2 AND kind = 'address' AND subject <> $3`,
        [APP_SCOPE, c.userId, c.address],
      );
    }
    const rows = await tx.query(
      `INSERT INTO role_connections (user_id, identity, platform, address, proof_method, proven_at,
         sealed_access_token, sealed_refresh_token, access_expires_at, metadata, written_at, stale_since, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
       ON CONFLICT (user_id) DO UPDATE SET identity = excluded.identity, platform = excluded.platform,
         address = excluded.address, proof_method = excluded.proof_method, proven_at = excluded.proven_at,
         sealed_access_token = excluded.sealed_access_token, sealed_refresh_token = excluded.sealed_refresh_token,
         access_expires_at = excluded.access_expires_at, metadata = excluded.metadata,
         written_at = excluded.written_at, stale_since = excluded.stale_since, loss_seen_at = NULL,
         released_at = NULL, released_reason = NULL, record_loss_seen_at = NULL,
         updated_at = excluded.updated_at
       RETURNING *`,
      [
        c.userId,
        c.identity,
        c.platform,
        c.address,
        c.proofMethod,
        c.provenAt,
        c.sealedAccessToken,
        c.sealedRefreshToken,
        c.accessExpiresAt,
        toStorableJson(c.metadata),
        c.writtenAt,
        c.staleSince,
        at,
      ],
    );
    const [row] = rows;
    if (!row) throw new Error('role connection upsert returned no row');
    return { record: toRecord(row), displaced };
  }
  const changed = (rows: Row[]) => rows.length > 0;

  return {
    async saveRoleConnection(c) {
      const written = await driver.transaction((tx) =>
        writeConnection(tx, c, { force: true, reason: 'proven_elsewhere' }),
      );
      if ('refusal' in written) throw new Error('a forced role connection write was refused');
      return written.record;
    },

    async proveRoleConnection(c, o) {
      return driver.transaction((tx) => writeConnection(tx, c, { force: false, ...o }));
    },

    async releaseRoleConnection(userId, reason, at) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE role_connections SET released_at = $2, released_reason = $3, loss_seen_at = NULL,
             record_loss_seen_at = NULL, updated_at = $2
           WHERE user_id = $1 AND released_at IS NULL RETURNING *`,
          [userId, at, reason],
        );
        for (const row of rows) await holdIfFlagged(tx, row, at);
        await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, userId]);
        return changed(rows);
      });
    },

    async addRoleConnectionHold(h) {
      await driver.query(
        `INSERT INTO role_connection_holds (user_id, identity, platform, address, flags, since)
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (user_id, identity) DO NOTHING`,
        [h.userId, h.identity, h.platform, h.address, h.flags.join(','), h.since],
      );
    },

    async noteRoleConnectionHoldClear(userId, identity, seenAt) {
      return changed(
        await driver.query(
          `UPDATE role_connection_holds SET clear_seen_at = $3 WHERE user_id = $1 AND identity = $2
           RETURNING user_id`,
          [userId, identity, seenAt],
        ),
      );
    },

    async noteRoleConnectionRecordLoss(userId, seenAt) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET record_loss_seen_at = $2, updated_at = $3 WHERE user_id = $1
           RETURNING user_id`,
          [userId, seenAt, now()],
        ),
      );
    },

    async listRoleConnectionHolds(userId) {
      const rows = await driver.query(
        'SELECT * FROM role_connection_holds WHERE user_id = $1 ORDER BY since, identity',
        [userId],
      );
      return rows.map(toHold);
    },

    async removeRoleConnectionHold(userId, identity) {
      return changed(
        await driver.query(
          'DELETE FROM role_connection_holds WHERE user_id = $1 AND identity = $2 RETURNING user_id',
          [userId, identity],
        ),
      );
    },

    async getRoleConnection(userId) {
      const [row] = await driver.query('SELECT * FROM role_connections WHERE user_id = $1', [userId]);
      return row ? toRecord(row) : undefined;
    },

    async listRoleConnections(opts = {}) {
      const limit = Math.min(Math.max(1, opts.limit ?? DEFAULT_LIST_LIMIT), MAX_LIST_LIMIT);
      const rows = await driver.query(
        `SELECT * FROM role_connections WHERE user_id > $1 ${opts.includeStale ? '' : 'AND stale_since IS NULL'}
         ORDER BY user_id LIMIT $2`,
        [opts.afterUserId ?? '', limit],
      );
      return rows.map(toRecord);
    },

    async updateRoleConnectionTokens(userId, t) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET sealed_access_token = $2, sealed_refresh_token = $3, access_expires_at = $4,
             updated_at = $5 WHERE user_id = $1 RETURNING user_id`,
          [userId, t.sealedAccessToken, t.sealedRefreshToken, t.accessExpiresAt, now()],
        ),
      );
    },

    async recordRoleConnectionWrite(userId, metadata, at) {
      return changed(
        await driver.query(
          'UPDATE role_connections SET metadata = $2, written_at = $3, updated_at = $4 WHERE user_id = $1 RETURNING user_id',
          [userId, toStorableJson(metadata), at, now()],
        ),
      );
    },

    async noteRoleConnectionLoss(userId, seenAt) {
      return changed(
        await driver.query(
          'UPDATE role_connections SET loss_seen_at = $2, updated_at = $3 WHERE user_id = $1 RETURNING user_id',
          [userId, seenAt, now()],
        ),
      );
    },

    async markRoleConnectionStale(userId, at) {
      return changed(
        await driver.query(
          `UPDATE role_connections SET stale_since = COALESCE(stale_since, $2), sealed_access_token = NULL,
             sealed_refresh_token = NULL, updated_at = $3 WHERE user_id = $1 RETURNING user_id`,
          [userId, at, now()],
        ),
      );
    },

    async deleteRoleConnection(userId, opts = {}) {
      return driver.transaction(async (tx) => {
        const rows =
          opts.notWrittenAfter === undefined
            ? await tx.query('DELETE FROM role_connections WHERE user_id = $1 RETURNING *', [userId])
            : await tx.query(
                `DELETE FROM role_connections WHERE user_id = $1 AND (written_at IS NULL OR written_at <= $2)
                 RETURNING *`,
                [userId, opts.notWrittenAfter],
              );
        for (const row of rows) {
          // A released connection's identity was held (or not) when it was released.
          if (row.released_at === null || row.released_at === undefined) await holdIfFlagged(tx, row, now());
        }
        if (rows.length > 0)
          await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, userId]);
        return changed(rows);
      });
    },
  };
}
