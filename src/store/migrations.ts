import type { Dialect, SqlDriver } from './sql.ts';
import { DASHBOARD_SIGN_OUTS_MIGRATION } from './sqlDashboardSignOuts.ts';

/** One schema step. `sql` is written once; dialect differences come in through `d.types`. */
export interface Migration {
  version: number;
  name: string;
  sql: (d: Dialect) => string;
}

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

/** Ordered list; append new steps, never edit an applied one. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'gating tables',
    sql: ({ types: t }) => `
      CREATE TABLE guild_settings (
        guild_id TEXT PRIMARY KEY,
        enabled ${t.bool} NOT NULL,
        human_role_id TEXT NOT NULL,
        spam_role_id TEXT,
        risky_role_id TEXT,
        min_score ${t.real},
        spam_removes_human ${t.bool} NOT NULL DEFAULT TRUE,
        log_channel_id TEXT,
        last_full_sync_at ${t.bigint},
        updated_at ${t.bigint} NOT NULL
      );

      CREATE TABLE links (
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        platform TEXT NOT NULL,
        address TEXT,
        proof_method TEXT NOT NULL CHECK (proof_method IN ('record', 'signature')),
        proven_at ${t.bigint} NOT NULL,
        last_check_at ${t.bigint},
        last_check_ok ${t.bool},
        last_result ${t.json},
        PRIMARY KEY (guild_id, user_id, identity)
      );
      CREATE INDEX links_by_identity ON links (guild_id, identity);

      CREATE TABLE audit_events (
        id ${t.autoId},
        guild_id TEXT NOT NULL,
        user_id TEXT,
        kind TEXT NOT NULL,
        role_id TEXT,
        reason TEXT NOT NULL,
        details ${t.json},
        created_at ${t.bigint} NOT NULL
      );
      CREATE INDEX audit_events_by_guild ON audit_events (guild_id, created_at, id);
      CREATE INDEX audit_events_by_user ON audit_events (guild_id, user_id, created_at, id);

      CREATE TABLE nonces (
        nonce TEXT PRIMARY KEY,
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        address TEXT NOT NULL,
        expires_at ${t.bigint} NOT NULL,
        used_at ${t.bigint}
      );
      CREATE INDEX nonces_by_expiry ON nonces (expires_at);

      CREATE TABLE role_changes (
        id ${t.autoId},
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        role_id TEXT NOT NULL,
        op TEXT NOT NULL CHECK (op IN ('add', 'remove')),
        reason TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done', 'failed')),
        attempts INTEGER NOT NULL DEFAULT 0,
        lease_until ${t.bigint},
        detail TEXT,
        created_at ${t.bigint} NOT NULL,
        updated_at ${t.bigint} NOT NULL
      );
      CREATE UNIQUE INDEX role_changes_one_pending ON role_changes (guild_id, user_id, role_id)
        WHERE status = 'pending';
      CREATE INDEX role_changes_by_key ON role_changes (guild_id, user_id, role_id, status);
      CREATE INDEX role_changes_open ON role_changes (status, id)
        WHERE status IN ('pending', 'in_progress');
    `,
  },
  {
    version: 2,
    name: 'trust: released links, address index, pending losses, claim tokens, nonce names',
    sql: ({ types: t }) => `
      ALTER TABLE links ADD COLUMN released_at ${t.bigint};
      CREATE INDEX links_by_address ON links (guild_id, address);

      CREATE TABLE pending_losses (
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        subject TEXT NOT NULL,
        first_seen_at ${t.bigint} NOT NULL,
        reason TEXT NOT NULL,
        held_at ${t.bigint},
        PRIMARY KEY (guild_id, user_id, subject)
      );

      ALTER TABLE role_changes ADD COLUMN claim_token TEXT;
      ALTER TABLE role_changes ADD COLUMN not_before ${t.bigint};

      ALTER TABLE nonces ADD COLUMN user_name TEXT;
      ALTER TABLE nonces ADD COLUMN guild_name TEXT;
      ALTER TABLE nonces ADD COLUMN failed_attempts INTEGER NOT NULL DEFAULT 0;

      CREATE INDEX audit_events_by_time ON audit_events (created_at);
    `,
  },
  {
    version: 3,
    name: 'discord oauth states',
    sql: ({ types: t }) => `
      CREATE TABLE oauth_states (
        state_hash TEXT PRIMARY KEY,
        purpose TEXT NOT NULL,
        nonce TEXT,
        expires_at ${t.bigint} NOT NULL
      );

      CREATE INDEX oauth_states_by_expiry ON oauth_states (expires_at);
    `,
  },
  {
    // Version 3 is taken by the Discord sign-in states of the signing page.
    version: 4,
    name: 'guild re-check leases',
    sql: ({ types: t }) => `
      CREATE TABLE guild_leases (
        guild_id TEXT PRIMARY KEY,
        holder TEXT NOT NULL,
        lease_until ${t.bigint} NOT NULL
      );
    `,
  },
  {
    version: 5,
    name: 'linked roles connections',
    sql: ({ types: t }) => `
      CREATE TABLE role_connections (
        user_id TEXT PRIMARY KEY,
        identity TEXT NOT NULL,
        platform TEXT NOT NULL,
        address TEXT,
        proven_at ${t.bigint} NOT NULL,
        sealed_access_token TEXT,
        sealed_refresh_token TEXT,
        access_expires_at ${t.bigint} NOT NULL,
        metadata ${t.json},
        written_at ${t.bigint},
        stale_since ${t.bigint},
        loss_seen_at ${t.bigint},
        updated_at ${t.bigint} NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'signed proofs handed from the HTTP server to the shard that owns the guild',
    sql: ({ types: t }) => `
      CREATE TABLE signed_proofs (
        id ${t.autoId},
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        record ${t.json} NOT NULL,
        address TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('pending', 'in_progress', 'done')),
        attempts INTEGER NOT NULL DEFAULT 0,
        claim_token TEXT,
        lease_until ${t.bigint},
        result ${t.json},
        created_at ${t.bigint} NOT NULL,
        updated_at ${t.bigint} NOT NULL
      );
      CREATE INDEX signed_proofs_open ON signed_proofs (status, id);
    `,
  },
  {
    version: 7,
    name: 'ownership registry: one account per identity and address, per guild and app-wide',
    sql: ({ types: t }) => `
      CREATE TABLE holdings (
        scope TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('identity', 'address')),
        subject TEXT NOT NULL,
        user_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        proof_method TEXT NOT NULL CHECK (proof_method IN ('record', 'signature')),
        since ${t.bigint} NOT NULL,
        PRIMARY KEY (scope, kind, subject)
      );
      CREATE INDEX holdings_by_user ON holdings (scope, user_id, identity);

      INSERT INTO holdings (scope, kind, subject, user_id, identity, proof_method, since)
        SELECT guild_id, 'identity', identity, user_id, identity, proof_method, proven_at
        FROM links WHERE released_at IS NULL ORDER BY proven_at DESC
        ON CONFLICT DO NOTHING;
      INSERT INTO holdings (scope, kind, subject, user_id, identity, proof_method, since)
        SELECT guild_id, 'address', address, user_id, identity, proof_method, proven_at
        FROM links WHERE released_at IS NULL AND address IS NOT NULL
        ORDER BY proof_method DESC, proven_at DESC
        ON CONFLICT DO NOTHING;
      INSERT INTO holdings (scope, kind, subject, user_id, identity, proof_method, since)
        SELECT '0', 'identity', identity, user_id, identity, 'record', proven_at
        FROM role_connections WHERE stale_since IS NULL ORDER BY proven_at DESC
        ON CONFLICT DO NOTHING;

      ALTER TABLE role_connections ADD COLUMN proof_method TEXT NOT NULL DEFAULT 'record';
      ALTER TABLE role_connections ADD COLUMN released_at ${t.bigint};
      ALTER TABLE role_connections ADD COLUMN released_reason TEXT;

      CREATE TABLE role_connection_holds (
        user_id TEXT NOT NULL,
        identity TEXT NOT NULL,
        platform TEXT NOT NULL,
        address TEXT,
        since ${t.bigint} NOT NULL,
        PRIMARY KEY (user_id, identity)
      );
    `,
  },
  {
    version: 8,
    name: 'linked roles: record losses and flag holds wait for confirmation; holds keep their flags',
    sql: ({ types: t }) => `
      ALTER TABLE role_connections ADD COLUMN record_loss_seen_at ${t.bigint};
      ALTER TABLE role_connection_holds ADD COLUMN flags TEXT NOT NULL DEFAULT 'isSpam,isRisky';
      ALTER TABLE role_connection_holds ADD COLUMN clear_seen_at ${t.bigint};
    `,
  },
  {
    version: 9,
    name: "nonces: an index by account, for the cap on an account's open challenges",
    sql: () => `
      CREATE INDEX nonces_by_user ON nonces (user_id, expires_at);
    `,
  },
  {
    version: 10,
    name: 'verify panels: the message posted in each channel, so posting again edits it',
    sql: ({ types: t }) => `
      CREATE TABLE verify_panels (
        guild_id TEXT NOT NULL,
        channel_id TEXT NOT NULL,
        message_id TEXT NOT NULL,
        updated_at ${t.bigint} NOT NULL,
        PRIMARY KEY (guild_id, channel_id)
      );
    `,
  },
  {
    version: 11,
    name: 'gating exemptions: members and roles whose gated roles are never removed',
    sql: ({ types: t }) => `
      CREATE TABLE gating_exemptions (
        guild_id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('member', 'role')),
        target_id TEXT NOT NULL,
        added_by TEXT NOT NULL,
        added_at ${t.bigint} NOT NULL,
        PRIMARY KEY (guild_id, kind, target_id)
      );
    `,
  },
  {
    version: 12,
    name: 'account and join age: the guild thresholds, and when each too-new member is checked again',
    sql: ({ types: t }) => `
      ALTER TABLE guild_settings ADD COLUMN min_account_age_days INTEGER;
      ALTER TABLE guild_settings ADD COLUMN min_join_age_days INTEGER;
      CREATE TABLE gating_due_checks (
        guild_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        due_at ${t.bigint} NOT NULL,
        PRIMARY KEY (guild_id, user_id)
      );
      CREATE INDEX gating_due_checks_by_time ON gating_due_checks (due_at);
    `,
  },
  {
    version: 13,
    name: 'role rules: conditions on what members proved, each giving a role (all of / any of)',
    sql: ({ types: t }) => `
      CREATE TABLE gating_rules (
        guild_id TEXT NOT NULL,
        role_id TEXT NOT NULL,
        condition TEXT NOT NULL,
        match_mode TEXT NOT NULL CHECK (match_mode IN ('all', 'any')),
        added_by TEXT NOT NULL,
        added_at ${t.bigint} NOT NULL,
        PRIMARY KEY (guild_id, role_id, condition)
      );
    `,
  },
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
