import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import { runMigrations } from './migrations.ts';
import {
  type Dialect,
  type Row,
  type SqlDriver,
  type SqlExecutor,
  type SqlParam,
  toStorableText,
} from './sql.ts';
import { createSqlStore } from './sqlStore.ts';
import type { GatingStore, StoreOptions } from './types.ts';

const BUSY_TIMEOUT_MS = 5_000;

export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  types: {
    autoId: 'INTEGER PRIMARY KEY AUTOINCREMENT',
    bigint: 'INTEGER',
    bool: 'INTEGER',
    real: 'REAL',
    json: 'TEXT',
  },
  skipLocked: '',
  subjectLock: null,
  migrationLock: null,
  parsesJson: false,
};

/** `$1` placeholders become SQLite's numbered `?1`, so one query text serves both dialects. */
export function toSqlitePlaceholders(sql: string): string {
  return sql.replace(/\$(\d+)/g, '?$1');
}

function toSqliteParam(p: SqlParam | undefined): SQLInputValue {
  if (p === undefined) return null;
  if (typeof p === 'boolean') return p ? 1 : 0;
  if (typeof p === 'string') return toStorableText(p);
  return p;
}

/** A promise chain that runs one holder at a time. */
interface Lock {
  tail: Promise<unknown>;
}

/**
 * One lock per database file in this process. Calls are synchronous underneath: while one connection
 * is inside an async transaction, another connection to the same file in this process would block
 * the event loop in `busy_timeout` and the first could never commit.
 */
const FILE_LOCKS = new Map<string, Lock>();

function lockFor(db: DatabaseSync): Lock {
  const path = db.location();
  if (path === null) return { tail: Promise.resolve() };
  const key = resolve(path);
  let lock = FILE_LOCKS.get(key);
  if (!lock) {
    lock = { tail: Promise.resolve() };
    FILE_LOCKS.set(key, lock);
  }
  return lock;
}

/**
 * A driver over one `DatabaseSync` connection. An async transaction must not let other calls run on
 * the connection (or the file) mid-way, so every call takes the file's lock.
 */
export function createSqliteDriver(db: DatabaseSync): SqlDriver {
  const lock = lockFor(db);
  const statements = new Map<string, StatementSync>();
  let closed = false;

  const prepare = (sql: string): StatementSync => {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = db.prepare(toSqlitePlaceholders(sql));
      statements.set(sql, stmt);
    }
    return stmt;
  };

  const direct: SqlExecutor = {
    async query(sql, params = []) {
      return prepare(sql).all(...params.map(toSqliteParam)) as Row[];
    },
    async exec(sql) {
      db.exec(sql);
    },
  };

  const locked = <T>(fn: () => Promise<T>): Promise<T> => {
    const run = lock.tail.then(() => {
      if (closed) throw new Error('SQLite store is closed');
      return fn();
    });
    lock.tail = run.catch(() => undefined);
    return run;
  };

  return {
    dialect: SQLITE_DIALECT,
    query: (sql, params) => locked(() => direct.query(sql, params)),
    exec: (sql) => locked(() => direct.exec(sql)),
    transaction: (fn) =>
      locked(async () => {
        db.exec('BEGIN IMMEDIATE');
        try {
          const result = await fn(direct);
          db.exec('COMMIT');
          return result;
        } catch (error) {
          if (db.isTransaction) db.exec('ROLLBACK');
          throw error;
        }
      }),
    close: () =>
      locked(async () => {
        closed = true;
        statements.clear();
        db.close();
      }),
  };
}

/** Open (creating when missing) an SQLite gating store; `':memory:'` for a throwaway one. */
export async function openSqliteStore(path: string, opts: StoreOptions = {}): Promise<GatingStore> {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new DatabaseSync(path);
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA synchronous = NORMAL');
    db.exec('PRAGMA foreign_keys = ON');
    const driver = createSqliteDriver(db);
    await runMigrations(driver, (opts.now ?? Date.now)());
    return createSqlStore(driver, opts);
  } catch (error) {
    if (db.isOpen) db.close();
    throw error;
  }
}
