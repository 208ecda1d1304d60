import type { Dialect } from '../sql.ts';

/** One schema step. `sql` is written once; dialect differences come in through `d.types`. */
export interface Migration {
  version: number;
  name: string;
  sql: (d: Dialect) => string;
}
