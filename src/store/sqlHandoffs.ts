import { randomBytes } from 'node:crypto';
import type { ClaimedHandoff, HandoffStore } from './handoffTypes.ts';
import { type Row, type SqlDriver, type SqlParam, toStorableJson } from './sql.ts';
import type { JsonValue } from './types.ts';

/** The interaction hand-off queue (`interaction_handoffs`, migrations 14 and 16), merged into `createSqlStore`. */
export function createSqlHandoffs(driver: SqlDriver, now: () => number, leaseMs: number): HandoffStore {
  const json = (v: unknown): JsonValue =>
    (driver.dialect.parsesJson || typeof v !== 'string' ? v : JSON.parse(v)) as JsonValue;

  return {
    async enqueueHandoff(input) {
      // The unique interaction id decides, not a read first: of two replicas queueing the same
      // interaction at once, one row is written.
      const rows = await driver.query(
        `INSERT INTO interaction_handoffs
           (interaction_id, guild_id, shard_key, interaction, sealed_token, created_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (interaction_id) DO NOTHING RETURNING id`,
        [
          input.interactionId,
          input.guildId,
          shardKey(input.guildId),
          toStorableJson(input.interaction),
          input.sealedToken,
          now(),
        ],
      );
      const [row] = rows;
      return row ? Number(row.id) : null;
    },

    async openHandoffs(limit, shards) {
      const params: SqlParam[] = [now(), Math.max(1, Math.floor(limit))];
      let mine = '';
      // Selected in SQL, before the LIMIT: other shards' rows cannot crowd this shard's out.
      if (shards) {
        if (shards.ids.length === 0) return [];
        params.push(shards.count);
        const ids = shards.ids.map((id) => {
          params.push(id);
          return `$${params.length}`;
        });
        mine = `AND shard_key % $3 IN (${ids.join(', ')})`;
      }
      const rows = await driver.query(
        `SELECT id, guild_id FROM interaction_handoffs
         WHERE answered_at IS NULL AND (lease_until IS NULL OR lease_until <= $1) ${mine}
         ORDER BY id LIMIT $2`,
        params,
      );
      return rows.map((r: Row) => ({ id: Number(r.id), guildId: String(r.guild_id) }));
    },

    async claimHandoff(id, holder = ''): Promise<ClaimedHandoff | null> {
      const at = now();
      // The token names its holder, so whoever takes a lapsed claim over learns whose it was.
      const token = `${randomBytes(12).toString('hex')}@${holder}`;
      const [open] = await driver.query('SELECT claim_token FROM interaction_handoffs WHERE id = $1', [id]);
      if (!open) return null;
      const lapsed = open.claim_token === null ? '' : String(open.claim_token);
      // Only over the claim just read: a worker that claimed it in between keeps it.
      const [row] = await driver.query(
        `UPDATE interaction_handoffs SET claim_token = $2, lease_until = $3, attempts = attempts + 1
         WHERE id = $1 AND answered_at IS NULL AND (lease_until IS NULL OR lease_until <= $4)
           AND COALESCE(claim_token, '') = $5
         RETURNING *`,
        [id, token, at + leaseMs, at, lapsed],
      );
      if (!row) return null;
      return {
        id: Number(row.id),
        interactionId: row.interaction_id === null ? '' : String(row.interaction_id),
        guildId: String(row.guild_id),
        interaction: json(row.interaction),
        sealedToken: row.sealed_token === null ? null : String(row.sealed_token),
        createdAt: Number(row.created_at),
        attempts: Number(row.attempts),
        claimToken: token,
        takenFrom: holderOf(lapsed),
      };
    },

    async renewHandoff(id, claimToken) {
      const rows = await driver.query(
        `UPDATE interaction_handoffs SET lease_until = $3
         WHERE id = $1 AND claim_token = $2 AND answered_at IS NULL RETURNING id`,
        [id, claimToken, now() + leaseMs],
      );
      return rows.length > 0;
    },

    async finishHandoff(id, claimToken) {
      const rows = await driver.query(
        `UPDATE interaction_handoffs
           SET answered_at = $3, interaction = '{}', sealed_token = NULL, claim_token = NULL, lease_until = NULL
         WHERE id = $1 AND claim_token = $2 AND answered_at IS NULL RETURNING id`,
        [id, claimToken, now()],
      );
      return rows.length > 0;
    },

    async pruneHandoffs(before) {
      const rows = await driver.query('DELETE FROM interaction_handoffs WHERE created_at < $1 RETURNING id', [
        before,
      ]);
      return rows.length;
    },
  };
}

/** `guild_id >> 22`, which `% shardCount` turns into the guild's shard (Discord's formula); 0 outside a guild. */
export function shardKey(guildId: string): number {
  return /^\d{1,20}$/.test(guildId) ? Number(BigInt(guildId) >> 22n) : 0;
}

/** The holder a claim token names (`<random>@<holder>`); null for no claim or one that names nobody. */
function holderOf(claimToken: string): string | null {
  const at = claimToken.indexOf('@');
  return at < 0 || at === claimToken.length - 1 ? null : claimToken.slice(at + 1);
}
