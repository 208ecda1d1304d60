import type { Migration } from './migration.ts';

/** Steps 1 to 13: gating tables, trust, Discord sign-in, Linked Roles, ownership, exemptions, role rules. */
export const MIGRATIONS_1_TO_13: readonly Migration[] = [
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
];
