/**
 * The dashboard's part of the store (migration 17), on SQLite and PostgreSQL: the daily counts every
 * audit insert keeps (and the migration's backfill), the filtered keyset pages of the audit page, held
 * losses, upstream minutes, the request queue with its shard filter and lease, and the richer snapshots.
 */
import { DatabaseSync } from 'node:sqlite';
import pg from 'pg';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DAY_MS } from '../../src/store/auditMetric.ts';
import { MIGRATIONS, runMigrations } from '../../src/store/migrations.ts';
import { createPostgresDriver } from '../../src/store/postgresStore.ts';
import type { SqlDriver } from '../../src/store/sql.ts';
import { shardKeyOf } from '../../src/store/sqlDashboardRequests.ts';
import { createSqliteDriver } from '../../src/store/sqliteStore.ts';
import type { AuditEvent, GatingStore } from '../../src/store/types.ts';
import { freshDatabaseEachTest, POSTGRES_URL, STORE_BACKENDS } from './harness.ts';

const G = '1100000000000000001';
const OTHER = '1100000000000000002';
const HOSTILE = `'); DROP TABLE audit_events; -- "quoted" \\ ✓ 𝔘 %s $1 ?1`;
const DAY0 = 20_000;
const at = (day: number, ms = 0) => day * DAY_MS + ms;

describe.each(STORE_BACKENDS)('the dashboard store (%s)', (_name, makeHarness) => {
  let store: GatingStore;
  const time = { t: at(DAY0 + 10) };

  freshDatabaseEachTest(makeHarness, async (h) => {
    time.t = at(DAY0 + 10);
    store = await h.open({ now: () => time.t, leaseMs: 1_000 });
  });

  async function setUp(guildId = G) {
    await store.saveGuildSettings({
      guildId,
      enabled: true,
      humanRoleId: 'human',
      spamRoleId: 'spam',
      riskyRoleId: 'risky',
      minScore: null,
      spamRemovesHuman: true,
      logChannelId: null,
    });
  }

  describe('daily counts', () => {
    it('counts each event on its UTC day, a spam or risky role given as a flag, a breaker hold by its size', async () => {
      await setUp();
      const add = (kind: string, day: number, roleId: string | null = null, details: object | null = null) =>
        store.addAuditEvent({
          guildId: G,
          kind,
          roleId,
          reason: 'r',
          details: details as never,
          createdAt: at(day, 3_600_000),
        });
      await add('role_added', DAY0, 'human');
      await add('role_added', DAY0, 'human');
      await add('role_added', DAY0, 'spam');
      await add('role_added', DAY0 + 1, 'risky');
      await add('role_removed', DAY0 + 1, 'human');
      await add('linked', DAY0 + 2);
      await add('recheck_pass', DAY0 + 2);
      await add('removals_held', DAY0 + 2, 'human', { count: 40 });
      await add('removals_held', DAY0 + 3, 'human', { count: 'lots' });
      // Another guild's events never count here.
      await add('role_added', DAY0, 'human').then(() =>
        store.addAuditEvent({
          guildId: OTHER,
          kind: 'role_added',
          roleId: 'human',
          reason: 'x',
          createdAt: at(DAY0),
        }),
      );
      const counts = await store.countAuditDaily(
        G,
        ['role_added', 'flag_added', 'role_removed', 'linked', 'recheck_pass', 'removals_held'],
        DAY0,
      );
      expect(counts).toEqual([
        { metric: 'flag_added', day: DAY0, count: 1 },
        { metric: 'flag_added', day: DAY0 + 1, count: 1 },
        { metric: 'linked', day: DAY0 + 2, count: 1 },
        { metric: 'recheck_pass', day: DAY0 + 2, count: 1 },
        { metric: 'removals_held', day: DAY0 + 2, count: 40 },
        { metric: 'removals_held', day: DAY0 + 3, count: 1 },
        { metric: 'role_added', day: DAY0, count: 3 },
        { metric: 'role_removed', day: DAY0 + 1, count: 1 },
      ]);
      expect(await store.countAuditDaily(G, ['role_added'], DAY0 + 1)).toEqual([]);
      expect(await store.countAuditDaily(G, [], DAY0)).toEqual([]);
    });

    it('counts the events other writes make in their own transactions (a role change, a link)', async () => {
      await setUp();
      await store.enqueueRoleChange({
        guildId: G,
        userId: 'u1',
        roleId: 'spam',
        op: 'add',
        reason: 'flagged',
      });
      const [claimed] = await store.claimRoleChanges(G, 1);
      if (!claimed?.claimToken) throw new Error('no claim');
      expect(await store.completeRoleChange(claimed.id, claimed.claimToken, 'done')).toBe(true);
      await store.saveLink(
        {
          guildId: G,
          userId: 'u1',
          identity: 'a.eth',
          platform: 'ens',
          address: null,
          proofMethod: 'record',
          provenAt: time.t,
        },
        'proved',
      );
      expect(await store.countAuditDaily(G, ['flag_added', 'linked'], DAY0)).toEqual([
        { metric: 'flag_added', day: DAY0 + 10, count: 1 },
        { metric: 'linked', day: DAY0 + 10, count: 1 },
      ]);
    });

    it('the latest event of a kind, and the held losses counted and cleared', async () => {
      await store.addAuditEvent({ guildId: G, kind: 'recheck_pass', reason: 'a', createdAt: at(DAY0) });
      await store.addAuditEvent({ guildId: G, kind: 'recheck_pass', reason: 'b', createdAt: at(DAY0 + 1) });
      await store.addAuditEvent({ guildId: G, kind: 'linked', reason: 'c', createdAt: at(DAY0 + 2) });
      expect((await store.latestAuditEvent(G, 'recheck_pass'))?.reason).toBe('b');
      expect(await store.latestAuditEvent(OTHER, 'recheck_pass')).toBeUndefined();

      for (const userId of ['u1', 'u2', 'u3'])
        await store.notePendingLoss({
          guildId: G,
          userId,
          subject: 'role:human',
          firstSeenAt: 1,
          reason: 'r',
        });
      await store.notePendingLoss({
        guildId: OTHER,
        userId: 'u1',
        subject: 'role:human',
        firstSeenAt: 1,
        reason: 'r',
      });
      await store.holdPendingLosses(
        G,
        [
          { userId: 'u1', subject: 'role:human' },
          { userId: 'u2', subject: 'role:human' },
        ],
        5,
      );
      await store.holdPendingLosses(OTHER, [{ userId: 'u1', subject: 'role:human' }], 5);
      expect(await store.countPendingLosses(G)).toEqual({ pending: 3, held: 2 });
      expect((await store.listHeldLosses(G, 10)).map((l) => l.userId)).toEqual(['u1', 'u2']);
      expect(await store.listHeldLosses(G, 1)).toHaveLength(1);
      expect(await store.clearHeldLosses(G)).toBe(2);
      expect(await store.countPendingLosses(G)).toEqual({ pending: 1, held: 0 });
      expect(await store.countPendingLosses(OTHER)).toEqual({ pending: 1, held: 1 });
    });
  });

  describe('the audit page', () => {
    let events: AuditEvent[];
    beforeEach(async () => {
      events = [];
      // 30 events over three days, two members, two roles, three kinds; some share a millisecond.
      for (let i = 0; i < 30; i++) {
        events.push(
          await store.addAuditEvent({
            guildId: G,
            userId: i % 2 === 0 ? 'u-even' : HOSTILE,
            kind: ['role_added', 'role_removed', 'linked'][i % 3] ?? 'linked',
            roleId: i % 3 === 2 ? null : i % 4 < 2 ? 'r1' : 'r2',
            reason: `event ${i}`,
            createdAt: at(DAY0 + Math.floor(i / 10), Math.floor(i / 2) * 1_000),
          }),
        );
      }
      await store.addAuditEvent({ guildId: OTHER, kind: 'linked', reason: 'other', createdAt: at(DAY0) });
    });
    const newestFirst = (list: AuditEvent[]) =>
      [...list].sort((a, b) => b.createdAt - a.createdAt || b.id - a.id).map((e) => e.reason);

    it('pages newest first by keyset, forwards and back, with no gaps or repeats', async () => {
      const seen: string[] = [];
      let page = await store.filterAuditEvents({ guildId: G, limit: 7 });
      const firstPage = page.map((e) => e.reason);
      const pages: AuditEvent[][] = [];
      while (page.length > 0) {
        pages.push(page);
        seen.push(...page.map((e) => e.reason));
        const last = page.at(-1);
        if (!last) break;
        page = await store.filterAuditEvents({ guildId: G, limit: 7, before: last });
      }
      expect(seen).toEqual(newestFirst(events));
      // Back from the third page: the second page, in the same order.
      const third = pages[2]?.[0];
      if (!third) throw new Error('no third page');
      expect(
        (await store.filterAuditEvents({ guildId: G, limit: 7, after: third })).map((e) => e.reason),
      ).toEqual(pages[1]?.map((e) => e.reason));
      const second = pages[1]?.[0];
      if (!second) throw new Error('no second page');
      expect(
        (await store.filterAuditEvents({ guildId: G, limit: 7, after: second })).map((e) => e.reason),
      ).toEqual(firstPage);
    });

    it('filters by member (hostile text included), role, kind and time; oldest first for the download', async () => {
      const match = (f: (e: AuditEvent) => boolean) => newestFirst(events.filter(f));
      const by = async (q: Omit<Parameters<GatingStore['filterAuditEvents']>[0], 'guildId'>) =>
        (await store.filterAuditEvents({ guildId: G, limit: 500, ...q })).map((e) => e.reason);
      expect(await by({ userId: HOSTILE })).toEqual(match((e) => e.userId === HOSTILE));
      expect(await by({ roleId: 'r2' })).toEqual(match((e) => e.roleId === 'r2'));
      expect(await by({ kind: 'role_removed' })).toEqual(match((e) => e.kind === 'role_removed'));
      expect(await by({ from: at(DAY0 + 1), to: at(DAY0 + 2) })).toEqual(
        match((e) => e.createdAt >= at(DAY0 + 1) && e.createdAt < at(DAY0 + 2)),
      );
      expect(await by({ userId: 'u-even', kind: 'role_added', roleId: 'r1' })).toEqual(
        match((e) => e.userId === 'u-even' && e.kind === 'role_added' && e.roleId === 'r1'),
      );
      expect(await by({ kind: HOSTILE })).toEqual([]);
      const oldest = await store.filterAuditEvents({ guildId: G, oldestFirst: true, limit: 4 });
      const next = await store.filterAuditEvents({
        guildId: G,
        oldestFirst: true,
        limit: 4,
        after: oldest.at(-1),
      });
      expect([...oldest, ...next].map((e) => e.reason)).toEqual(newestFirst(events).reverse().slice(0, 8));
      expect((await store.filterAuditEvents({ guildId: G })).length).toBe(30);
      expect((await store.filterAuditEvents({ guildId: G, limit: 10_000 })).length).toBe(30);
    });
  });

  it('sums every process’s upstream minutes, and forgets old ones', async () => {
    await store.addUpstreamMinute(100, { requests: 10, errors: 1, seconds: 2.5, slow: 1 });
    await store.addUpstreamMinute(100, { requests: 5, errors: 0, seconds: 0.5, slow: 0 });
    await store.addUpstreamMinute(160, { requests: 1, errors: 1, seconds: 10, slow: 1 });
    expect(await store.upstreamSince(100)).toEqual({ requests: 16, errors: 2, seconds: 13, slow: 2 });
    expect(await store.upstreamSince(101)).toEqual({ requests: 1, errors: 1, seconds: 10, slow: 1 });
    expect(await store.upstreamSince(1_000)).toEqual({ requests: 0, errors: 0, seconds: 0, slow: 0 });
    expect(await store.deleteUpstreamMinutes(150)).toBe(1);
    expect(await store.upstreamSince(0)).toEqual({ requests: 1, errors: 1, seconds: 10, slow: 1 });
  });

  describe('the request queue', () => {
    // Two guilds on different shards of two: (id >> 22) % 2.
    const EVEN = ((2n * 1000n) << 22n).toString();
    const ODD = ((2n * 1000n + 1n) << 22n).toString();

    it('hands each request to the shard that owns its guild, selected in SQL', async () => {
      expect(shardKeyOf(EVEN) % 2).toBe(0);
      expect(shardKeyOf(ODD) % 2).toBe(1);
      expect(shardKeyOf('not a snowflake')).toBe(0);
      // Many of one shard's requests queued first never hide the other shard's.
      for (let i = 0; i < 5; i++) {
        await store.enqueueDashboardRequest({ id: `even-${i}`, guildId: EVEN, request: { i } });
        time.t += 1;
      }
      await store.enqueueDashboardRequest({ id: 'odd', guildId: ODD, request: { op: HOSTILE } });
      const odd = await store.claimDashboardRequests({ ids: [1], count: 2 }, 2, 0);
      expect(odd.map((c) => [c.id, c.guildId, c.request, c.attempts])).toEqual([
        ['odd', ODD, { op: HOSTILE }, 1],
      ]);
      const even = await store.claimDashboardRequests({ ids: [0], count: 2 }, 10, 0);
      expect(even.map((c) => c.id)).toEqual(['even-0', 'even-1', 'even-2', 'even-3', 'even-4']);
      expect(await store.claimDashboardRequests(null, 10, 0)).toEqual([]);
    });

    it('answers once under a lease: a lapsed claim is taken over, its old holder can no longer answer', async () => {
      await store.enqueueDashboardRequest({ id: 'r1', guildId: EVEN, request: { op: 'status' } });
      expect(await store.dashboardRequestResult('r1')).toBeNull();
      expect(await store.dashboardRequestResult('unknown')).toBeUndefined();
      const [first] = await store.claimDashboardRequests(null, 1, 0);
      if (!first) throw new Error('no claim');
      expect(await store.claimDashboardRequests(null, 1, 0)).toEqual([]);
      time.t += 600;
      expect(await store.renewDashboardRequest('r1', first.claimToken)).toBe(true);
      time.t += 600;
      // Renewed: still held.
      expect(await store.claimDashboardRequests(null, 1, 0)).toEqual([]);
      time.t += 1_000;
      const [second] = await store.claimDashboardRequests(null, 1, 0);
      expect(second?.attempts).toBe(2);
      expect(await store.renewDashboardRequest('r1', first.claimToken)).toBe(false);
      expect(await store.finishDashboardRequest('r1', first.claimToken, { late: true })).toBe(false);
      expect(await store.finishDashboardRequest('r1', second?.claimToken ?? '', { ok: HOSTILE })).toBe(true);
      expect(await store.dashboardRequestResult('r1')).toEqual({ ok: HOSTILE });
      expect(await store.claimDashboardRequests(null, 1, 0)).toEqual([]);
    });

    it('never claims a request older than the caller accepts, and deletes old ones', async () => {
      await store.enqueueDashboardRequest({ id: 'old', guildId: EVEN, request: {} });
      time.t += 10_000;
      await store.enqueueDashboardRequest({ id: 'new', guildId: EVEN, request: {} });
      expect((await store.claimDashboardRequests(null, 5, time.t - 5_000)).map((c) => c.id)).toEqual(['new']);
      await expect(
        store.enqueueDashboardRequest({ id: 'new', guildId: EVEN, request: {} }),
      ).rejects.toThrow();
      expect(await store.deleteDashboardRequests(time.t - 5_000)).toBe(1);
      expect(await store.dashboardRequestResult('old')).toBeUndefined();
    });
  });

  it('keeps the server’s name, icon, channels and managed roles in its snapshot, and lists the ones it has', async () => {
    await store.saveGuildAuthority({
      guildId: G,
      ownerId: 'owner',
      name: HOSTILE,
      icon: 'a_abc',
      channels: [{ id: 'c1', name: 'general' }],
      roles: [
        { id: G, name: '@everyone', position: 0, permissions: 0n },
        { id: 'bot', name: 'Bot', position: 5, permissions: 8n, managed: true },
      ],
    });
    await store.saveGuildAuthority({ guildId: OTHER, ownerId: 'o', roles: [] });
    expect(await store.getGuildAuthority(G)).toMatchObject({
      name: HOSTILE,
      icon: 'a_abc',
      channels: [{ id: 'c1', name: 'general' }],
      roles: [
        { id: G, name: '@everyone', position: 0, permissions: 0n },
        { id: 'bot', name: 'Bot', position: 5, permissions: 8n, managed: true },
      ],
    });
    expect(await store.getGuildAuthority(OTHER)).toMatchObject({ name: null, icon: null, channels: [] });
    const listed = await store.listGuildAuthorities([G, 'not-there', OTHER, G]);
    expect(listed.sort((a, b) => a.guildId.localeCompare(b.guildId))).toEqual([
      { guildId: G, name: HOSTILE, icon: 'a_abc' },
      { guildId: OTHER, name: null, icon: null },
    ]);
    expect(await store.listGuildAuthorities([])).toEqual([]);
    expect(await store.listGuildAuthorityIds()).toEqual([G, OTHER]);
    await store.saveVerifyPanel(G, 'c2', 'm2');
    await store.saveVerifyPanel(G, 'c1', 'm1');
    await store.saveVerifyPanel(OTHER, 'c3', 'm3');
    expect(await store.listVerifyPanels(G)).toEqual([
      { channelId: 'c1', messageId: 'm1' },
      { channelId: 'c2', messageId: 'm2' },
    ]);
  });
});

const SCHEMA = `dashboard_migration_${process.pid}_${Date.now().toString(36)}`;
const admin = new pg.Pool({ connectionString: POSTGRES_URL, max: 1 });
afterAll(async () => {
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  await admin.end();
});

const drivers: [string, () => Promise<SqlDriver>][] = [
  ['sqlite', async () => createSqliteDriver(new DatabaseSync(':memory:'))],
  [
    'postgres',
    async () => {
      await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE; CREATE SCHEMA ${SCHEMA}`);
      return createPostgresDriver(
        new pg.Pool({ connectionString: POSTGRES_URL, max: 2, options: `-c search_path=${SCHEMA}` }),
      );
    },
  ],
];

describe.each(drivers)('migration 17 (%s)', (_name, makeDriver) => {
  it('counts the events already stored into the daily counts', async () => {
    const driver = await makeDriver();
    try {
      await runMigrations(
        driver,
        1,
        MIGRATIONS.filter((m) => m.version < 17),
      );
      await driver.query(
        `INSERT INTO guild_settings (guild_id, enabled, human_role_id, spam_role_id, updated_at)
         VALUES ($1, TRUE, 'human', 'spam', 1)`,
        [G],
      );
      const insert = (kind: string, roleId: string | null, day: number) =>
        driver.query(
          `INSERT INTO audit_events (guild_id, kind, role_id, reason, created_at) VALUES ($1, $2, $3, 'r', $4)`,
          [G, kind, roleId, at(day, 5)],
        );
      await insert('role_added', 'human', DAY0);
      await insert('role_added', 'human', DAY0);
      await insert('role_added', 'spam', DAY0);
      await insert('linked', null, DAY0 + 1);
      expect(
        await runMigrations(
          driver,
          2,
          MIGRATIONS.filter((m) => m.version <= 17),
        ),
      ).toEqual([17]);
      const counts = await driver.query('SELECT metric, day, count FROM audit_daily ORDER BY metric, day');
      expect(counts.map((r) => [r.metric, Number(r.day), Number(r.count)])).toEqual([
        ['flag_added', DAY0, 1],
        ['linked', DAY0 + 1, 1],
        ['role_added', DAY0, 2],
      ]);
    } finally {
      await driver.close();
    }
  });
});
