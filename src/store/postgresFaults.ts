/**
 * A dropped PostgreSQL connection (a failover, a restart, `pg_terminate_backend`, a pooler's idle
 * timeout) is an error of the one operation that was using it, never of the process, and some operations
 * can safely run again. pg-pool listens for errors only on idle clients: it removes its listener from a
 * client it hands out (`_acquireClient` in pg-pool), so a checked-out client whose connection ends emits
 * an `'error'` nobody handles and Node exits. `watchConnections` gives every client a listener of its own.
 * @see https://www.postgresql.org/docs/current/errcodes-appendix.html (class 08, 57P01-57P03)
 */
import type pg from 'pg';

/** SQLSTATEs of a connection the server ended or refused: admin_shutdown, crash_shutdown, cannot_connect_now. */
const SERVER_ENDED = new Set(['57P01', '57P02', '57P03']);
/** Socket errors of a connection that broke or could not be made. */
const SOCKET_ERRORS = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTCONN',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
/** What pg itself says when the socket ended under a query, or a client broke before one was sent. */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /not queryable/,
  /timeout exceeded when trying to connect/,
];

/** Whether `error` says the connection dropped (or could not be made), rather than the statement failing. */
export function isConnectionFault(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SERVER_ENDED.has(code) || SOCKET_ERRORS.has(code)) return true;
    // Class 08: connection exception (SQLSTATEs are five characters).
    if (code.length === 5 && code.startsWith('08')) return true;
  }
  return DRIVER_MESSAGES.some((pattern) => pattern.test(error.message));
}

/** A statement that only reads: running it again changes nothing. */
export function readsOnly(sql: string): boolean {
  return /^\s*SELECT\b/i.test(sql) && !/\bFOR\s+(UPDATE|SHARE|NO\s+KEY|KEY)\b/i.test(sql);
}

/**
 * Every client of `pool` gets an error listener of its own as it connects (the pool's `'connect'` event),
 * which it keeps while idle and while checked out, recording what broke it. A listener attached after
 * `pool.connect()` resolves would come too late for a new connection: the server's termination can arrive
 * in the same read as the connection's ready message, and pg parses both in one tick, before that promise
 * settles. Returns what a client reported, if anything. Idle clients' errors also reach the pool, which
 * drops them (the `'error'` listener here keeps that from crashing the process too).
 */
export function watchConnections(pool: Pick<pg.Pool, 'on'>): (client: pg.PoolClient) => Error | undefined {
  const faults = new WeakMap<pg.PoolClient, Error>();
  pool.on('error', () => undefined);
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      if (!faults.has(client)) faults.set(client, error);
    });
  });
  return (client) => faults.get(client);
}

/** A client checked out of the pool. */
export interface CheckedOut {
  readonly client: pg.PoolClient;
  /** The error the connection reported (it dropped), if any. */
  fault(): Error | undefined;
  /** Hand the client back: with an error (given, or the one it reported) the pool destroys it. */
  release(error?: Error): void;
}

export async function checkOut(
  pool: Pick<pg.Pool, 'connect'>,
  faultOf: (client: pg.PoolClient) => Error | undefined,
): Promise<CheckedOut> {
  const client = await pool.connect();
  let released = false;
  return {
    client,
    fault: () => faultOf(client),
    release(error) {
      if (released) return;
      released = true;
      client.release(error ?? faultOf(client));
    },
  };
}

export function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
