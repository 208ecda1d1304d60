import type { IdentityCheck, RecheckCycle, RecheckCycleStore } from './recheckCycleTypes.ts';
import type { Dialect, Row, SqlDriver } from './sql.ts';
import type { SqlRows } from './sqlRows.ts';

/** Cycles kept for the record: the current one, the one before it, and a few more. */
const CYCLES_KEPT = 8;

export const RECHECK_CYCLES_MIGRATION = {
  version: 24,
  name: 're-check cycles: one read of each identity per cycle across servers, and what the cycle cost',
  sql: ({ types: t }: Dialect) => `
    CREATE TABLE recheck_cycles (
      started_at ${t.bigint} PRIMARY KEY,
      upstream_requests ${t.bigint} NOT NULL DEFAULT 0,
      reused_checks ${t.bigint} NOT NULL DEFAULT 0,
      passes ${t.bigint} NOT NULL DEFAULT 0,
      pass_ms ${t.bigint} NOT NULL DEFAULT 0
    );
    ALTER TABLE links ADD COLUMN last_check_not_found ${t.bool};
    CREATE INDEX links_by_identity_everywhere ON links (identity, last_check_at);
  `,
};

/** Re-check cycles (`recheck_cycles`, migration 24), merged into `createSqlStore`. */
export function createSqlRecheckCycles(driver: SqlDriver, rows: SqlRows): RecheckCycleStore {
  const toCycle = (r: Row): RecheckCycle => ({
    startedAt: rows.num(r.started_at),
    upstreamRequests: rows.num(r.upstream_requests),
    reusedChecks: rows.num(r.reused_checks),
    passes: rows.num(r.passes),
    passMs: rows.num(r.pass_ms),
  });
  const latest = async () =>
    (await driver.query('SELECT * FROM recheck_cycles ORDER BY started_at DESC LIMIT 2', [])).map(toCycle);

  return {
    async recheckCycle(now, intervalMs) {
      let [current, previous] = await latest();
      if (!current || current.startedAt + intervalMs <= now) {
        // The first cycle starts on a whole interval since the epoch; each later one whole intervals on.
        const from = current?.startedAt ?? 0;
        const startedAt = from + Math.floor((now - from) / intervalMs) * intervalMs;
        await driver.query('INSERT INTO recheck_cycles (started_at) VALUES ($1) ON CONFLICT DO NOTHING', [
          startedAt,
        ]);
        await driver.query('DELETE FROM recheck_cycles WHERE started_at < $1', [
          startedAt - CYCLES_KEPT * intervalMs,
        ]);
        [current, previous] = await latest();
      }
      if (!current) throw new Error('recheck cycle insert left no row');
      return { current, previous: previous ?? null };
    },

    async countRecheckCycle(startedAt, c) {
      await driver.query(
        `UPDATE recheck_cycles SET upstream_requests = upstream_requests + $2, reused_checks = reused_checks + $3,
           passes = passes + $4, pass_ms = pass_ms + $5 WHERE started_at = $1`,
        [startedAt, c.upstreamRequests, c.reusedChecks, c.passes, Math.round(c.passMs)],
      );
    },

    async identityChecksSince(identities, since) {
      const checks = new Map<string, IdentityCheck>();
      const wanted = [...new Set(identities)];
      if (wanted.length === 0) return checks;
      const list = wanted.map((_, i) => `$${i + 2}`).join(', ');
      const found = await driver.query(
        `SELECT identity, last_check_at, last_result, last_check_not_found FROM links
         WHERE identity IN (${list}) AND last_check_at >= $1 AND last_check_ok = $${wanted.length + 2}
           AND last_result IS NOT NULL`,
        [since, ...wanted, true],
      );
      for (const r of found) {
        const identity = rows.str(r.identity);
        const at = rows.num(r.last_check_at);
        const result = rows.fromJson(r.last_result) as IdentityCheck['result'] | null;
        const known = checks.get(identity);
        const notFound = rows.optBool(r.last_check_not_found) === true;
        if (result && (!known || known.at < at)) checks.set(identity, { at, result, notFound });
      }
      return checks;
    },
  };
}
