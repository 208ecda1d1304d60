import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { Migration } from '../../src/store/migrations/migration.ts';
import { MIGRATIONS, runMigrations } from '../../src/store/migrations.ts';
import { createPostgresDriver } from '../../src/store/postgresStore.ts';
import type { SqlDriver } from '../../src/store/sql.ts';
import { createSqliteDriver } from '../../src/store/sqliteStore.ts';
import { POSTGRES_URL } from './harness.ts';

const SCHEMA = `migrations_test_${process.pid}_${Date.now().toString(36)}`;
const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });

afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await admin.end();
});

const LAST = Math.max(...MIGRATIONS.map((m) => m.version));
const ALL = MIGRATIONS.map((m) => m.version);
const EXTRA: Migration = {
  version: LAST + 1,
  name: 'extra table',
  sql: ({ types }) => `CREATE TABLE extra (id ${types.autoId}, at ${types.bigint} NOT NULL)`,
};
const BROKEN: Migration = {
  version: LAST + 2,
  name: 'half a step',
  sql: () => 'CREATE TABLE half_done (x TEXT); SELECT no_such_column FROM no_such_table;',
};

const factories: [string, () => Promise<SqlDriver>][] = [
  ['sqlite', async () => createSqliteDriver(new DatabaseSync(':memory:'))],
  [
    'postgres',
    async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
      return createPostgresDriver(
        new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c search_path=${SCHEMA}` }),
      );
    },
  ],
];

describe.each(factories)('runMigrations (%s)', (_name, makeDriver) => {
  it('applies each version once, in order, and records it', async () => {
    const driver = await makeDriver();
    try {
      expect(await runMigrations(driver, 1)).toEqual(ALL);
      expect(await runMigrations(driver, 2)).toEqual([]);
      expect(await runMigrations(driver, 3, [EXTRA, ...MIGRATIONS])).toEqual([LAST + 1]);
      await driver.query('INSERT INTO extra (at) VALUES ($1)', [5]);
      const rows = await driver.query(
        'SELECT version, name, applied_at FROM schema_migrations ORDER BY version',
      );
      expect(rows.map((r) => [Number(r.version), r.name, Number(r.applied_at)])).toEqual([
        ...MIGRATIONS.map((m) => [m.version, m.name, 1]),
        [LAST + 1, 'extra table', 3],
      ]);
    } finally {
      await driver.close();
    }
  });

  it('16 keeps the hand-offs queued before it, with the shard key of their guild', async () => {
    const driver = await makeDriver();
    try {
      await runMigrations(
        driver,
        1,
        MIGRATIONS.filter((m) => m.version <= 14),
      );
      const guildId = String((7n << 22n) + 99n);
      for (const guild of [guildId, '']) {
        await driver.query(
          'INSERT INTO interaction_handoffs (guild_id, interaction, created_at) VALUES ($1, $2, $3)',
          [guild, '{"id":"1","token":"t"}', 5],
        );
      }
      await runMigrations(driver, 2);
      const rows = await driver.query(
        'SELECT guild_id, shard_key, interaction_id, sealed_token, answered_at FROM interaction_handoffs ORDER BY id',
      );
      expect(
        rows.map((r) => [r.guild_id, Number(r.shard_key), r.interaction_id, r.sealed_token, r.answered_at]),
      ).toEqual([
        [guildId, 7, null, null, null],
        ['', 0, null, null, null],
      ]);
    } finally {
      await driver.close();
    }
  });

  it('rolls a failing step back entirely', async () => {
    const driver = await makeDriver();
    try {
      await expect(runMigrations(driver, 1, [...MIGRATIONS, EXTRA, BROKEN])).rejects.toThrow();
      // Nothing of that run stays, not even the steps before the broken one.
      await expect(driver.query('SELECT COUNT(*) AS n FROM half_done')).rejects.toThrow();
      await expect(driver.query('SELECT COUNT(*) AS n FROM extra')).rejects.toThrow();
      expect(await runMigrations(driver, 2)).toEqual(ALL);
    } finally {
      await driver.close();
    }
  });
});
