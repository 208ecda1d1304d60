/**
 * The thin SQL layer both stores run on: one query shape (`$1` placeholders), one transaction helper,
 * and the few dialect differences spelled out in `Dialect`.
 */

export type SqlParam = string | number | boolean | null;
export type Row = Record<string, unknown>;

export interface SqlExecutor {
  /** Run one statement with `$1`-style placeholders; returns its rows (or `RETURNING` rows). */
  query(sql: string, params?: readonly SqlParam[]): Promise<Row[]>;
  /** Run a parameterless script of one or more statements (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Dialect {
  name: 'sqlite' | 'postgres';
  /** Column types for the migrations. */
  types: { autoId: string; bigint: string; bool: string; real: string; json: string };
  /** Appended to the claim sub-select so concurrent workers skip each other's rows. */
  skipLocked: string;
  /**
   * Locks one key (`$1`, text: a registry subject, an account's challenges) until the transaction ends;
   * null where write transactions already run one at a time (SQLite).
   */
  subjectLock: string | null;
  /** Run first inside the migration transaction so concurrent starters wait for each other. */
  migrationLock: string | null;
  /** Whether the driver hands JSON columns back already parsed (jsonb) or as text. */
  parsesJson: boolean;
}

export interface SqlDriver extends SqlExecutor {
  readonly dialect: Dialect;
  /**
   * Run `fn` in one write transaction; commits on success, rolls back on throw. `fn` may run more than
   * once (PostgreSQL runs it again when its connection dropped and the server rolled it back): it must
   * do nothing but statements on `tx`.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * PostgreSQL text and jsonb cannot hold U+0000, so both stores write it as U+FFFD. Keys map the same
 * way on read and write, so a lookup by the original string still finds its row.
 */
export function toStorableText(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** JSON text for a JSON column, with U+0000 in string values made storable. */
export function toStorableJson(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'string' ? toStorableText(v) : v));
}
