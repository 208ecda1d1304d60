import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { dueAfter, RECHECK_SPREAD } from '../../src/gating/rechecks/guildRechecks.ts';
import { schedulerTickMs } from '../../src/gating/rechecks/scheduler.ts';
import { PassLosses } from '../../src/gating/roles/roleSync.ts';
import type { GatingService } from '../../src/gating/service.ts';
import type { GatingStore, PendingLoss } from '../../src/store/types.ts';
import { humanRoleSettings, signatureLink } from '../e2e/harness.ts';
import {
  addGuild,
  addMember,
  addRole,
  createService,
  type Fakes,
  memberRoles,
  openStore,
  roleEdits,
  startFakes,
  waitFor,
} from './serviceHarness.ts';

describe('spreading the periodic pass', () => {
  it('each guild is due at its own time within the last part of the interval, always the same', () => {
    const day = 24 * 3_600_000;
    const ids = Array.from({ length: 200 }, (_, i) => `12000000000000${String(i).padStart(4, '0')}`);
    const due = ids.map((id) => dueAfter(id, day));
    for (const d of due) {
      expect(d).toBeGreaterThanOrEqual(day * (1 - RECHECK_SPREAD));
      expect(d).toBeLessThanOrEqual(day);
    }
    expect(dueAfter(ids[0] ?? '', day)).toBe(due[0]);
    // Spread, not bunched: the 200 offsets fill most of the window.
    expect(Math.max(...due) - Math.min(...due)).toBeGreaterThan(day * RECHECK_SPREAD * 0.8);
    expect(new Set(due.map((d) => Math.floor(d / 60_000))).size).toBeGreaterThan(100);
  });

  it('the timer looks for due guilds many times per interval, at most every 15 minutes', () => {
    expect(schedulerTickMs(24 * 3_600_000)).toBe(15 * 60_000);
    expect(schedulerTickMs(3_600_000)).toBe(150_000);
    expect(schedulerTickMs(10)).toBe(1_000);
  });
});

describe('removals during a pass', () => {
  const loss = (userId: string, over: Partial<PendingLoss> = {}): PendingLoss => ({
    guildId: 'g',
    userId,
    subject: 'role:human',
    firstSeenAt: 1_000,
    reason: 'no isHuman',
    heldAt: null,
    ...over,
  });

  it('go out during the walk only when even every removal due this pass stays under the breaker', () => {
    const four = ['a', 'b', 'c', 'd'].map((u) => loss(u));
    expect(new PassLosses(four, { dueBy: 2_000, holders: () => 10 }).mayApplyEarly('human')).toBe(true);
    const many = Array.from({ length: 12 }, (_, i) => loss(`u${i}`));
    // 12 of 100 holders is over 10%: they wait for the end of the pass, where the breaker decides.
    expect(new PassLosses(many, { dueBy: 2_000, holders: () => 100 }).mayApplyEarly('human')).toBe(false);
    expect(new PassLosses(many, { dueBy: 2_000, holders: () => 1_000 }).mayApplyEarly('human')).toBe(true);
    // Not due yet, or held by an earlier pass: not counted (they cannot go out early anyway).
    const later = many.map((l) => ({ ...l, firstSeenAt: 5_000 }));
    expect(new PassLosses(later, { dueBy: 2_000, holders: () => 100 }).mayApplyEarly('human')).toBe(true);
    const held = many.map((l) => ({ ...l, heldAt: 1_500 }));
    expect(new PassLosses(held, { dueBy: 2_000, holders: () => 100 }).mayApplyEarly('human')).toBe(true);
  });
});

let fakes: Fakes;
let guild: FakeGuild;
let store: GatingStore;
const services: GatingService[] = [];

beforeAll(async () => {
  fakes = await startFakes();
});
afterAll(async () => {
  await fakes.close();
});
beforeEach(async () => {
  guild = await addGuild(fakes);
  store = await openStore();
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await store.close();
});

describe('one process re-checks a guild at a time', () => {
  it('two processes on one store: the second finds the guild taken and checks no member twice', async () => {
    const human = (await addRole(fakes, guild, 'Verified', 2)).id;
    await store.saveGuildSettings({
      guildId: guild.id,
      enabled: true,
      humanRoleId: human,
      spamRoleId: null,
      riskyRoleId: null,
      minScore: null,
      spamRemovesHuman: true,
      logChannelId: null,
    });
    for (let i = 0; i < 40; i += 1) {
      const userId = await addMember(fakes, guild, `lease${i}`);
      await store.saveLink(
        {
          guildId: guild.id,
          userId,
          identity: `lease${i}x.eth`,
          platform: 'ens',
          address: null,
          proofMethod: 'signature',
          provenAt: Date.now(),
        },
        'seeded',
      );
    }
    const [a, b] = [createService(fakes, store), createService(fakes, store)];
    services.push(a, b);
    const credentialLookups = () =>
      fakes.web3.requests.filter((r) => r.path.startsWith('/credential/')).length;
    const before = credentialLookups();
    const [first, second] = await Promise.all([
      a.guilds.recheckGuild(guild.id, { fresh: true }),
      b.guilds.recheckGuild(guild.id, { fresh: true }),
    ]);
    const walked = [first, second].filter((r) => !r.elsewhere);
    expect(walked).toHaveLength(1);
    expect([first, second].filter((r) => r.elsewhere)).toHaveLength(1);
    expect(credentialLookups() - before).toBe(40);
    // The lease is given back at the end: the next pass may run anywhere.
    expect((await b.guilds.recheckGuild(guild.id, { fresh: true })).elsewhere).toBeUndefined();
  });
});

describe('a pass whose process died is taken over within a lease', () => {
  const LEASE_MS = 600;

  /** A gated guild of `count` linked members with human credentials, its last pass marked done. */
  async function gatedGuild(count: number): Promise<{ human: string; members: string[] }> {
    await store.close();
    store = await openStore({ leaseMs: LEASE_MS });
    const human = (await addRole(fakes, guild, 'Verified', 2)).id;
    await store.saveGuildSettings(humanRoleSettings(guild.id, human));
    const members: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const userId = await addMember(fakes, guild, `dead${i}`);
      const identity = `dead${i}x${guild.id}.eth`;
      fakes.web3.world.setCredentials(identity, gatingCredentials(identity));
      await store.saveLink(signatureLink(guild.id, userId, identity), 'seeded');
      members.push(userId);
    }
    // Not due: only a pass cut short can make the service run one.
    await store.markFullSync(guild.id, Date.now());
    return { human, members };
  }

  const passes = async () =>
    (await store.listAuditEvents({ guildId: guild.id, limit: 100 })).filter((e) => e.kind === 'recheck_pass');

  it('by the live process once the dead one’s lease lapses: every member gets the role, each edit once', async () => {
    const { human, members } = await gatedGuild(12);
    // The process running the pass was killed before it gave any role: its lease stays, unrenewed.
    const lapsesAt = Date.now() + LEASE_MS;
    expect(await store.acquireGuildLease(guild.id, 'host:0:dead/pass', lapsesAt)).toBe(true);
    const live = createService(fakes, store);
    services.push(live);
    live.start();
    await waitFor(() => members.every((m) => memberRoles(fakes, guild, m).includes(human)), 10_000);
    for (const m of members)
      expect(roleEdits(fakes, guild.id, m, human).map((r) => r.method)).toEqual(['PUT']);
    // Not before the lease lapsed: a lease is never taken from a holder that might be alive.
    const firstEdit = Math.min(
      ...members.flatMap((m) => roleEdits(fakes, guild.id, m, human).map((r) => r.at)),
    );
    expect(firstEdit).toBeGreaterThanOrEqual(lapsesAt);
    expect((await passes()).map((e) => e.details)).toMatchObject([
      { cause: 'resumed', complete: true, members: 12 },
    ]);
    // Released at the end: nothing left to resume.
    expect(await store.lapsedGuildLeases(10)).toEqual([]);
  });

  it('is dropped, not run, once gating was switched off in the server', async () => {
    const { human } = await gatedGuild(2);
    await store.saveGuildSettings({ ...humanRoleSettings(guild.id, human), enabled: false });
    expect(await store.acquireGuildLease(guild.id, 'host:0:dead/pass', Date.now() - 1)).toBe(true);
    const live = createService(fakes, store);
    services.push(live);
    live.start();
    await expect.poll(() => store.lapsedGuildLeases(10), { timeout: 3_000 }).toEqual([]);
    expect(await passes()).toEqual([]);
  });

  it('a finished pass leaves no lease behind, though a renewal was still on its way to the store', async () => {
    await gatedGuild(3);
    const service = createService(fakes, store);
    services.push(service);
    // Every renewal (each call after the first) reaches the store 200 ms late.
    const acquire = store.acquireGuildLease.bind(store);
    let calls = 0;
    store.acquireGuildLease = async (...args) => {
      calls += 1;
      if (calls > 1) await new Promise((resolve) => setTimeout(resolve, 200));
      return acquire(...args);
    };
    fakes.web3.setLatency(LEASE_MS / 2);
    try {
      expect(await service.guilds.recheckGuild(guild.id, { fresh: true })).toMatchObject({ members: 3 });
    } finally {
      fakes.web3.setLatency(0);
    }
    expect(calls).toBeGreaterThan(1);
    await new Promise((resolve) => setTimeout(resolve, 200 + LEASE_MS));
    expect(await store.lapsedGuildLeases(10)).toEqual([]);
  });

  it('but never from a live process: its pass, three leases long, runs once though another process looks every second', async () => {
    await gatedGuild(6);
    const [running, looking] = [createService(fakes, store), createService(fakes, store)];
    services.push(running, looking);
    looking.start();
    const lookups = () => fakes.web3.requests.filter((r) => r.path.startsWith('/credential/')).length;
    const before = lookups();
    fakes.web3.setLatency(3 * LEASE_MS);
    try {
      const result = await running.guilds.recheckGuild(guild.id, { fresh: true, cause: 'moderator' });
      expect(result).toMatchObject({ members: 6, changes: 6 });
      // Another look after the pass: its lease was given back, not left to lapse.
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    } finally {
      fakes.web3.setLatency(0);
    }
    expect(lookups() - before).toBe(6);
    expect((await passes()).map((e) => e.details)).toMatchObject([{ cause: 'moderator' }]);
  });
});
