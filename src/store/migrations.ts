import { AUDIT_METRIC_SQL, DAY_MS } from './auditMetric.ts';
import type { Migration } from './migrations/migration.ts';
import { MIGRATIONS_1_TO_13 } from './migrations/migrations1to13.ts';
import type { SqlDriver } from './sql.ts';
import { ACCOUNT_PROOFS_MIGRATION, SHARING_ACROSS_PROCESSES_MIGRATION } from './sqlAccountProofs.ts';
import { DASHBOARD_SIGN_OUTS_MIGRATION } from './sqlDashboardSignOuts.ts';
import { FARCASTER_FLOW_GRANTS_MIGRATION } from './sqlFarcasterFlows.ts';
import { RECHECK_CYCLES_MIGRATION } from './sqlRecheckCycles.ts';

/**
 * Ordered list; append new steps, never edit an applied one. The earlier steps sit in migrations/, by
 * version, so this file stays short.
 */
export const MIGRATIONS: readonly Migration[] = [
  ...MIGRATIONS_1_TO_13,
  {
    version: 14,
    name: 'interactions a web replica hands to the gateway worker (INTERACTIONS=http, PROCESS_ROLE=web)',
    sql: ({ types: t }) => `
      CREATE TABLE interaction_handoffs (
        id ${t.autoId},
        guild_id TEXT NOT NULL,
        interaction ${t.json} NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        claim_token TEXT,
        lease_until ${t.bigint},
        created_at ${t.bigint} NOT NULL
      );
      CREATE INDEX interaction_handoffs_by_id ON interaction_handoffs (lease_until, id);
    `,
  },
  {
    version: 15,
    name: "guild authority: each server's owner and roles as the gateway side saw them, for web replicas",
    sql: ({ types: t }) => `
      CREATE TABLE guild_authority (
        guild_id TEXT PRIMARY KEY,
        owner_id TEXT NOT NULL,
        roles ${t.json} NOT NULL,
        updated_at ${t.bigint} NOT NULL
      );
    `,
  },
  {
    version: 16,
    name: 'interaction hand-offs: one per interaction id, a shard key, the token sealed apart, answered rows kept as a mark until pruned',
    // Rows from before keep their interaction (token inside) until answered or pruned, 15 minutes at most.
    sql: ({ types: t }) => `
      ALTER TABLE interaction_handoffs ADD COLUMN interaction_id TEXT;
      ALTER TABLE interaction_handoffs ADD COLUMN shard_key ${t.bigint};
      ALTER TABLE interaction_handoffs ADD COLUMN sealed_token TEXT;
      ALTER TABLE interaction_handoffs ADD COLUMN answered_at ${t.bigint};
      UPDATE interaction_handoffs
        SET shard_key = CASE WHEN guild_id = '' THEN 0 ELSE CAST(guild_id AS BIGINT) / 4194304 END;
      CREATE UNIQUE INDEX interaction_handoffs_one_per_interaction ON interaction_handoffs (interaction_id);
      CREATE INDEX interaction_handoffs_by_age ON interaction_handoffs (created_at);
    `,
  },
  {
    version: 17,
    name: 'dashboard: daily counts of audit events, indexes of the audit page, requests to the process that owns a guild, upstream health by minute, server names and channels',
    sql: ({ types: t }) => `
      CREATE TABLE audit_daily (
        guild_id TEXT NOT NULL,
        metric TEXT NOT NULL,
        day INTEGER NOT NULL,
        count ${t.bigint} NOT NULL,
        PRIMARY KEY (guild_id, metric, day)
      );
      INSERT INTO audit_daily (guild_id, metric, day, count)
        SELECT e.guild_id, ${AUDIT_METRIC_SQL}, e.created_at / ${DAY_MS}, COUNT(*)
        FROM audit_events e GROUP BY 1, 2, 3;
      CREATE INDEX audit_events_by_kind ON audit_events (guild_id, kind, created_at, id);
      CREATE INDEX audit_events_by_role ON audit_events (guild_id, role_id, created_at, id);
      CREATE INDEX links_active_by_guild ON links (guild_id, user_id) WHERE released_at IS NULL;

      CREATE TABLE dashboard_requests (
        id TEXT PRIMARY KEY,
        guild_id TEXT NOT NULL,
        shard_key ${t.bigint} NOT NULL,
        request ${t.json} NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done')),
        attempts INTEGER NOT NULL DEFAULT 0,
        claim_token TEXT,
        lease_until ${t.bigint},
        result ${t.json},
        created_at ${t.bigint} NOT NULL,
        updated_at ${t.bigint} NOT NULL
      );
      CREATE INDEX dashboard_requests_open ON dashboard_requests (status, created_at);

      CREATE TABLE upstream_minutes (
        minute ${t.bigint} PRIMARY KEY,
        requests INTEGER NOT NULL,
        errors INTEGER NOT NULL,
        seconds ${t.real} NOT NULL,
        slow INTEGER NOT NULL
      );

      ALTER TABLE guild_authority ADD COLUMN name TEXT;
      ALTER TABLE guild_authority ADD COLUMN icon TEXT;
      ALTER TABLE guild_authority ADD COLUMN channels ${t.json};
    `,
  },
  {
    version: 18,
    name: 'Sign In With Farcaster flows: a member, a server and a FID, the relay channel, the approval',
    sql: ({ types: t }) => `
      CREATE TABLE farcaster_flows (
        nonce TEXT PRIMARY KEY,
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        user_name TEXT,
        guild_name TEXT,
        identity TEXT NOT NULL,
        fid ${t.bigint} NOT NULL,
        created_at ${t.bigint} NOT NULL,
        expires_at ${t.bigint} NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('new', 'open', 'approved', 'done', 'refused')),
        channel_token TEXT,
        channel_url TEXT,
        signer TEXT,
        auth_method TEXT,
        outcome ${t.json},
        refusals INTEGER NOT NULL DEFAULT 0,
        updated_at ${t.bigint} NOT NULL
      );
      CREATE INDEX farcaster_flows_by_user ON farcaster_flows (user_id, expires_at);
      CREATE INDEX farcaster_flows_by_expiry ON farcaster_flows (expires_at);
    `,
  },
  {
    version: 19,
    name: 'audit events by member and role: the roles a member holds, found without scanning the role',
    // Migration 17's by-role index led SQLite to look for a member's later events of a role through the
    // role (every holder's events) rather than the member: /gating export's held roles took minutes of
    // blocked event loop on 100,000 members sharing one role. Member and role together name the rows.
    sql: () => `
      CREATE INDEX audit_events_by_member_role ON audit_events (guild_id, user_id, role_id, created_at, id);
    `,
  },
  DASHBOARD_SIGN_OUTS_MIGRATION,
  FARCASTER_FLOW_GRANTS_MIGRATION,
  ACCOUNT_PROOFS_MIGRATION,
  SHARING_ACROSS_PROCESSES_MIGRATION,
  RECHECK_CYCLES_MIGRATION,
];

/**
 * Apply the migrations this database lacks, all in one transaction, recording each in
 * `schema_migrations`. Safe to run on every start and from several processes at once.
 */
export async function runMigrations(
  driver: SqlDriver,
  now: number,
  migrations: readonly Migration[] = MIGRATIONS,
): Promise<number[]> {
  const { dialect } = driver;
  return driver.transaction(async (tx) => {
    if (dialect.migrationLock) await tx.query(dialect.migrationLock);
    await tx.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY,
      name TEXT NOT NULL,
      applied_at ${dialect.types.bigint} NOT NULL
    )`);
    const rows = await tx.query('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((r) => Number(r.version)));
    const done: number[] = [];
    for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
      if (applied.has(m.version)) continue;
      await tx.exec(m.sql(dialect));
      await tx.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
        m.version,
        m.name,
        now,
      ]);
      done.push(m.version);
    }
    return done;
  });
}
