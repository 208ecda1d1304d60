/**
 * Re-check cycles in the store (issue #37), on SQLite and PostgreSQL: every process names the same cycle
 * (whole intervals from the first), counts add up across processes, and an identity's newest successful
 * check since a time is found over every server's links, a "not found" told apart from an answer.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { GatingStore, LinkInput } from '../../src/store/types.ts';
import { postgresHarness, type StoreHarness, sqliteHarness } from './harness.ts';

const HOUR = 3_600_000;
const T0 = 1_700_000_000_000;
const HUMAN = { isHuman: [{ id: 'h', platform: 'dentity' }], isRisky: [], isSpam: [] } as never;
const NONE = { isHuman: [], isRisky: [], isSpam: [] };

const harnesses: [string, () => StoreHarness][] = [
  ['sqlite', sqliteHarness],
  ['postgres', postgresHarness],
];

function link(guildId: string, identity: string): LinkInput {
  return {
    guildId,
    userId: 'u1',
    identity,
    platform: 'ens',
    address: null,
    proofMethod: 'record',
    provenAt: 1,
  };
}

describe.each(harnesses)('re-check cycles (%s)', (_name, makeHarness) => {
  let h: StoreHarness;
  let store: GatingStore;

  beforeAll(() => {
    h = makeHarness();
  });
  afterAll(() => h.cleanup());
  beforeEach(async () => {
    await h.fresh();
    store = await h.open();
  });

  it('the first cycle starts on a whole interval; later ones whole intervals on, the same for every process', async () => {
    const other = await h.open();
    const first = await store.recheckCycle(T0 + 5 * 60_000, 6 * HOUR);
    expect(first.current.startedAt % (6 * HOUR)).toBe(0);
    expect(first.previous).toBeNull();
    const start = first.current.startedAt;
    expect((await other.recheckCycle(start + 6 * HOUR - 1, 6 * HOUR)).current.startedAt).toBe(start);
    // Two processes at once after two idle intervals: one new cycle, on the grid.
    const [a, b] = await Promise.all([
      store.recheckCycle(start + 13 * HOUR, 6 * HOUR),
      other.recheckCycle(start + 13 * HOUR + 5, 6 * HOUR),
    ]);
    expect(a.current.startedAt).toBe(start + 12 * HOUR);
    expect(b.current.startedAt).toBe(start + 12 * HOUR);
    expect(a.previous?.startedAt).toBe(start);
  });

  it('adds every process’s pass counts to the cycle', async () => {
    const { current } = await store.recheckCycle(T0, HOUR);
    const other = await h.open();
    await store.countRecheckCycle(current.startedAt, {
      upstreamRequests: 1,
      reusedChecks: 0,
      passes: 1,
      passMs: 20,
    });
    await other.countRecheckCycle(current.startedAt, {
      upstreamRequests: 0,
      reusedChecks: 9,
      passes: 9,
      passMs: 70,
    });
    expect((await store.recheckCycle(T0, HOUR)).current).toEqual({
      startedAt: current.startedAt,
      upstreamRequests: 1,
      reusedChecks: 9,
      passes: 10,
      passMs: 90,
    });
  });

  it('finds an identity’s newest successful check since a time over every server, a "not found" marked', async () => {
    for (const g of ['g1', 'g2', 'g3']) {
      await store.saveLink(link(g, 'alice.eth'), 'verified');
      await store.saveLink(link(g, 'bob.eth'), 'verified');
    }
    const key = (guildId: string, identity: string) => ({ guildId, userId: 'u1', identity });
    await store.recordLinkCheck(key('g1', 'alice.eth'), { at: T0, ok: true, result: HUMAN });
    await store.recordLinkCheck(key('g2', 'alice.eth'), { at: T0 + 10, ok: true, result: NONE });
    // A failed check is no answer to reuse.
    await store.recordLinkCheck(key('g3', 'alice.eth'), { at: T0 + 20, ok: false });
    await store.recordLinkCheck(key('g1', 'bob.eth'), { at: T0 + 5, ok: true, result: NONE, notFound: true });
    await store.recordLinkCheck(key('g2', 'bob.eth'), { at: T0 - 1, ok: true, result: HUMAN });
    const checks = await store.identityChecksSince(['alice.eth', 'bob.eth', 'carol.eth'], T0);
    expect(checks.get('alice.eth')).toEqual({ at: T0 + 10, result: NONE, notFound: false });
    expect(checks.get('bob.eth')).toEqual({ at: T0 + 5, result: NONE, notFound: true });
    expect(checks.has('carol.eth')).toBe(false);
    expect((await store.identityChecksSince(['alice.eth'], T0 + 11)).size).toBe(0);
    expect((await store.identityChecksSince([], T0)).size).toBe(0);
  });
});
