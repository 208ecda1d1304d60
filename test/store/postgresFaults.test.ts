/**
 * A dropped PostgreSQL connection is an error of one operation, never of the process: against the real
 * server (in a child process, so an `'error'` event nobody handles fails the test by its exit code), and
 * the retry rule on a scripted pool (which failures run again, which reach the caller).
 */
import { spawn } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { fileURLToPath } from 'node:url';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { isConnectionFault, readsOnly } from '../../src/store/postgresFaults.ts';
import { BEGIN_WITH_ID, MAX_TRIES, retryWaitMs } from '../../src/store/postgresRetry.ts';
import { createPostgresDriver } from '../../src/store/postgresStore.ts';

const PROBE = fileURLToPath(new URL('./connectionDropProbe.ts', import.meta.url));

describe('the PostgreSQL driver while the server terminates its connections', () => {
  it('a checked-out client terminated mid-transaction: no unhandled error; the transaction runs again or rejects', async () => {
    // A database of its own: the probe terminates every backend of its database, and other test files
    // (run beside it) keep theirs.
    const db = await createDatabase('fault_probe');
    const child = spawn(process.execPath, [PROBE, db.url], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, 'exit');
    // A probe that crashed left its table behind: gone with its database.
    await db.drop();
    expect(stderr).not.toContain("Unhandled 'error' event");
    expect(code, stderr).toBe(0);
    const report = JSON.parse(stdout);
    // Terminated before COMMIT once: rolled back, run again on another connection, written once.
    expect(report.once).toEqual({
      result: 2,
      runs: 2,
      distinctConnections: 2,
      rows: ['run2-a', 'run2-b'],
    });
    // Terminated on every try: rejected as a connection fault after MAX_TRIES, nothing written; the
    // next transaction on the same pool succeeds.
    expect(report.always).toMatchObject({
      failed: { connectionFault: true },
      tries: MAX_TRIES,
      afterwards: 'ok',
      rows: ['after'],
    });
    // A write cut off while running ran in a transaction of its own, rolled back: run again, written
    // once; a read is run again too, and answers.
    expect(report.statements).toEqual({
      write: 'resolved',
      rows: ['slow'],
      readTerminated: true,
      read: 42,
    });
    // COMMIT sent and its answer lost: the server says it committed; the result, written once, not run again.
    expect(report.commitLost).toEqual({ result: 1, runs: 1, commit: 'lost', rows: ['committed-run1'] });
    // COMMIT sent and terminated while it ran: the server says it rolled back; run again, written once.
    expect(report.commitAborted).toEqual({
      terminated: 1,
      result: 2,
      runs: 2,
      rows: ['slow-commit-run2'],
    });
    expect(report.idle.terminated).toBeGreaterThanOrEqual(1);
    expect(report.idle.after).toBe(1);
  }, 30_000);
});

/** What a scripted client does with one statement: answer rows, or fail (and, dropped, emit 'error'). */
type Step = { rows?: unknown[]; drop?: true; fail?: string };

/**
 * A pool whose clients answer statements by `script(sql, tryNumber)` (BEGIN with its transaction id
 * logged as `BEGIN`, answering the id `tx<n>`; the commit status of an id logged as `STATUS <id>` and
 * answered by `statusOf`); records what happened.
 */
function scriptedPool(
  script: (sql: string, attempt: number) => Step,
  statusOf: (xid: string, look: number) => string | null = () => 'aborted',
) {
  const log: string[] = [];
  const released: (Error | undefined)[] = [];
  let attempt = 0;
  let looks = 0;
  const pool = Object.assign(new EventEmitter(), {
    async connect() {
      attempt += 1;
      const tryNumber = attempt;
      const client = new EventEmitter() as EventEmitter & Record<string, unknown>;
      client.query = async (text: string, params: unknown[] = []) => {
        if (text.includes('pg_xact_status')) {
          looks += 1;
          log.push(`${tryNumber}:STATUS ${String(params[0])}`);
          return { rows: [{ status: statusOf(String(params[0]), looks) }] };
        }
        const sql = text === BEGIN_WITH_ID ? 'BEGIN' : text;
        log.push(`${tryNumber}:${sql}`);
        const step = script(sql, tryNumber);
        if (step.drop) {
          const error = Object.assign(new Error('terminating connection due to administrator command'), {
            code: '57P01',
          });
          // pg reports the end of the socket on the client as well (an unheard one throws).
          client.emit('error', new Error('Connection terminated unexpectedly'));
          throw error;
        }
        if (step.fail) throw Object.assign(new Error(step.fail), { code: '23505' });
        // pg answers a query of two statements with one result each.
        if (sql === 'BEGIN') return [{ rows: [] }, { rows: [{ xid: `tx${tryNumber}` }] }];
        return { rows: step.rows ?? [] };
      };
      client.release = (error?: Error) => released.push(error);
      pool.emit('connect', client);
      return client;
    },
    end: async () => {},
  });
  return { driver: createPostgresDriver(pool as unknown as pg.Pool), log, released };
}

describe('the retry rule', () => {
  it('a transaction dropped before COMMIT was sent runs again, on a fresh connection', async () => {
    const { driver, log, released } = scriptedPool((sql, n) =>
      n === 1 && sql === 'UPDATE t' ? { drop: true } : {},
    );
    let runs = 0;
    await driver.transaction(async (tx) => {
      runs += 1;
      await tx.query('UPDATE t');
    });
    expect(runs).toBe(2);
    expect(log).toEqual(['1:BEGIN', '1:UPDATE t', '2:BEGIN', '2:UPDATE t', '2:COMMIT']);
    // The dropped client is handed back with its error (destroyed), without a ROLLBACK on a dead socket.
    expect(released[0]).toBeInstanceOf(Error);
    expect(released[1]).toBeUndefined();
  });

  it('COMMIT sent when the connection dropped, and the server says it committed: the result, not run again', async () => {
    const { driver, log } = scriptedPool(
      (sql) => (sql === 'COMMIT' ? { drop: true } : {}),
      (xid) => (xid === 'tx1' ? 'committed' : null),
    );
    let runs = 0;
    const result = await driver.transaction(async (tx) => {
      runs += 1;
      await tx.query('UPDATE t');
      return `run ${runs}`;
    });
    expect(result).toBe('run 1');
    expect(runs).toBe(1);
    expect(log).toEqual(['1:BEGIN', '1:UPDATE t', '1:COMMIT', '2:STATUS tx1']);
  });

  it('COMMIT sent when the connection dropped, and the server says it was rolled back: run again', async () => {
    const { driver, log } = scriptedPool(
      (sql, n) => (n === 1 && sql === 'COMMIT' ? { drop: true } : {}),
      (_xid, look) => (look === 1 ? 'in progress' : 'aborted'),
    );
    let runs = 0;
    await driver.transaction(async (tx) => {
      runs += 1;
      await tx.query('UPDATE t');
    });
    expect(runs).toBe(2);
    // Still in progress at the first look (the ended backend was rolling back): asked again.
    expect(log).toEqual([
      '1:BEGIN',
      '1:UPDATE t',
      '1:COMMIT',
      '2:STATUS tx1',
      '3:STATUS tx1',
      '4:BEGIN',
      '4:UPDATE t',
      '4:COMMIT',
    ]);
  });

  it('COMMIT sent when the connection dropped, and the server cannot tell: the error reaches the caller', async () => {
    for (const status of [null, 'in progress']) {
      const { driver, log } = scriptedPool(
        (sql) => (sql === 'COMMIT' ? { drop: true } : {}),
        () => status,
      );
      let runs = 0;
      const failed = driver.transaction(async (tx) => {
        runs += 1;
        await tx.query('UPDATE t');
      });
      await expect(failed).rejects.toMatchObject({ code: '57P01' });
      expect(runs).toBe(1);
      expect(log.filter((line) => line.includes('STATUS'))).toHaveLength(status === null ? 1 : MAX_TRIES);
    }
  });

  it('a statement error that is not a dropped connection rolls back and reaches the caller at once', async () => {
    const { driver, log, released } = scriptedPool((sql) =>
      sql === 'INSERT x' ? { fail: 'duplicate key' } : {},
    );
    await expect(driver.transaction((tx) => tx.query('INSERT x'))).rejects.toThrow('duplicate key');
    expect(log).toEqual(['1:BEGIN', '1:INSERT x', '1:ROLLBACK']);
    expect(released).toEqual([undefined]);
    await expect(driver.query('INSERT x')).rejects.toThrow('duplicate key');
    expect(log.slice(3)).toEqual(['2:BEGIN', '2:INSERT x', '2:ROLLBACK']);
  });

  it('gives up after MAX_TRIES', async () => {
    const { driver, log } = scriptedPool((sql) => (sql === 'BEGIN' ? { drop: true } : {}));
    await expect(driver.transaction(async () => 1)).rejects.toMatchObject({ code: '57P01' });
    expect(log).toEqual(Array.from({ length: MAX_TRIES }, (_, i) => `${i + 1}:BEGIN`));
  });

  it('a read dropped mid-statement runs again; a write runs in a transaction of its own, run again when rolled back', async () => {
    const reads = scriptedPool((_sql, n) => (n === 1 ? { drop: true } : { rows: [{ n: 1 }] }));
    expect(await reads.driver.query('SELECT n FROM t WHERE id = $1', [1])).toEqual([{ n: 1 }]);
    expect(reads.log).toEqual(['1:SELECT n FROM t WHERE id = $1', '2:SELECT n FROM t WHERE id = $1']);
    const write = "UPDATE t SET n = n + 1 WHERE id = '1' RETURNING n";
    const writes = scriptedPool((sql, n) =>
      n === 1 && sql === write ? { drop: true } : { rows: [{ n: 2 }] },
    );
    expect(await writes.driver.query(write)).toEqual([{ n: 2 }]);
    expect(writes.log).toEqual(['1:BEGIN', `1:${write}`, '2:BEGIN', `2:${write}`, '2:COMMIT']);
    // A write whose COMMIT was cut off, that the server says committed: its rows, not applied twice.
    const committed = scriptedPool(
      (sql, n) => (n === 1 && sql === 'COMMIT' ? { drop: true } : { rows: [{ n: n + 1 }] }),
      () => 'committed',
    );
    expect(await committed.driver.query(write)).toEqual([{ n: 2 }]);
    expect(committed.log.filter((line) => line.endsWith(write))).toHaveLength(1);
    // A locking read is a write for this purpose.
    const locking = scriptedPool(() => ({}));
    await locking.driver.query('SELECT * FROM t FOR UPDATE');
    expect(locking.log).toEqual(['1:BEGIN', '1:SELECT * FROM t FOR UPDATE', '1:COMMIT']);
  });

  it('waits 25 ms doubling to 400 ms between tries, each between half and all of it', () => {
    const waits = (random: () => number) =>
      Array.from({ length: MAX_TRIES - 1 }, (_, i) => retryWaitMs(i + 1, random));
    expect(waits(() => 1 - Number.EPSILON)).toEqual([25, 50, 100, 200, 400]);
    expect(waits(() => 0)).toEqual([13, 25, 50, 100, 200]);
    expect(retryWaitMs(12, () => 0.5)).toBe(300);
  });

  it('a statement whose connection could not be had runs again', async () => {
    let connects = 0;
    const pool = Object.assign(new EventEmitter(), {
      async connect() {
        connects += 1;
        if (connects === 1)
          throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
        const client = new EventEmitter() as EventEmitter & Record<string, unknown>;
        client.query = async () => ({ rows: [{ ok: true }] });
        client.release = () => {};
        return client;
      },
      end: async () => {},
    });
    const driver = createPostgresDriver(pool as unknown as pg.Pool);
    expect(await driver.query("INSERT INTO t VALUES ('x') RETURNING true AS ok")).toEqual([{ ok: true }]);
    expect(connects).toBe(2);
  });

  it('tells a dropped connection from a failed statement', () => {
    const coded = (code: string, message = 'x') => Object.assign(new Error(message), { code });
    for (const fault of [
      coded('57P01'),
      coded('57P02'),
      coded('57P03'),
      coded('08006'),
      coded('ECONNRESET'),
      new Error('Connection terminated unexpectedly'),
      new Error('Client has encountered a connection error and is not queryable'),
    ])
      expect(isConnectionFault(fault), fault.message).toBe(true);
    for (const other of [coded('23505'), coded('40001'), coded('42P01'), new Error('boom'), 'text'])
      expect(isConnectionFault(other)).toBe(false);
    expect(readsOnly('  select 1')).toBe(true);
    expect(readsOnly('SELECT * FROM t FOR NO KEY UPDATE')).toBe(false);
    expect(readsOnly('WITH x AS (UPDATE t SET a = 1 RETURNING *) SELECT * FROM x')).toBe(false);
  });
});
