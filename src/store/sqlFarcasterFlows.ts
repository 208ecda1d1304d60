import type { Migration } from './migrations/migration.ts';
import { type Row, type SqlDriver, type SqlExecutor, toStorableJson } from './sql.ts';
import type { FarcasterFlow, FarcasterFlowStore, JsonValue } from './types.ts';

/** A Linked Roles flow keeps its member's Discord grant (sealed) until its outcome, for the server to write. */
export const FARCASTER_FLOW_GRANTS_MIGRATION: Migration = {
  version: 21,
  name: "Linked Roles Farcaster flows: the member's sealed grant, so the server writes the role connection",
  sql: () => `
    ALTER TABLE farcaster_flows ADD COLUMN sealed_grant TEXT;
  `,
};

/** Sign In With Farcaster flows (`farcaster_flows`, migration 18), merged into `createSqlStore`. */
export function createSqlFarcasterFlows(driver: SqlDriver, now: () => number): FarcasterFlowStore {
  const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
  const json = (v: unknown): JsonValue | null =>
    v === null || v === undefined
      ? null
      : ((driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue);
  const toFlow = (r: Row): FarcasterFlow => ({
    nonce: String(r.nonce),
    guildId: String(r.guild_id),
    userId: String(r.user_id),
    userName: optStr(r.user_name),
    guildName: optStr(r.guild_name),
    identity: String(r.identity),
    fid: Number(r.fid),
    createdAt: Number(r.created_at),
    expiresAt: Number(r.expires_at),
    state: String(r.state) as FarcasterFlow['state'],
    channelToken: optStr(r.channel_token),
    channelUrl: optStr(r.channel_url),
    signer: optStr(r.signer),
    authMethod: optStr(r.auth_method) as FarcasterFlow['authMethod'],
    outcome: json(r.outcome),
    refusals: Number(r.refusals ?? 0),
    updatedAt: Number(r.updated_at),
    sealedGrant: optStr(r.sealed_grant),
  });
  const one = (rows: Row[]) => (rows[0] ? toFlow(rows[0]) : undefined);

  return {
    async createFarcasterFlow(f, options = {}) {
      const { maxOpenPerUser } = options;
      if (maxOpenPerUser !== undefined && !(Number.isSafeInteger(maxOpenPerUser) && maxOpenPerUser >= 1))
        throw new RangeError('maxOpenPerUser must be a positive integer');
      const insert = (tx: SqlExecutor) =>
        tx.query(
          `INSERT INTO farcaster_flows (nonce, guild_id, user_id, user_name, guild_name, identity, fid,
             created_at, expires_at, state, refusals, updated_at, sealed_grant)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, 'new', 0, $8, $10)`,
          [
            f.nonce,
            f.guildId,
            f.userId,
            f.userName,
            f.guildName,
            f.identity,
            f.fid,
            f.createdAt,
            f.expiresAt,
            f.sealedGrant ?? null,
          ],
        );
      if (maxOpenPerUser === undefined) {
        await insert(driver);
        return 0;
      }
      const at = options.now ?? now();
      return driver.transaction(async (tx) => {
        // One account's flows are made one at a time, so the cap holds under concurrency (as for nonces).
        if (driver.dialect.subjectLock)
          await tx.query(driver.dialect.subjectLock, [`farcaster\u0000${f.userId}`]);
        await insert(tx);
        const retired = await tx.query(
          `DELETE FROM farcaster_flows
           WHERE user_id = $1 AND state IN ('new', 'open', 'refused') AND expires_at > $2 AND nonce <> $3
             AND nonce NOT IN (
               SELECT nonce FROM farcaster_flows
               WHERE user_id = $1 AND state IN ('new', 'open', 'refused') AND expires_at > $2 AND nonce <> $3
               ORDER BY expires_at DESC, nonce DESC LIMIT $4)
           RETURNING nonce`,
          [f.userId, at, f.nonce, maxOpenPerUser - 1],
        );
        return retired.length;
      });
    },

    async getFarcasterFlow(nonce) {
      return one(await driver.query('SELECT * FROM farcaster_flows WHERE nonce = $1', [nonce]));
    },

    async openFarcasterChannel(nonce, channel, at, maxRefusals) {
      return one(
        await driver.query(
          `UPDATE farcaster_flows SET state = 'open', channel_token = $2, channel_url = $3, updated_at = $4
           WHERE nonce = $1 AND state IN ('new', 'open', 'refused') AND expires_at > $4 AND refusals < $5
           RETURNING *`,
          [nonce, channel.token, channel.url, at, maxRefusals],
        ),
      );
    },

    async settleFarcasterFlow(nonce, channelToken, s, at) {
      const rows =
        s.state === 'approved'
          ? await driver.query(
              `UPDATE farcaster_flows SET state = 'approved', signer = $3, auth_method = $4, outcome = NULL,
                 channel_token = NULL, updated_at = $5
               WHERE nonce = $1 AND state = 'open' AND channel_token = $2 RETURNING *`,
              [nonce, channelToken, s.signer.toLowerCase(), s.authMethod, at],
            )
          : await driver.query(
              `UPDATE farcaster_flows SET state = 'refused', outcome = $3, channel_token = NULL,
                 refusals = refusals + $4, updated_at = $5
               WHERE nonce = $1 AND state = 'open' AND channel_token = $2 RETURNING *`,
              [nonce, channelToken, toStorableJson(s.outcome), s.counted ? 1 : 0, at],
            );
      return one(rows);
    },

    async claimFarcasterApproval(nonce, at) {
      return one(
        await driver.query(
          `UPDATE farcaster_flows SET state = 'done', updated_at = $2
           WHERE nonce = $1 AND state = 'approved' RETURNING *`,
          [nonce, at],
        ),
      );
    },

    async recordFarcasterOutcome(nonce, outcome, at) {
      await driver.query(
        'UPDATE farcaster_flows SET outcome = $2, sealed_grant = NULL, updated_at = $3 WHERE nonce = $1',
        [nonce, toStorableJson(outcome), at],
      );
    },

    async deleteExpiredFarcasterFlows(before) {
      const rows = await driver.query('DELETE FROM farcaster_flows WHERE expires_at <= $1 RETURNING nonce', [
        before,
      ]);
      return rows.length;
    },
  };
}
