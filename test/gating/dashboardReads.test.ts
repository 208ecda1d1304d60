/**
 * The dashboard's store-only reads: the overview's series (each day's count in its place, days without
 * events zero, nothing outside the period), counts, last pass and upstream health; the audit page's
 * cursors both ways; and the oldest-first stream the CSV download writes.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  auditEventsOldestFirst,
  LINKED_COUNT_TTL_MS,
  LinkedCounts,
  readAuditPage,
  readOverview,
} from '../../src/gating/dashboard/reads.ts';
import { DAY_MS } from '../../src/store/auditMetric.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { AuditEvent, GatingStore } from '../../src/store/types.ts';

const G = '1100000000000000001';
const TODAY = 20_100;
const NOW = TODAY * DAY_MS + 12 * 3_600_000;
let store: GatingStore;

beforeEach(async () => {
  store = await openSqliteStore(':memory:', { now: () => NOW });
});
afterEach(async () => {
  await store.close();
});

describe('the overview', () => {
  it('puts each day’s count in its place over 30 or 90 days, with the counts, last pass and upstream', async () => {
    await store.saveGuildSettings({
      guildId: G,
      enabled: true,
      humanRoleId: 'human',
      spamRoleId: 'spam',
      riskyRoleId: null,
      minScore: 20,
      spamRemovesHuman: true,
      logChannelId: null,
    });
    const add = (
      kind: string,
      daysAgo: number,
      roleId: string | null = null,
      details: object | null = null,
    ) =>
      store.addAuditEvent({
        guildId: G,
        kind,
        roleId,
        reason: 'r',
        details: details as never,
        createdAt: NOW - daysAgo * DAY_MS,
      });
    await add('role_added', 0, 'human');
    await add('role_added', 0, 'human');
    await add('role_added', 29, 'human');
    await add('role_added', 30, 'human');
    await add('role_added', 89, 'spam');
    await add('role_removed', 1, 'human');
    await add('recheck_pass', 2, null, { members: 12, holders: { human: 9, flagged: 1 } });
    await add('recheck_pass', 40, null, { members: 3 });
    await store.addUpstreamMinute(Math.floor(NOW / 60_000), { requests: 4, errors: 1, seconds: 2, slow: 1 });
    await store.addUpstreamMinute(Math.floor(NOW / 60_000) - 120, {
      requests: 6,
      errors: 0,
      seconds: 1,
      slow: 0,
    });
    await store.notePendingLoss({
      guildId: G,
      userId: 'u',
      subject: 'role:human',
      firstSeenAt: 1,
      reason: 'r',
    });

    const month = await readOverview(store, G, { now: NOW, days: 30 });
    expect(month.firstDay).toBe(TODAY - 29);
    expect(month.series.role_added).toHaveLength(30);
    expect(month.series.role_added[29]).toBe(2);
    expect(month.series.role_added[0]).toBe(1);
    expect(month.series.role_added.reduce((a, b) => a + b)).toBe(3);
    expect(month.series.role_removed[28]).toBe(1);
    expect(month.series.flag_added.reduce((a, b) => a + b)).toBe(0);
    expect(month.lastPass).toEqual({ at: NOW - 2 * DAY_MS, members: 12, holders: { human: 9, flagged: 1 } });
    expect(month.losses).toEqual({ pending: 1, held: 0 });
    expect(month.settings?.minScore).toBe(20);
    expect(month.upstream.lastHour).toEqual({ requests: 4, errors: 1, seconds: 2, slow: 1 });
    expect(month.upstream.lastDay).toEqual({ requests: 10, errors: 1, seconds: 3, slow: 1 });

    const quarter = await readOverview(store, G, { now: NOW, days: 90 });
    expect(quarter.series.role_added.reduce((a, b) => a + b)).toBe(4);
    expect(quarter.series.flag_added[0]).toBe(1);
    expect(quarter.series.recheck_pass.reduce((a, b) => a + b)).toBe(2);
  });

  it('has no last pass and empty series for a server with no events', async () => {
    const empty = await readOverview(store, G, { now: NOW, days: 30 });
    expect(empty.lastPass).toBeNull();
    expect(empty.settings).toBeNull();
    expect(
      Object.values(empty.series)
        .flat()
        .every((n) => n === 0),
    ).toBe(true);
  });
});

it('reuses a guild’s linked count for 30 s, then counts again', async () => {
  let counted = 0;
  const counting = { countLinkedUsers: async () => ++counted };
  const counts = new LinkedCounts();
  expect(await counts.get(counting, G, NOW)).toBe(1);
  expect(await counts.get(counting, G, NOW + LINKED_COUNT_TTL_MS - 1)).toBe(1);
  expect(await counts.get(counting, 'other', NOW)).toBe(2);
  expect(await counts.get(counting, G, NOW + LINKED_COUNT_TTL_MS)).toBe(3);
  // A clock gone backwards never trusts an entry from the future.
  expect(await counts.get(counting, G, NOW)).toBe(4);
});

describe('the audit page', () => {
  let events: AuditEvent[];
  beforeEach(async () => {
    events = [];
    for (let i = 0; i < 12; i++)
      events.push(
        await store.addAuditEvent({
          guildId: G,
          kind: 'linked',
          userId: `u${i % 3}`,
          reason: `e${i}`,
          createdAt: NOW - i * 1_000,
        }),
      );
  });

  it('links older and newer pages by cursor, none past either end', async () => {
    const first = await readAuditPage(store, { guildId: G }, {}, 5);
    expect(first.events.map((e) => e.reason)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    expect(first.newer).toBeNull();
    if (!first.older) throw new Error('no older page');
    const second = await readAuditPage(store, { guildId: G }, { before: first.older }, 5);
    expect(second.events.map((e) => e.reason)).toEqual(['e5', 'e6', 'e7', 'e8', 'e9']);
    if (!second.older || !second.newer) throw new Error('no cursors');
    const last = await readAuditPage(store, { guildId: G }, { before: second.older }, 5);
    expect(last.events.map((e) => e.reason)).toEqual(['e10', 'e11']);
    expect(last.older).toBeNull();
    const back = await readAuditPage(store, { guildId: G }, { after: second.newer }, 5);
    expect(back.events.map((e) => e.reason)).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    expect(back.newer).toBeNull();
    expect(back.older).toEqual(first.older);
    const filtered = await readAuditPage(store, { guildId: G, userId: 'u1' }, {}, 50);
    expect(filtered.events.map((e) => e.reason)).toEqual(['e1', 'e4', 'e7', 'e10']);
  });

  it('streams every selected event oldest first, page by page', async () => {
    const seen: string[] = [];
    for await (const e of auditEventsOldestFirst(store, { guildId: G }, 5)) seen.push(e.reason);
    expect(seen).toEqual(events.map((e) => e.reason).reverse());
  });
});
