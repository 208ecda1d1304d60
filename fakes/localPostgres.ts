/**
 * The PostgreSQL on this machine that the tests and benchmarks use: a database of its own for one test or
 * run (DATABASE_URL takes no schema).
 */
import pg from 'pg';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

/**
 * Creates an empty database on the local PostgreSQL and returns its URL and a `drop` that removes it
 * (connections still open included).
 */
export async function createDatabase(prefix: string): Promise<{ url: string; drop: () => Promise<void> }> {
  const database = `${prefix}_${process.pid}_${Date.now().toString(36)}`;
  await asAdmin((admin) => admin.query(`CREATE DATABASE ${database}`));
  return {
    url: `postgres://postgres@127.0.0.1:5432/${database}`,
    drop: () => asAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`)),
  };
}

async function asAdmin(fn: (admin: pg.Client) => Promise<unknown>): Promise<void> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  try {
    await fn(admin);
  } finally {
    await admin.end();
  }
}
