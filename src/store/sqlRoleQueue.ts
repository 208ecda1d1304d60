/**
 * The durable role-change queue on SQL: idempotent enqueue, claims under a lease with a per-claim
 * token, deferral behind a block, completion with its audit event in the same transaction.
 */
import { randomBytes } from 'node:crypto';
import type { SqlDriver } from './sql.ts';
import { renewClaim } from './sqlClaims.ts';
import type { SqlRows } from './sqlRows.ts';
import type { EnqueueOutcome, GatingStore, RoleChange, RoleChangeInput } from './types.ts';

export type RoleQueueStore = Pick<
  GatingStore,
  | 'enqueueRoleChange'
  | 'claimRoleChanges'
  | 'completeRoleChange'
  | 'renewRoleChange'
  | 'deferRoleChange'
  | 'resumeDeferredRoleChanges'
  | 'openRoleChanges'
  | 'pendingRoleChanges'
  | 'oldestOpenRoleChangeAt'
  | 'deleteFinishedRoleChanges'
>;

/** What is open in the queue, how much and since when, and the sweep of finished changes. */
function roleQueueReads(
  driver: SqlDriver,
  r: SqlRows,
): Pick<
  RoleQueueStore,
  'openRoleChanges' | 'pendingRoleChanges' | 'oldestOpenRoleChangeAt' | 'deleteFinishedRoleChanges'
> {
  const { toChange, num, optNum } = r;
  return {
    async openRoleChanges(guildId, userId) {
      const open = "status IN ('pending', 'in_progress')";
      const rows =
        userId === undefined
          ? await driver.query(`SELECT * FROM role_changes WHERE guild_id = $1 AND ${open} ORDER BY id`, [
              guildId,
            ])
          : await driver.query(
              `SELECT * FROM role_changes WHERE guild_id = $1 AND user_id = $2 AND ${open} ORDER BY id`,
              [guildId, userId],
            );
      return rows.map(toChange);
    },

    async pendingRoleChanges(guildId) {
      const rows =
        guildId === undefined
          ? await driver.query(
              "SELECT COUNT(*) AS n FROM role_changes WHERE status IN ('pending', 'in_progress')",
            )
          : await driver.query(
              "SELECT COUNT(*) AS n FROM role_changes WHERE status IN ('pending', 'in_progress') AND guild_id = $1",
              [guildId],
            );
      return num(rows[0]?.n ?? 0);
    },

    async oldestOpenRoleChangeAt() {
      const rows = await driver.query(
        "SELECT MIN(created_at) AS at FROM role_changes WHERE status IN ('pending', 'in_progress')",
      );
      return optNum(rows[0]?.at);
    },

    async deleteFinishedRoleChanges(before) {
      const rows = await driver.query(
        "DELETE FROM role_changes WHERE status IN ('done', 'failed') AND updated_at < $1 RETURNING id",
        [before],
      );
      return rows.length;
    },
  };
}

export function createSqlRoleQueue(
  driver: SqlDriver,
  o: { now: () => number; leaseMs: number; rows: SqlRows },
): RoleQueueStore {
  const { now, leaseMs, rows: r } = o;
  const { dialect } = driver;
  const { first, toChange, insertAudit } = r;
  return {
    async enqueueRoleChange(c: RoleChangeInput) {
      return driver.transaction<{ change: RoleChange; outcome: EnqueueOutcome }>(async (tx) => {
        const at = now();
        const key = [c.guildId, c.userId, c.roleId];
        const open = (
          await tx.query(
            `SELECT * FROM role_changes
             WHERE guild_id = $1 AND user_id = $2 AND role_id = $3 AND status IN ('pending', 'in_progress')
             ORDER BY id`,
            key,
          )
        ).map(toChange);
        const pending = open.find((o) => o.status === 'pending');
        const inFlight = open.filter((o) => o.status === 'in_progress').at(-1);
        if (pending?.op === c.op) return { change: pending, outcome: 'duplicate' };
        if (inFlight?.op === c.op) {
          // The in-flight change already does what is asked; a pending opposite one is now stale.
          if (pending) await tx.query('DELETE FROM role_changes WHERE id = $1', [pending.id]);
          return { change: inFlight, outcome: 'duplicate' };
        }
        const rows = await tx.query(
          `INSERT INTO role_changes (guild_id, user_id, role_id, op, reason, status, attempts, created_at, updated_at)
           VALUES ($1, $2, $3, $4, $5, 'pending', 0, $6, $6)
           ON CONFLICT (guild_id, user_id, role_id) WHERE status = 'pending' DO UPDATE SET
             op = excluded.op, reason = excluded.reason, updated_at = excluded.updated_at
           RETURNING *`,
          [...key, c.op, c.reason, at],
        );
        const change = first(rows, toChange);
        if (!change) throw new Error('role change upsert returned no row');
        return { change, outcome: pending ? 'replaced' : 'created' };
      });
    },

    async claimRoleChanges(guildId, limit) {
      const at = now();
      const token = randomBytes(12).toString('hex');
      const params: (string | number)[] = [at, at + leaseMs, Math.max(0, Math.floor(limit)), token];
      let guildFilter = '';
      if (guildId !== undefined) {
        params.push(guildId);
        guildFilter = 'AND c.guild_id = $5';
      }
      // A materialised CTE picks the rows once; under PostgreSQL its SKIP LOCKED keeps workers apart.
      const rows = await driver.query(
        `WITH picked AS MATERIALIZED (
           SELECT c.id FROM role_changes c
           WHERE (c.status = 'pending' OR (c.status = 'in_progress' AND c.lease_until <= $1)) ${guildFilter}
             AND (c.not_before IS NULL OR c.not_before <= $1)
             AND NOT EXISTS (
               SELECT 1 FROM role_changes o
               WHERE o.guild_id = c.guild_id AND o.user_id = c.user_id AND o.role_id = c.role_id
                 AND o.status = 'in_progress' AND o.lease_until > $1 AND o.id < c.id)
           ORDER BY c.id LIMIT $3${dialect.skipLocked})
         UPDATE role_changes
         SET status = 'in_progress', lease_until = $2, attempts = attempts + 1, updated_at = $1,
           claim_token = $4
         WHERE id IN (SELECT id FROM picked)
         RETURNING *`,
        params,
      );
      return rows.map(toChange).sort((a, b) => a.id - b.id);
    },

    async completeRoleChange(id, claimToken, outcome, detail) {
      return driver.transaction(async (tx) => {
        const at = now();
        const rows = await tx.query(
          `UPDATE role_changes SET status = $2, lease_until = NULL, claim_token = NULL, detail = $3,
             updated_at = $4
           WHERE id = $1 AND status = 'in_progress' AND claim_token = $5 RETURNING *`,
          [id, outcome, detail ?? null, at, claimToken],
        );
        const change = first(rows, toChange);
        if (!change) return false;
        const kind =
          outcome === 'failed' ? 'role_failed' : change.op === 'add' ? 'role_added' : 'role_removed';
        await insertAudit(tx, {
          guildId: change.guildId,
          userId: change.userId,
          kind,
          roleId: change.roleId,
          reason: change.reason,
          details: { changeId: change.id, op: change.op, attempts: change.attempts, detail: detail ?? null },
          createdAt: at,
        });
        return true;
      });
    },

    async renewRoleChange(id, claimToken) {
      return renewClaim(driver, 'role_changes', id, claimToken, { now, leaseMs });
    },

    async deferRoleChange(id, claimToken, notBefore) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          "SELECT * FROM role_changes WHERE id = $1 AND status = 'in_progress' AND claim_token = $2",
          [id, claimToken],
        );
        const change = first(rows, toChange);
        if (!change) return false;
        const newer = await tx.query(
          `SELECT id FROM role_changes
           WHERE guild_id = $1 AND user_id = $2 AND role_id = $3 AND status = 'pending'`,
          [change.guildId, change.userId, change.roleId],
        );
        if (newer.length > 0) {
          await tx.query('DELETE FROM role_changes WHERE id = $1', [id]);
          return true;
        }
        await tx.query(
          `UPDATE role_changes SET status = 'pending', lease_until = NULL, claim_token = NULL,
             not_before = $2, attempts = attempts - 1, updated_at = $3
           WHERE id = $1`,
          [id, notBefore, now()],
        );
        return true;
      });
    },

    async resumeDeferredRoleChanges(guildId) {
      const rows = await driver.query(
        `UPDATE role_changes SET not_before = NULL
         WHERE guild_id = $1 AND status = 'pending' AND not_before IS NOT NULL RETURNING id`,
        [guildId],
      );
      return rows.length;
    },

    ...roleQueueReads(driver, r),
  };
}
