import type { DashboardSignOutStore } from './dashboardSignOutTypes.ts';
import type { Dialect, SqlDriver } from './sql.ts';

/** The sign-outs of the dashboard's sealed sessions, by the hash of the session's id, until it would end. */
export const DASHBOARD_SIGN_OUTS_MIGRATION = {
  version: 20,
  name: 'dashboard sign-outs: a signed-out session opens nothing on any replica until it would have ended',
  sql: ({ types: t }: Dialect) => `
    CREATE TABLE dashboard_sign_outs (
      session_hash TEXT PRIMARY KEY,
      expires_at ${t.bigint} NOT NULL
    );
    CREATE INDEX dashboard_sign_outs_by_expiry ON dashboard_sign_outs (expires_at);
  `,
};

/** Dashboard sign-outs (`dashboard_sign_outs`, migration 20), merged into `createSqlStore`. */
export function createSqlDashboardSignOuts(driver: SqlDriver): DashboardSignOutStore {
  return {
    async recordDashboardSignOut(sessionHash, until, now) {
      await driver.query('DELETE FROM dashboard_sign_outs WHERE expires_at <= $1', [now]);
      await driver.query(
        `INSERT INTO dashboard_sign_outs (session_hash, expires_at) VALUES ($1, $2)
         ON CONFLICT (session_hash) DO UPDATE SET expires_at = excluded.expires_at`,
        [sessionHash, until],
      );
    },

    async isDashboardSignedOut(sessionHash, now) {
      const rows = await driver.query(
        'SELECT 1 AS signed_out FROM dashboard_sign_outs WHERE session_hash = $1 AND expires_at > $2',
        [sessionHash, now],
      );
      return rows.length > 0;
    },
  };
}
