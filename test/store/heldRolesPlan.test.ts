/**
 * The held-roles query of /gating export finds a member's later events through the member, never through
 * the role: every holder of a role shares it, and SQLite once chose the by-role index there (migration 17),
 * which made the export on 100,000 members sharing a role spin for minutes with the event loop blocked.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HELD_ROLES_SQL } from '../../src/store/sqlAuditEvents.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';

let dir: string;
let file: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'held-roles-plan-'));
  file = join(dir, 'bot.db');
  const store = await openSqliteStore(file);
  await store.close();
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

function planOf(sql: string): string[] {
  const db = new DatabaseSync(file);
  try {
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql.replace(/\$\d+/g, '?')}`).all('g', '', '', 100);
    return plan.map((row) => String(row.detail));
  } finally {
    db.close();
  }
}

describe('the held-roles query plan (SQLite)', () => {
  it('looks for later events of a member and role in that member’s own events', () => {
    const plan = planOf(HELD_ROLES_SQL);
    const subquery = plan.slice(plan.findIndex((line) => line.includes('SUBQUERY')));
    expect(subquery.some((line) => line.includes('audit_events_by_member_role'))).toBe(true);
    expect(plan.join('\n')).not.toContain('audit_events_by_role');
  });
});
