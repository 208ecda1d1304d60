/**
 * What the claimed work queues share (`status` pending, in_progress, done; a `claim_token` and a
 * `lease_until`): renewing a claim's lease, finishing it with a result, and reading that result.
 */
import { type SqlExecutor, toStorableJson } from './sql.ts';
import type { JsonValue } from './types.ts';

/** The queue tables with a status, a claim token, a lease and (but for role changes) a result. */
type ClaimedTable = 'signed_proofs' | 'dashboard_requests' | 'role_changes';
type ResultTable = Exclude<ClaimedTable, 'role_changes'>;

/** Extends the lease of a row still in progress under `claimToken`; false when the claim is no longer its. */
export async function renewClaim(
  db: SqlExecutor,
  table: ClaimedTable,
  id: number | string,
  claimToken: string,
  leaseUntil: number,
  at: number,
): Promise<boolean> {
  const renewed = await db.query(
    `UPDATE ${table} SET lease_until = $3, updated_at = $4
     WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
    [id, claimToken, leaseUntil, at],
  );
  return renewed.length > 0;
}

/** Marks a row in progress under `claimToken` done with its result; false when the claim is no longer its. */
export async function finishClaim(
  db: SqlExecutor,
  table: ResultTable,
  id: number | string,
  claimToken: string,
  result: JsonValue,
  at: number,
): Promise<boolean> {
  const finished = await db.query(
    `UPDATE ${table} SET status = 'done', result = $3, claim_token = NULL, lease_until = NULL,
       updated_at = $4
     WHERE id = $1 AND status = 'in_progress' AND claim_token = $2 RETURNING id`,
    [id, claimToken, toStorableJson(result), at],
  );
  return finished.length > 0;
}

/** A row's result once done; null while it is not, undefined when there is no such row. */
export async function claimResult(
  db: SqlExecutor,
  table: ResultTable,
  id: number | string,
  json: (v: unknown) => JsonValue,
): Promise<JsonValue | null | undefined> {
  const [row] = await db.query(`SELECT status, result FROM ${table} WHERE id = $1`, [id]);
  if (!row) return undefined;
  return row.status === 'done' ? json(row.result) : null;
}
