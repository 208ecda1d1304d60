import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { openPostgresStore } from '../../src/store/postgresStore.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore, StoreOptions } from '../../src/store/types.ts';

export const POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

/** Drops a schema and all in it, if there is one (before a run, after a crashed one; after it). */
export async function dropPostgresSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}

/** One backend the contract suite runs against; each `fresh()` starts an empty database. */
export interface StoreHarness {
  name: string;
  /** Start a new empty database for the next test. */
  fresh(): Promise<void>;
  /** Open a store on the current database (several may be open at once). */
  open(opts?: StoreOptions): Promise<GatingStore>;
  /** Rows in `schema_migrations` of the current database. */
  migrationRows(): Promise<number>;
  /** Close every store opened and remove every database made. */
  cleanup(): Promise<void>;
}

/** The backends a store contract file runs on, for `describe.each`: its name, then its harness. */
export const STORE_BACKENDS: [string, () => StoreHarness][] = [
  ['sqlite', sqliteHarness],
  ['postgres', postgresHarness],
];

/**
 * The hooks of a store test block: one harness for the block, cleaned up after it, and before each test a
 * fresh database, handed to `setUp` (which opens its store on it). Returns nothing: `setUp` keeps what the
 * tests need.
 */
export function freshDatabaseEachTest(
  makeHarness: () => StoreHarness,
  setUp: (h: StoreHarness) => Promise<void>,
): void {
  let h: StoreHarness;
  beforeAll(() => {
    h = makeHarness();
  });
  afterAll(() => h.cleanup());
  beforeEach(async () => {
    await h.fresh();
    await setUp(h);
  });
}

export function sqliteHarness(): StoreHarness {
  const root = mkdtempSync(join(tmpdir(), 'gating-store-'));
  const opened: GatingStore[] = [];
  let n = 0;
  let path = '';
  return {
    name: 'sqlite',
    async fresh() {
      n += 1;
      path = join(root, `db-${n}`, 'bot.sqlite');
    },
    async open(opts) {
      const store = await openSqliteStore(path, opts);
      opened.push(store);
      return store;
    },
    async migrationRows() {
      const db = new DatabaseSync(path, { readOnly: true });
      try {
        const row = db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get();
        return Number(row?.n);
      } finally {
        db.close();
      }
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export function postgresHarness(): StoreHarness {
  const prefix = `gating_test_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 2 });
  const schemas: string[] = [];
  const opened: GatingStore[] = [];
  let schema = '';
  return {
    name: 'postgres',
    async fresh() {
      // The last test's stores go first: each holds pooled connections, and PostgreSQL allows 100.
      await Promise.all(opened.splice(0).map((s) => s.close().catch(() => undefined)));
      schema = `${prefix}_${schemas.length + 1}`;
      schemas.push(schema);
      await admin.query(`CREATE SCHEMA ${schema}`);
    },
    async open(opts) {
      const store = await openPostgresStore(POSTGRES_URL, { ...opts, schema });
      opened.push(store);
      return store;
    },
    async migrationRows() {
      const result = await admin.query(`SELECT COUNT(*) AS n FROM ${schema}.schema_migrations`);
      return Number(result.rows[0]?.n);
    },
    async cleanup() {
      await Promise.all(opened.map((s) => s.close().catch(() => undefined)));
      for (const s of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
      await admin.end();
    },
  };
}
