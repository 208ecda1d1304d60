/**
 * Run as its own process by postgresFaults.test.ts (`node test/store/connectionDropProbe.ts <url>`): the
 * PostgreSQL driver while an admin connection terminates the backends it uses, at the moments that used
 * to kill the process (a checked-out client idle between two statements of a transaction), and while a
 * COMMIT is on its way (its answer lost, or terminated while it runs). Prints one JSON line of what
 * happened; an `'error'` event nobody handles would exit the process with code 1 instead.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { isConnectionFault } from '../../src/store/postgresFaults.ts';
import { MAX_TRIES } from '../../src/store/postgresRetry.ts';
import { createPostgresDriver } from '../../src/store/postgresStore.ts';

const url = process.argv[2] ?? '';
const table = `fault_probe_${process.pid}`;
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const pool = new pg.Pool({ connectionString: url, max: 4 });
pool.on('error', () => undefined);
// Case 4: the client's socket closed right after it sent COMMIT, before the answer is read.
let cutAfterCommit = false;
let commitAnswer = 'none';
pool.on('connect', (client) => {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  Object.assign(client, {
    query(...args: unknown[]) {
      const sent = query(...args);
      if (cutAfterCommit && args[0] === 'COMMIT') {
        cutAfterCommit = false;
        const socket = (client as unknown as { connection: { stream: { destroy(): void } } }).connection
          .stream;
        setImmediate(() => socket.destroy());
        (sent as Promise<unknown>).then(
          () => {
            commitAnswer = 'answered';
          },
          () => {
            commitAnswer = 'lost';
          },
        );
      }
      return sent;
    },
  });
});
const driver = createPostgresDriver(pool);

const terminate = async (pid: unknown) => {
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  // Long enough for the FATAL message and the socket's end to reach the client, while it is checked out.
  await sleep(150);
};
const rows = async () =>
  (await admin.query(`SELECT v FROM ${table} ORDER BY id`)).rows.map((r: { v: string }) => r.v);

const report: Record<string, unknown> = {};
try {
  await admin.query(`CREATE TABLE ${table} (id SERIAL PRIMARY KEY, v TEXT NOT NULL)`);

  // 1. Terminated once mid-transaction, before COMMIT: rolled back, run again on a fresh connection.
  let runs = 0;
  const pids: unknown[] = [];
  const result = await driver.transaction(async (tx) => {
    runs += 1;
    const [row] = await tx.query('SELECT pg_backend_pid() AS pid');
    pids.push(row?.pid);
    await tx.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`run${runs}-a`]);
    if (runs === 1) await terminate(row?.pid);
    await tx.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`run${runs}-b`]);
    return runs;
  });
  report.once = { result, runs, distinctConnections: new Set(pids).size, rows: await rows() };

  // 2. Terminated on every try: the transaction rejects (nothing written), and the next one succeeds.
  await admin.query(`TRUNCATE ${table}`);
  let tries = 0;
  const failed = await driver
    .transaction(async (tx) => {
      tries += 1;
      const [row] = await tx.query('SELECT pg_backend_pid() AS pid');
      await tx.query(`INSERT INTO ${table} (v) VALUES ('doomed')`);
      await terminate(row?.pid);
      await tx.query(`INSERT INTO ${table} (v) VALUES ('doomed too')`);
    })
    .then(
      () => null,
      (error: unknown) => ({ connectionFault: isConnectionFault(error), message: String(error) }),
    );
  const afterwards = await driver.transaction(async (tx) => {
    await tx.query(`INSERT INTO ${table} (v) VALUES ('after')`);
    return 'ok';
  });
  report.always = { failed, tries, maxTries: MAX_TRIES, afterwards, rows: await rows() };

  // 3. A write statement whose connection is terminated while it runs: it ran in a transaction of its own,
  //    which the server rolled back, so it runs again and is written once; a read runs again too.
  //    Neither takes the process down.
  await admin.query(`TRUNCATE ${table}`);
  const slowWrite = driver.query(`INSERT INTO ${table} (v) SELECT 'slow' FROM pg_sleep(1)`).then(
    () => 'resolved',
    (error: unknown) => (isConnectionFault(error) ? 'rejected: connection fault' : `rejected: ${error}`),
  );
  await sleep(300);
  await admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep(1)%' AND pid <> pg_backend_pid()",
  );
  const write = await slowWrite;
  const slowWriteRows = await rows();
  await admin.query(`TRUNCATE ${table}`);
  let readTerminated = false;
  const slowRead = driver
    .query('SELECT 42 AS answer FROM pg_sleep(0.6)')
    .catch((error: unknown) => [{ answer: `rejected: ${error}` }]);
  await sleep(300);
  const terminated = await admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE '%pg_sleep(0.6)%' AND pid <> pg_backend_pid()",
  );
  readTerminated = terminated.rowCount === 1;
  const [read] = await slowRead;
  report.statements = { write, rows: slowWriteRows, readTerminated, read: read?.answer };

  // 4. COMMIT sent, then the connection lost before its answer came: the server committed, so the
  //    driver asks it by the transaction's id and returns the result without running the transaction again.
  await admin.query(`TRUNCATE ${table}`);
  cutAfterCommit = true;
  let commitRuns = 0;
  const committed = await driver.transaction(async (tx) => {
    commitRuns += 1;
    await tx.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`committed-run${commitRuns}`]);
    return commitRuns;
  });
  report.commitLost = { result: committed, runs: commitRuns, commit: commitAnswer, rows: await rows() };

  // 5. COMMIT sent, and the connection terminated while it ran (a deferred trigger makes it slow): the
  //    server rolled it back, says so when asked, and the transaction runs again, written once.
  await admin.query(`TRUNCATE ${table}`);
  await admin.query(`CREATE FUNCTION ${table}_slow() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF NEW.v = 'slow-commit-run1' THEN PERFORM pg_sleep(1); END IF; RETURN NULL; END $$`);
  await admin.query(`CREATE CONSTRAINT TRIGGER slow_commit AFTER INSERT ON ${table}
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${table}_slow()`);
  let slowRuns = 0;
  const slowCommit = driver.transaction(async (tx) => {
    slowRuns += 1;
    await tx.query(`INSERT INTO ${table} (v) VALUES ($1)`, [`slow-commit-run${slowRuns}`]);
    return slowRuns;
  });
  await sleep(300);
  const inCommit = await admin.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query = 'COMMIT' AND state = 'active' AND pid <> pg_backend_pid()",
  );
  report.commitAborted = {
    terminated: inCommit.rowCount,
    result: await slowCommit,
    runs: slowRuns,
    rows: await rows(),
  };

  // 6. Every idle pooled connection terminated: the next statement gets a fresh one.
  await Promise.all([1, 2, 3].map(() => driver.query('SELECT pg_sleep(0.05)')));
  const idle = await admin.query(
    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND usename = current_user',
  );
  await sleep(150);
  const [after] = await driver.query('SELECT 1 AS one');
  report.idle = { terminated: idle.rowCount, after: after?.one };
} finally {
  await admin.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
  await admin.query(`DROP FUNCTION IF EXISTS ${table}_slow()`).catch(() => undefined);
  await admin.end();
  await pool.end();
}
process.stdout.write(`${JSON.stringify(report)}\n`);
