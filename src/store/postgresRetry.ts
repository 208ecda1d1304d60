/**
 * How the PostgreSQL driver (`createPostgresDriver`) tries again after a dropped connection: how many
 * tries, how long between them, and, for a transaction whose COMMIT was sent when its connection dropped,
 * whether it committed. The server answers that by the transaction's id (fetched in BEGIN's round trip),
 * asked on a fresh connection: the use `pg_xact_status` is documented for.
 * @see https://www.postgresql.org/docs/current/functions-info.html#FUNCTIONS-INFO-SNAPSHOT
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Row, SqlParam } from './sql.ts';

/** Tries of one operation whose connection keeps dropping, the first included. */
export const MAX_TRIES = 6;
const FIRST_WAIT_MS = 25;
const LONGEST_WAIT_MS = 400;

/**
 * The wait after try `attempt` failed: 25 ms doubling to at most 400 ms (at most 775 ms over all of
 * MAX_TRIES), each between half and all of that, so the connections one failover dropped do not all
 * come back in the same instant.
 */
export function retryWaitMs(attempt: number, random: () => number = Math.random): number {
  const full = Math.min(LONGEST_WAIT_MS, FIRST_WAIT_MS * 2 ** (Math.max(1, attempt) - 1));
  return Math.round(full * (0.5 + random() / 2));
}

export const pauseBeforeRetry = (attempt: number) => delay(retryWaitMs(attempt));

/** BEGIN, and the transaction's id assigned at once, in one round trip: the id is known before COMMIT. */
export const BEGIN_WITH_ID = 'BEGIN; SELECT pg_current_xact_id()::text AS xid';

/** The id `BEGIN_WITH_ID` answered (pg answers a multi-statement query with one result per statement). */
export function transactionIdOf(answer: unknown): string | undefined {
  const results = (Array.isArray(answer) ? answer : [answer]) as { rows?: Row[] }[];
  const xid = results.at(-1)?.rows?.[0]?.xid;
  return typeof xid === 'string' ? xid : undefined;
}

export type CommitOutcome = 'committed' | 'aborted' | 'unknown';

/**
 * Whether the transaction `xid` committed, asked through `read` (a statement on any connection, itself
 * tried again when its connection drops). 'in progress' is asked again while the ended backend finishes
 * rolling back; 'unknown' when the server cannot be asked or does not settle within MAX_TRIES looks.
 */
export async function commitOutcome(
  read: (sql: string, params: readonly SqlParam[]) => Promise<Row[]>,
  xid: string,
): Promise<CommitOutcome> {
  for (let look = 1; look <= MAX_TRIES; look += 1) {
    const status = await read('SELECT pg_xact_status($1::xid8) AS status', [xid]).then(
      ([row]) => row?.status,
      () => undefined,
    );
    if (status === 'committed' || status === 'aborted') return status;
    if (status !== 'in progress') return 'unknown';
    await pauseBeforeRetry(look);
  }
  return 'unknown';
}
