/**
 * The pick-up of sharing turned on in another process (issue #36), on a real SQLite store: what a look
 * reads, what it brings once only, what it tries again, and how far back the first look reaches.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { SharingPickUp, START_LOOKBACK_MS } from '../../src/gating/proofs/sharingPickUp.ts';
import { BackgroundTasks } from '../../src/gating/rechecks/backgroundTasks.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { sqliteHarness } from '../store/harness.ts';
import { silentLogger } from './serviceHarness.ts';

const T0 = 1_700_000_000_000;
const h = sqliteHarness();
let store: GatingStore;
let clock: number;
/** Each bring asked for, by account, in order. */
let brought: string[];
/** Accounts whose servers fail (Discord or the store down). */
let failing: Set<string>;

beforeEach(async () => {
  await h.fresh();
  store = await h.open();
  clock = T0;
  brought = [];
  failing = new Set();
});
afterAll(() => h.cleanup());

function pickUp(): SharingPickUp {
  return new SharingPickUp({
    store,
    logger: silentLogger,
    tasks: new BackgroundTasks(silentLogger),
    now: () => clock,
    bringToServed: async (userId) => {
      brought.push(userId);
      return { servers: failing.has(userId) ? 0 : 1, failed: failing.has(userId) };
    },
  });
}

describe('picking up sharing turned on elsewhere', () => {
  it('the first look reaches back START_LOOKBACK_MS; each member is brought once; sharing turned on again is brought again', async () => {
    await store.setProofSharing('old', true, T0 - START_LOOKBACK_MS - 1);
    await store.setProofSharing('alice', true, T0 - 5_000);
    const p = pickUp();
    expect(await p.run()).toBe(1);
    expect(brought).toEqual(['alice']);

    // Nothing new: alice is not brought again, though her row is still in the window a look reads.
    clock += 30_000;
    expect(await p.run()).toBe(0);
    expect(brought).toEqual(['alice']);

    // Another process, its clock 40 s behind, turned sharing on for bob "before" this process's last look.
    await store.setProofSharing('bob', true, clock - 40_000);
    clock += 30_000;
    expect(await p.run()).toBe(1);
    expect(brought).toEqual(['alice', 'bob']);

    // Alice turns sharing off and on again: a new moment, brought again.
    await store.setProofSharing('alice', false, clock);
    await store.setProofSharing('alice', true, clock + 1);
    clock += 30_000;
    await p.run();
    expect(brought).toEqual(['alice', 'bob', 'alice']);
  });

  it('a member whose servers failed is tried again on the next looks, five times at most; turned off, no more', async () => {
    await store.setProofSharing('carol', true, T0 - 1_000);
    await store.setProofSharing('dave', true, T0 - 1_000);
    failing = new Set(['carol', 'dave']);
    const p = pickUp();
    for (let look = 0; look < 7; look++) {
      if (look === 2) await store.setProofSharing('dave', false, clock);
      await p.run();
      // Far past the window a look reads again: only a failure kept holds the next look back.
      clock += 10 * 60_000;
    }
    expect(brought.filter((u) => u === 'carol')).toHaveLength(5);
    expect(brought.filter((u) => u === 'dave')).toHaveLength(2);
  });

  it('the failure mended, the member is brought on the next look and not again', async () => {
    await store.setProofSharing('carol', true, T0 - 1_000);
    failing = new Set(['carol']);
    const p = pickUp();
    expect(await p.run()).toBe(0);
    failing.clear();
    clock += 10 * 60_000;
    expect(await p.run()).toBe(1);
    clock += 10 * 60_000;
    expect(await p.run()).toBe(0);
    expect(brought).toEqual(['carol', 'carol']);
  });

  it('more than a page of members in one look: every one brought, once', async () => {
    const users = Array.from({ length: 250 }, (_, i) => `user-${String(i).padStart(3, '0')}`);
    // Many on one moment: pages go on between accounts of the same moment.
    for (const [i, userId] of users.entries())
      await store.setProofSharing(userId, true, T0 - 1_000 + (i % 3));
    const p = pickUp();
    expect(await p.run()).toBe(250);
    expect(new Set(brought).size).toBe(250);
    expect(brought).toHaveLength(250);
  });
});
