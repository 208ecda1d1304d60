import type { SqlDriver, SqlExecutor } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';
import type { GatingStore, OAuthStateRecord } from './types.ts';

/** Signing challenges (`nonces`) and Discord OAuth2 states (`oauth_states`), merged into `createSqlStore`. */
export function createSqlNonces(
  driver: SqlDriver,
  now: () => number,
  rows: SqlRows,
): Pick<
  GatingStore,
  | 'createNonce'
  | 'countFailedAttempt'
  | 'consumeNonce'
  | 'getNonce'
  | 'deleteExpiredNonces'
  | 'createOAuthState'
  | 'consumeOAuthState'
> {
  const { str, num, toNonce, first } = rows;
  const PURPOSES: OAuthStateRecord['purpose'][] = ['verify', 'linked-role', 'dashboard', 'farcaster'];
  return {
    async createNonce(r, options = {}) {
      const { maxOpenPerUser } = options;
      if (maxOpenPerUser !== undefined && !(Number.isSafeInteger(maxOpenPerUser) && maxOpenPerUser >= 1)) {
        throw new RangeError('maxOpenPerUser must be a positive integer');
      }
      const insert = (tx: SqlExecutor) =>
        tx.query(
          `INSERT INTO nonces (nonce, guild_id, user_id, user_name, guild_name, identity, address, expires_at, used_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, NULL)`,
          [
            r.nonce,
            r.guildId,
            r.userId,
            r.userName,
            r.guildName,
            r.identity,
            r.address.startsWith('0x') ? r.address.toLowerCase() : r.address,
            r.expiresAt,
          ],
        );
      if (maxOpenPerUser === undefined) {
        await insert(driver);
        return 0;
      }
      const at = options.now ?? now();
      return driver.transaction(async (tx) => {
        // PostgreSQL: one account's creations take turns, so each sees the others' rows and the cap holds
        // under concurrency (SQLite write transactions already run one at a time).
        if (driver.dialect.subjectLock)
          await tx.query(driver.dialect.subjectLock, [`nonces\u0000${r.userId}`]);
        await insert(tx);
        // Keep the new challenge and the newest others up to the cap; the rest of the open ones go.
        const retired = await tx.query(
          `DELETE FROM nonces
           WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2 AND nonce <> $3
             AND nonce NOT IN (
               SELECT nonce FROM nonces
               WHERE user_id = $1 AND used_at IS NULL AND expires_at > $2 AND nonce <> $3
               ORDER BY expires_at DESC, nonce DESC LIMIT $4)
           RETURNING nonce`,
          [r.userId, at, r.nonce, maxOpenPerUser - 1],
        );
        return retired.length;
      });
    },

    async countFailedAttempt(nonce, limit, at) {
      const rows = await driver.query(
        `UPDATE nonces SET failed_attempts = failed_attempts + 1,
           used_at = CASE WHEN failed_attempts + 1 >= $2 THEN $3 ELSE used_at END
         WHERE nonce = $1 AND used_at IS NULL AND expires_at > $3 RETURNING failed_attempts`,
        [nonce, limit, at],
      );
      const row = rows[0];
      return row ? num(row.failed_attempts) : undefined;
    },

    async consumeNonce(nonce, at) {
      // One conditional UPDATE: the database row lock makes it single-use under concurrency.
      const rows = await driver.query(
        `UPDATE nonces SET used_at = $2
         WHERE nonce = $1 AND used_at IS NULL AND expires_at > $2 RETURNING *`,
        [nonce, at],
      );
      return first(rows, toNonce);
    },

    async getNonce(nonce) {
      return first(await driver.query('SELECT * FROM nonces WHERE nonce = $1', [nonce]), toNonce);
    },

    async deleteExpiredNonces(at) {
      const rows = await driver.query('DELETE FROM nonces WHERE expires_at <= $1 RETURNING nonce', [at]);
      return rows.length;
    },

    async createOAuthState(r, at) {
      await driver.query('DELETE FROM oauth_states WHERE expires_at <= $1', [at]);
      await driver.query(
        'INSERT INTO oauth_states (state_hash, purpose, nonce, expires_at) VALUES ($1, $2, $3, $4)',
        [r.stateHash, r.purpose, r.nonce, r.expiresAt],
      );
    },

    async consumeOAuthState(stateHash, at) {
      // One DELETE … RETURNING: of two concurrent callbacks with the same state, only one gets the row.
      const rows = await driver.query('DELETE FROM oauth_states WHERE state_hash = $1 RETURNING *', [
        stateHash,
      ]);
      const row = rows[0];
      if (!row || num(row.expires_at) <= at) return undefined;
      return {
        stateHash: str(row.state_hash),
        purpose: PURPOSES.find((p) => p === str(row.purpose)) ?? 'verify',
        nonce: row.nonce === null || row.nonce === undefined ? null : str(row.nonce),
        expiresAt: num(row.expires_at),
      };
    },
  };
}
