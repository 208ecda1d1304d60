import { join } from 'node:path';
import { openPostgresStore, type PostgresStoreOptions } from './postgresStore.ts';
import { openSqliteStore } from './sqliteStore.ts';
import type { GatingStore } from './types.ts';

export { openPostgresStore } from './postgresStore.ts';
export { openSqliteStore } from './sqliteStore.ts';
export type * from './types.ts';

export const SQLITE_FILE_NAME = 'bot.sqlite';

/** PostgreSQL when `databaseUrl` is set, else the embedded SQLite file `<dataDir>/bot.sqlite`. */
export function openStore(
  config: { databaseUrl?: string | undefined; dataDir: string },
  opts: PostgresStoreOptions = {},
): Promise<GatingStore> {
  if (config.databaseUrl) return openPostgresStore(config.databaseUrl, opts);
  const { schema: _schema, maxConnections: _max, ...sqliteOpts } = opts;
  return openSqliteStore(join(config.dataDir, SQLITE_FILE_NAME), sqliteOpts);
}
