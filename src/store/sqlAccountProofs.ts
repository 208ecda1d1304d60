import type { AccountProof, AccountProofStore } from './accountProofTypes.ts';
import type { Dialect, Row, SqlDriver } from './sql.ts';

/** Proofs that belong to the Discord account (issue #36), and the account's choice to share them. */
export const ACCOUNT_PROOFS_MIGRATION = {
  version: 22,
  name: 'account proofs: a wallet or Farcaster account proven by signature belongs to the Discord account, app-wide; opt-in sharing',
  sql: ({ types: t }: Dialect) => `
    CREATE TABLE account_proofs (
      subject TEXT PRIMARY KEY,
      user_id TEXT NOT NULL,
      identity TEXT NOT NULL,
      platform TEXT NOT NULL,
      address TEXT NOT NULL,
      proven_at ${t.bigint} NOT NULL
    );
    CREATE INDEX account_proofs_by_user ON account_proofs (user_id, proven_at);
    CREATE TABLE proof_sharing (
      user_id TEXT PRIMARY KEY,
      since ${t.bigint} NOT NULL
    );
  `,
};

/**
 * Sharing across processes: sharing found by when it was turned on (each gateway process's pick-up reads
 * it every few seconds), and a due check that carries the member's own removal (`/unverify` in a server
 * another process serves), applied at once there as in the server where it was asked.
 */
export const SHARING_ACROSS_PROCESSES_MIGRATION = {
  version: 23,
  name: 'sharing across processes: proof sharing by since, picked up by every gateway process; due checks the member asked for',
  sql: ({ types: t }: Dialect) => `
    CREATE INDEX proof_sharing_by_since ON proof_sharing (since, user_id);
    ALTER TABLE gating_due_checks ADD COLUMN member_asked ${t.bool} NOT NULL DEFAULT FALSE;
  `,
};

const toProof = (r: Row): AccountProof => ({
  subject: String(r.subject),
  userId: String(r.user_id),
  identity: String(r.identity),
  platform: String(r.platform),
  address: String(r.address),
  provenAt: Number(r.proven_at),
});

/** Account proofs (`account_proofs`, `proof_sharing`, migrations 22 and 23), merged into `createSqlStore` through `createSqlSignedProofs`. */
export function createSqlAccountProofs(driver: SqlDriver): AccountProofStore {
  return {
    saveAccountProof(p, opts = {}) {
      return driver.transaction(async (tx) => {
        // One holder per subject: the key and this lock decide two completions racing, not a read first.
        if (driver.dialect.subjectLock)
          await tx.query(driver.dialect.subjectLock, [`account\u0000${p.subject}`]);
        const [held] = await tx.query('SELECT user_id, proven_at FROM account_proofs WHERE subject = $1', [
          p.subject,
        ]);
        const other = held && String(held.user_id) !== p.userId ? String(held.user_id) : null;
        if (
          other !== null &&
          opts.challengeIssuedAt !== undefined &&
          Number(held?.proven_at) > opts.challengeIssuedAt
        )
          return { refusal: 'raced' as const };
        await tx.query(
          `INSERT INTO account_proofs (subject, user_id, identity, platform, address, proven_at)
           VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (subject) DO UPDATE SET user_id = excluded.user_id, identity = excluded.identity,
             platform = excluded.platform, address = excluded.address, proven_at = excluded.proven_at`,
          [p.subject, p.userId, p.identity, p.platform, p.address, p.provenAt],
        );
        // A member who shares: the new proof is shared too, so every process's pick-up looks at them again.
        await tx.query('UPDATE proof_sharing SET since = $2 WHERE user_id = $1 AND since < $2', [
          p.userId,
          p.provenAt,
        ]);
        return { displacedUserId: other };
      });
    },

    async getAccountProof(subject) {
      const [row] = await driver.query('SELECT * FROM account_proofs WHERE subject = $1', [subject]);
      return row ? toProof(row) : undefined;
    },

    async accountProofsOf(userId) {
      const rows = await driver.query(
        'SELECT * FROM account_proofs WHERE user_id = $1 ORDER BY proven_at, subject',
        [userId],
      );
      return rows.map(toProof);
    },

    async removeAccountProofs(userId, names) {
      if (names !== undefined && names.length === 0) return [];
      const list = (names ?? []).map((_, i) => `$${i + 2}`).join(', ');
      const which = names === undefined ? '' : ` AND (identity IN (${list}) OR subject IN (${list}))`;
      const rows = await driver.query(`DELETE FROM account_proofs WHERE user_id = $1${which} RETURNING *`, [
        userId,
        ...(names ?? []),
      ]);
      return rows.map(toProof);
    },

    async setProofSharing(userId, on, at) {
      if (on)
        await driver.query(
          'INSERT INTO proof_sharing (user_id, since) VALUES ($1, $2) ON CONFLICT (user_id) DO NOTHING',
          [userId, at],
        );
      else await driver.query('DELETE FROM proof_sharing WHERE user_id = $1', [userId]);
    },

    async sharesProofs(userId) {
      const rows = await driver.query('SELECT 1 AS x FROM proof_sharing WHERE user_id = $1', [userId]);
      return rows.length > 0;
    },

    async sharingSince(after, limit) {
      const rows = await driver.query(
        // A row comparison, so that the index bounds the scan (an OR of the two only filters it: 26 ms on
        // PostgreSQL at 100,000 sharers, against 0.7 ms).
        'SELECT user_id, since FROM proof_sharing WHERE (since, user_id) > ($1, $2) ORDER BY since, user_id LIMIT $3',
        [after.since, after.userId, limit],
      );
      return rows.map((r) => ({ userId: String(r.user_id), since: Number(r.since) }));
    },
  };
}
