/**
 * Linked Roles connections taken and given up, each in one transaction with the app-wide ownership
 * registry (`holdings`) and the holds of flagged identities; merged into `createSqlRoleConnections`.
 */
import { type Row, type SqlDriver, type SqlExecutor, toStorableJson } from './sql.ts';
import { claimHoldings } from './sqlHoldings.ts';
import { holdIfFlagged } from './sqlRoleConnectionHolds.ts';
import type {
  Holding,
  HoldingRefusal,
  RoleConnectionInput,
  RoleConnectionRecord,
  RoleConnectionStore,
} from './types.ts';

/** The registry scope of Linked Roles: the account in every server (the challenges' `LINKED_ROLES_SCOPE`). */
const APP_SCOPE = '0';

type ToRecord = (r: Row) => RoleConnectionRecord;

interface WriteOptions {
  force: boolean;
  reason: string;
  challengeIssuedAt?: number;
}

/** The connections that lost their identity or address to another account: released, their flags held. */
async function releaseDisplaced(
  tx: SqlExecutor,
  lostHoldings: Holding[],
  o: { at: number; reason: string; toRecord: ToRecord },
): Promise<RoleConnectionRecord[]> {
  const displaced: RoleConnectionRecord[] = [];
  for (const lost of lostHoldings) {
    // An identity holding is released with the connection that brought it (an alias's is another identity).
    const column = lost.kind === 'identity' ? 'identity' : 'address';
    const rows = await tx.query(
      `UPDATE role_connections SET released_at = $3, released_reason = $4, loss_seen_at = NULL,
         record_loss_seen_at = NULL, updated_at = $3
       WHERE user_id = $1 AND ${column} = $2 AND released_at IS NULL RETURNING *`,
      [lost.userId, lost.kind === 'identity' ? lost.identity : lost.subject, o.at, o.reason],
    );
    for (const row of rows) {
      const record = o.toRecord(row);
      await holdIfFlagged(tx, record, o.at);
      displaced.push(record);
    }
    await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, lost.userId]);
  }
  return displaced;
}

/** One connection per account: the identity (and address) it proved before is no longer held. */
async function forgetEarlierProof(
  tx: SqlExecutor,
  c: RoleConnectionInput,
  o: { at: number; toRecord: ToRecord },
): Promise<void> {
  // The identity this account proved before, replaced now, keeps its flags.
  const [before] = await tx.query(
    'SELECT * FROM role_connections WHERE user_id = $1 AND released_at IS NULL AND identity <> $2',
    [c.userId, c.identity],
  );
  if (before) await holdIfFlagged(tx, o.toRecord(before), o.at);
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
}

/** Create or replace the account's connection: live again, with nothing released or waiting. */
async function upsertConnection(tx: SqlExecutor, c: RoleConnectionInput, at: number): Promise<Row> {
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
  return row;
}

/**
 * Claim the connection's identity and address app-wide, release the connections that lost one to it,
 * then write it: all in the caller's transaction.
 */
async function writeConnection(
  tx: SqlExecutor,
  c: RoleConnectionInput,
  o: WriteOptions,
  d: { subjectLock: string | null; now: () => number; toRecord: ToRecord },
): Promise<
  { record: RoleConnectionRecord; displaced: RoleConnectionRecord[] } | { refusal: HoldingRefusal }
> {
  const at = d.now();
  const claimed = await claimHoldings(
    tx,
    d.subjectLock,
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
  const displaced = await releaseDisplaced(tx, claimed.displaced, {
    at,
    reason: o.reason,
    toRecord: d.toRecord,
  });
  await forgetEarlierProof(tx, c, { at, toRecord: d.toRecord });
  return { record: d.toRecord(await upsertConnection(tx, c, at)), displaced };
}

export function createSqlRoleConnectionClaims(
  driver: SqlDriver,
  o: { now: () => number; toRecord: ToRecord },
): Pick<
  RoleConnectionStore,
  'saveRoleConnection' | 'proveRoleConnection' | 'releaseRoleConnection' | 'deleteRoleConnection'
> {
  const { now, toRecord } = o;
  const write = (tx: SqlExecutor, c: RoleConnectionInput, options: WriteOptions) =>
    writeConnection(tx, c, options, { subjectLock: driver.dialect.subjectLock, now, toRecord });

  return {
    async saveRoleConnection(c) {
      const written = await driver.transaction((tx) =>
        write(tx, c, { force: true, reason: 'proven_elsewhere' }),
      );
      if ('refusal' in written) throw new Error('a forced role connection write was refused');
      return written.record;
    },

    async proveRoleConnection(c, opts) {
      return driver.transaction((tx) => write(tx, c, { force: false, ...opts }));
    },

    async releaseRoleConnection(userId, reason, at) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE role_connections SET released_at = $2, released_reason = $3, loss_seen_at = NULL,
             record_loss_seen_at = NULL, updated_at = $2
           WHERE user_id = $1 AND released_at IS NULL RETURNING *`,
          [userId, at, reason],
        );
        for (const row of rows) await holdIfFlagged(tx, toRecord(row), at);
        await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, userId]);
        return rows.length > 0;
      });
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
          if (row.released_at === null || row.released_at === undefined)
            await holdIfFlagged(tx, toRecord(row), now());
        }
        if (rows.length > 0)
          await tx.query('DELETE FROM holdings WHERE scope = $1 AND user_id = $2', [APP_SCOPE, userId]);
        return rows.length > 0;
      });
    },
  };
}
