import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore, SQLITE_FILE_NAME } from '../../src/store/index.ts';
import { openPostgresStore } from '../../src/store/postgresStore.ts';
import { openSqliteStore, toSqlitePlaceholders } from '../../src/store/sqliteStore.ts';
import { POSTGRES_URL } from './harness.ts';

const root = mkdtempSync(join(tmpdir(), 'sqlite-store-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const SETTINGS = {
  guildId: 'g',
  enabled: true,
  humanRoleId: 'h',
  spamRoleId: null,
  riskyRoleId: null,
  minScore: null,
  spamRemovesHuman: true,
  logChannelId: null,
};

describe('toSqlitePlaceholders', () => {
  it('numbers placeholders the SQLite way, keeping their index', () => {
    expect(toSqlitePlaceholders('SELECT $2, $1, $10 WHERE a = $1')).toBe('SELECT ?2, ?1, ?10 WHERE a = ?1');
  });
});

describe('openSqliteStore', () => {
  it('creates the parent directories and a WAL database file', async () => {
    const path = join(root, 'a', 'b', 'c', 'bot.sqlite');
    const store = await openSqliteStore(path);
    await store.close();
    expect(existsSync(path)).toBe(true);
    const db = new DatabaseSync(path);
    try {
      expect(db.prepare('PRAGMA journal_mode').get()?.journal_mode).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('keeps everything across a reopen of the file', async () => {
    const path = join(root, 'reopen', 'bot.sqlite');
    const first = await openSqliteStore(path, { now: () => 1_000 });
    await first.saveGuildSettings(SETTINGS, { userId: 'admin', reason: 'setup' });
    await first.saveLink(
      {
        guildId: 'g',
        userId: 'u',
        identity: 'a.eth',
        platform: 'ens',
        address: null,
        proofMethod: 'record',
        provenAt: 5,
      },
      'verified',
    );
    await first.createNonce({
      nonce: 'n',
      guildId: 'g',
      userId: 'u',
      userName: null,
      guildName: null,
      identity: 'a.eth',
      address: '0xa',
      expiresAt: 9,
    });
    await first.consumeNonce('n', 2);
    await first.enqueueRoleChange({ guildId: 'g', userId: 'u', roleId: 'h', op: 'add', reason: 'why' });
    await first.close();

    const second = await openSqliteStore(path);
    try {
      expect(await second.getGuildSettings('g')).toMatchObject({ humanRoleId: 'h', updatedAt: 1_000 });
      expect(await second.getUserLinks('g', 'u')).toHaveLength(1);
      expect(await second.consumeNonce('n', 3)).toBeUndefined();
      expect((await second.getNonce('n'))?.usedAt).toBe(2);
      expect(await second.pendingRoleChanges('g')).toBe(1);
      expect((await second.listAuditEvents({ guildId: 'g' })).map((e) => e.kind)).toEqual([
        'linked',
        'settings_changed',
      ]);
    } finally {
      await second.close();
    }
  });

  it('gives each :memory: store its own database', async () => {
    const a = await openSqliteStore(':memory:');
    const b = await openSqliteStore(':memory:');
    await a.saveGuildSettings(SETTINGS);
    expect(await a.getGuildSettings('g')).toBeDefined();
    expect(await b.getGuildSettings('g')).toBeUndefined();
    await a.close();
    await b.close();
    await expect(a.getGuildSettings('g')).rejects.toThrow(/closed/);
  });
});

describe('openStore', () => {
  it('uses <dataDir>/bot.sqlite without a database URL', async () => {
    const dataDir = join(root, 'data');
    const store = await openStore({ dataDir });
    await store.saveGuildSettings(SETTINGS);
    await store.close();
    expect(existsSync(join(dataDir, SQLITE_FILE_NAME))).toBe(true);
  });

  it('uses PostgreSQL when a database URL is set', async () => {
    const schema = `open_store_test_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const store = await openStore({ databaseUrl: POSTGRES_URL, dataDir: join(root, 'unused') }, { schema });
      await store.saveGuildSettings(SETTINGS);
      await store.close();
      const rows = await admin.query(`SELECT human_role_id FROM ${schema}.guild_settings`);
      expect(rows.rows).toEqual([{ human_role_id: 'h' }]);
      expect(existsSync(join(root, 'unused'))).toBe(false);
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    }
  });

  it('refuses a schema name that is not a plain identifier', async () => {
    await expect(openPostgresStore(POSTGRES_URL, { schema: 'x; DROP SCHEMA public' })).rejects.toThrow(
      /Invalid PostgreSQL schema name/,
    );
  });
});
