/**
 * What the claimed work queues share (`status` pending, in_progress, done; a `claim_token` and a
 * `lease_until`): renewing a claim's lease, finishing it with a result, and reading that result.
 */
import { type SqlExecutor, toStorableJson } from './sql.ts';
import type { JsonValue } from './types.ts';

/** The queue tables with a status, a claim token, a lease and (but for role changes) a result. */
type ClaimedTable = 'signed_proofs' | 'dashboard_requests' | 'role_changes';

/** Extends the lease of a row still in progress under `claimToken`; false when the claim is no longer its. */
export async function renewClaim(
  db: SqlExecutor,
  table: ClaimedTable,
  id: number | string,
  claimToken: string,
  lease: { now: () => number; leaseMs: number },
): Promise<boolean> {
  const at = lease.now();
  const renewed = await db.query(
    `UPDATE ${table} SET lease_until = $3, updated_at = $4
     WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
    [id, claimToken, at + lease.leaseMs, at],
  );
  return renewed.length > 0;
}

/** The claim operations on a table with a result column, its clock and lease; `json` reads the result. */
export function claimedRows<Id extends number | string>(
  db: SqlExecutor,
  table: Exclude<ClaimedTable, 'role_changes'>,
  o: { now: () => number; leaseMs: number; json: (v: unknown) => JsonValue },
) {
  return {
    renew: (id: Id, claimToken: string): Promise<boolean> => renewClaim(db, table, id, claimToken, o),

    /** Marks a row in progress under `claimToken` done with `result`; false when the claim is no longer its. */
    async finish(id: Id, claimToken: string, result: JsonValue): Promise<boolean> {
      const finished = await db.query(
        `UPDATE ${table} SET status = 'done', result = $3, claim_token = NULL, lease_until = NULL,
           updated_at = $4
         WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
        [id, claimToken, toStorableJson(result), o.now()],
      );
      return finished.length > 0;
    },

    /** A row's result once done; null while it is not, undefined when there is no such row. */
    async result(id: Id): Promise<JsonValue | null | undefined> {
      const [row] = await db.query(`SELECT status, result FROM ${table} WHERE id = $1`, [id]);
      if (!row) return undefined;
      return row.status === 'done' ? o.json(row.result) : null;
    },
  };
}
