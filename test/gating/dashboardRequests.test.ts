/**
 * Dashboard requests crossing processes through the store (PostgreSQL, as several processes share it):
 * the page's side waits a bounded time; each gateway process's inbox claims only its shards' requests,
 * runs each once under a renewed lease (two inboxes never run one twice), and answers; a run that throws,
 * or a row that does not read as a request, answers `failed`; an old request is never run.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DashboardRequestInbox,
  localFirstOperations,
  queuedOperations,
  REQUEST_MAX_AGE_MS,
} from '../../src/gating/dashboard/requests.ts';
import type { DashboardRequest, DashboardResult } from '../../src/gating/dashboard/types.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { postgresHarness, type StoreHarness } from '../store/harness.ts';
import { silentLogger } from './serviceHarness.ts';

const EVEN = ((2n * 1000n) << 22n).toString();
const ODD = ((2n * 1000n + 1n) << 22n).toString();
const status = (guildId: string): DashboardRequest => ({ op: 'status', guildId });

let h: StoreHarness;
let store: GatingStore;
const inboxes: DashboardRequestInbox[] = [];

beforeAll(() => {
  h = postgresHarness();
});
afterAll(async () => {
  await h.cleanup();
});
beforeEach(async () => {
  await h.fresh();
  store = await h.open({ leaseMs: 300 });
});
afterEach(async () => {
  await Promise.all(inboxes.splice(0).map((i) => i.stop()));
});

function inbox(
  run: (request: DashboardRequest) => Promise<DashboardResult>,
  shards: { ids: number[]; count: number } | null = null,
  s: GatingStore = store,
): DashboardRequestInbox {
  const started = new DashboardRequestInbox({
    store: s,
    logger: silentLogger,
    shards: () => shards,
    run,
    leaseMs: 300,
    pollMs: 20,
  });
  started.start();
  inboxes.push(started);
  return started;
}

describe('dashboard requests through the store', () => {
  it('a page waits for the owning process’s answer; each shard’s inbox takes only its guilds', async () => {
    const ran: string[] = [];
    const answer = (who: string) => async (request: DashboardRequest) => {
      ran.push(`${who}:${request.guildId}`);
      return { kind: 'unavailable' } as const;
    };
    inbox(answer('shard0'), { ids: [0], count: 2 });
    inbox(answer('shard1'), { ids: [1], count: 2 });
    const page = queuedOperations({ store, waitMs: 5_000 });
    expect(await page.run(status(EVEN))).toEqual({ kind: 'answered', result: { kind: 'unavailable' } });
    expect(await page.run(status(ODD))).toEqual({ kind: 'answered', result: { kind: 'unavailable' } });
    expect(ran).toEqual([`shard0:${EVEN}`, `shard1:${ODD}`]);
  });

  it('says it timed out when nobody answers within the wait, and an old request is never run later', async () => {
    const page = queuedOperations({ store, waitMs: 150 });
    const started = Date.now();
    expect(await page.run(status(EVEN))).toEqual({ kind: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2_000);
    const ran: string[] = [];
    const late = new DashboardRequestInbox({
      store,
      logger: silentLogger,
      shards: () => null,
      run: async (r) => {
        ran.push(r.op);
        return { kind: 'unavailable' };
      },
      leaseMs: 300,
      pollMs: 20,
      // The inbox's clock is past the request's age limit.
      now: () => Date.now() + REQUEST_MAX_AGE_MS + 1_000,
    });
    late.start();
    inboxes.push(late);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(ran).toEqual([]);
  });

  it('runs a request once although it outlives its lease, with two inboxes looking', async () => {
    let runs = 0;
    const slow = async () => {
      runs += 1;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      return { kind: 'unavailable' } as const;
    };
    const other = await h.open({ leaseMs: 300 });
    inbox(slow);
    inbox(slow, null, other);
    const page = queuedOperations({ store, waitMs: 5_000 });
    expect(await page.run(status(EVEN))).toEqual({ kind: 'answered', result: { kind: 'unavailable' } });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(runs).toBe(1);
  });

  it('answers failed when the run throws or the row is not a request', async () => {
    inbox(async () => {
      throw new Error('boom');
    });
    const page = queuedOperations({ store, waitMs: 5_000 });
    expect(await page.run(status(EVEN))).toEqual({ kind: 'answered', result: { kind: 'failed' } });
    // A row naming another guild than its own column reads as no request.
    await store.enqueueDashboardRequest({
      id: 'forged',
      guildId: EVEN,
      request: { op: 'status', guildId: ODD },
    });
    const deadline = Date.now() + 5_000;
    let result = await store.dashboardRequestResult('forged');
    while (result === null && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      result = await store.dashboardRequestResult('forged');
    }
    expect(result).toEqual({ kind: 'failed' });
  });

  it('runs here when this process owns the guild, else queues it', async () => {
    const queued: string[] = [];
    const ops = localFirstOperations({
      owns: (guildId) => guildId === EVEN,
      run: async () => ({ kind: 'no_rights' }),
      queue: {
        run: async (request) => {
          queued.push(request.guildId);
          return { kind: 'timeout' };
        },
      },
      logger: silentLogger,
    });
    expect(await ops.run(status(EVEN))).toEqual({ kind: 'answered', result: { kind: 'no_rights' } });
    expect(await ops.run(status(ODD))).toEqual({ kind: 'timeout' });
    expect(queued).toEqual([ODD]);
  });
});
