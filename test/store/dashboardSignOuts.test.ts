/**
 * Dashboard sign-outs in the store, on SQLite and PostgreSQL: a session recorded as signed out stays so
 * until it would have ended, other sessions are untouched, a second record is harmless, and past rows
 * are pruned by the next record.
 */
import { describe, expect, it } from 'vitest';
import type { GatingStore } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS } from './harness.ts';

const T0 = 1_700_000_000_000;
const HOUR = 3_600_000;

describe.each(STORE_BACKENDS)('dashboard sign-outs (%s)', (_name, makeHarness) => {
  let store: GatingStore;
  freshDatabaseEachTest(makeHarness, async (h) => {
    store = await h.open({ now: () => T0 });
  });

  it('a signed-out session stays signed out until it would have ended; another session is untouched', async () => {
    expect(await store.isDashboardSignedOut('a'.repeat(64), T0)).toBe(false);
    await store.recordDashboardSignOut('a'.repeat(64), T0 + 12 * HOUR, T0);
    expect(await store.isDashboardSignedOut('a'.repeat(64), T0)).toBe(true);
    expect(await store.isDashboardSignedOut('a'.repeat(64), T0 + 12 * HOUR - 1)).toBe(true);
    expect(await store.isDashboardSignedOut('b'.repeat(64), T0)).toBe(false);
    // Past its end the cookie is refused by its own seal; the row no longer matters.
    expect(await store.isDashboardSignedOut('a'.repeat(64), T0 + 12 * HOUR)).toBe(false);
  });

  it('a second sign-out of the same session is harmless; rows past their end are pruned by the next', async () => {
    await store.recordDashboardSignOut("x'); DROP TABLE dashboard_sign_outs; --", T0 + HOUR, T0);
    await store.recordDashboardSignOut("x'); DROP TABLE dashboard_sign_outs; --", T0 + HOUR, T0 + 1);
    expect(await store.isDashboardSignedOut("x'); DROP TABLE dashboard_sign_outs; --", T0 + 2)).toBe(true);
    await store.recordDashboardSignOut('c'.repeat(64), T0 + 3 * HOUR, T0 + 2 * HOUR);
    // Asked as of before its end, a pruned row no longer answers; the new one does.
    expect(await store.isDashboardSignedOut("x'); DROP TABLE dashboard_sign_outs; --", T0 + 2)).toBe(false);
    expect(await store.isDashboardSignedOut('c'.repeat(64), T0 + 2)).toBe(true);
  });
});
