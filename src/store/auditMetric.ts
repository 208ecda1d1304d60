/** A day as the dashboard's daily counts key it: whole UTC days since the epoch. */
export const DAY_MS = 86_400_000;

/**
 * The daily count an audit event (aliased `e`) adds to: its kind, except that a role given is a flag when
 * it is the server's spam or risky role (as set up at the time). Written once for the migration's
 * backfill and for every new event (sqlRows.ts).
 */
export const AUDIT_METRIC_SQL = `CASE WHEN e.kind = 'role_added' AND EXISTS (
    SELECT 1 FROM guild_settings s WHERE s.guild_id = e.guild_id
      AND (s.spam_role_id = e.role_id OR s.risky_role_id = e.role_id)) THEN 'flag_added' ELSE e.kind END`;
