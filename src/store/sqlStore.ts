import type { SqlDriver } from './sql.ts';
import { createSqlAuditEvents } from './sqlAuditEvents.ts';
import { createSqlDashboard } from './sqlDashboard.ts';
import { createSqlDueChecks } from './sqlDueChecks.ts';
import { createSqlExemptions } from './sqlExemptions.ts';
import { createSqlFarcasterFlows } from './sqlFarcasterFlows.ts';
import { createSqlGuildAuthority } from './sqlGuildAuthority.ts';
import { createSqlGuildLeases } from './sqlGuildLeases.ts';
import { createSqlGuildSettings } from './sqlGuildSettings.ts';
import { createSqlHandoffs } from './sqlHandoffs.ts';
import { createSqlLinks } from './sqlLinks.ts';
import { createSqlLinkWrites } from './sqlLinkWrites.ts';
import { createSqlNonces } from './sqlNonces.ts';
import { createSqlPendingLosses } from './sqlPendingLosses.ts';
import { createSqlRecheckCycles } from './sqlRecheckCycles.ts';
import { createSqlRoleConnections } from './sqlRoleConnections.ts';
import { createSqlRoleQueue } from './sqlRoleQueue.ts';
import { createSqlRoleRules } from './sqlRoleRules.ts';
import { sqlRows } from './sqlRows.ts';
import { createSqlSignedProofs } from './sqlSignedProofs.ts';
import { createSqlVerifyPanels } from './sqlVerifyPanels.ts';
import type { GatingStore, StoreOptions } from './types.ts';

export const DEFAULT_LEASE_MS = 60_000;

/** The `GatingStore` both implementations share, on top of a dialect-aware driver. */
export function createSqlStore(driver: SqlDriver, opts: StoreOptions = {}): GatingStore {
  const now = opts.now ?? Date.now;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;

  const mappers = sqlRows(driver, now);

  return {
    ...createSqlRoleConnections(driver, now),
    ...createSqlSignedProofs(driver, now, leaseMs),
    ...createSqlHandoffs(driver, now, leaseMs),
    ...createSqlPendingLosses(driver, mappers),
    ...createSqlAuditEvents(driver, mappers),
    ...createSqlNonces(driver, now, mappers),
    ...createSqlVerifyPanels(driver, now),
    ...createSqlExemptions(driver, { now, rows: mappers }),
    ...createSqlRoleRules(driver, { now, rows: mappers }),
    ...createSqlDueChecks(driver),
    ...createSqlGuildAuthority(driver, { now, rows: mappers }),
    ...createSqlDashboard(driver, { now, leaseMs, rows: mappers }),
    ...createSqlFarcasterFlows(driver, now),
    ...createSqlGuildLeases(driver, now, leaseMs),
    ...createSqlRecheckCycles(driver, mappers),
    ...createSqlGuildSettings(driver, { now, rows: mappers }),
    ...createSqlLinkWrites(driver, { now, rows: mappers }),
    ...createSqlLinks(driver, mappers),
    ...createSqlRoleQueue(driver, { now, leaseMs, rows: mappers }),

    close: () => driver.close(),
  };
}
