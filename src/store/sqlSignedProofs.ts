import { randomBytes } from 'node:crypto';
import type { AccountProofStore } from './accountProofTypes.ts';
import { type Row, type SqlDriver, toStorableJson } from './sql.ts';
import { createSqlAccountProofs } from './sqlAccountProofs.ts';
import { claimedRows } from './sqlClaims.ts';
import type { JsonValue, NonceRecord, SignedProofStore } from './types.ts';

/**
 * The signed-proof queue (`signed_proofs`, migration 6) and the account proofs a signature leaves
 * (`account_proofs`, migration 22), merged into `createSqlStore`.
 */
export function createSqlSignedProofs(
  driver: SqlDriver,
  now: () => number,
  leaseMs: number,
): SignedProofStore & AccountProofStore {
  const json = (v: unknown): JsonValue =>
    (driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue;
  const claims = claimedRows<number>(driver, 'signed_proofs', { now, leaseMs, json });

  return {
    ...createSqlAccountProofs(driver),

    async enqueueSignedProof({ record, address }) {
      const at = now();
      const [row] = await driver.query(
        `INSERT INTO signed_proofs (guild_id, user_id, record, address, status, created_at, updated_at)
         VALUES ($1, $2, $3, $4, 'pending', $5, $5) RETURNING id`,
        [record.guildId, record.userId, toStorableJson(record), address, at],
      );
      if (!row) throw new Error('signed proof insert returned no row');
      return Number(row.id);
    },

    async openSignedProofs(limit) {
      const rows = await driver.query(
        `SELECT id, guild_id FROM signed_proofs
         WHERE status = 'pending' OR (status = 'in_progress' AND lease_until <= $1)
         ORDER BY id LIMIT $2`,
        [now(), Math.max(1, Math.floor(limit))],
      );
      return rows.map((r: Row) => ({ id: Number(r.id), guildId: String(r.guild_id) }));
    },

    async claimSignedProof(id) {
      const at = now();
      const token = randomBytes(12).toString('hex');
      const [row] = await driver.query(
        `UPDATE signed_proofs SET status = 'in_progress', claim_token = $2, lease_until = $3,
           attempts = attempts + 1, updated_at = $4
         WHERE id = $1 AND (status = 'pending' OR (status = 'in_progress' AND lease_until <= $4))
         RETURNING *`,
        [id, token, at + leaseMs, at],
      );
      if (!row) return null;
      return {
        id: Number(row.id),
        record: json(row.record) as unknown as NonceRecord,
        address: String(row.address),
        attempts: Number(row.attempts),
        claimToken: token,
      };
    },

    finishSignedProof: claims.finish,
    signedProofResult: claims.result,

    async deleteFinishedSignedProofs(before) {
      const rows = await driver.query(
        `DELETE FROM signed_proofs WHERE status = 'done' AND updated_at < $1 RETURNING id`,
        [before],
      );
      return rows.length;
    },
  };
}
