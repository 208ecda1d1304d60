/**
 * Re-checks cost per identity (issue #37): ten servers sharing a member's identity, re-checked in one
 * cycle, cost one upstream credential request for it, counted at the stand-in Web3.bio, with the cache
 * keeping nothing (CACHE_TTL_CREDENTIAL_SECONDS=0: without the cycle, each server's pass would ask). The
 * honest controls: a credential change between cycles is seen in the next cycle in all ten servers, and
 * a moderator's re-check of the member still reads fresh within the cycle.
 */

import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import pg from 'pg';
import { afterEach, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { freePort } from '../../fakes/namedPort.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { SQLITE_FILE_NAME } from '../../src/store/index.ts';
import {
  addIdentity,
  closeGating,
  type GatingHarness,
  setup,
  startGating,
  startSecondBot,
  waitFor,
} from './gatingHarness.ts';
import { ALICE } from './harness.ts';
import { addServer, runIn, type Server, serverA, verifyIn } from './serverShortcuts.ts';

afterEach(closeGating);

/** GATING_RECHECK_HOURS=0.01: one cycle every 36 s, the scheduler looking every 1.5 s. */
const INTERVAL_MS = 36_000;
const IDENTITY = 'alice.eth';

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const prefix = labels ? `${name}{${labels}} ` : `${name} `;
  const line = text.split('\n').find((l) => l.startsWith(prefix));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

const credentialRequests = (g: GatingHarness, since = 0) =>
  g.h.upstream.requests.filter((r) => r.path === `/credential/${IDENTITY}` && r.at >= since).length;

/** No server is due for its periodic pass (its last one "in an hour"): the scheduler leaves them be. */
async function holdPasses(g: GatingHarness, servers: readonly Server[]): Promise<void> {
  for (const s of servers) await g.gating.store.markFullSync(s.id, Date.now() + 3_600_000);
}

/**
 * Every server due at once: the scheduler's next look re-checks all ten, one after another, in one cycle
 * (with `idle`, once the role changes they queued are made).
 */
async function passAll(g: GatingHarness, servers: readonly Server[], idle = true): Promise<void> {
  const marked = Date.now();
  for (const s of servers) await g.gating.store.markFullSync(s.id, 0);
  const passed = async () => {
    const settings = await Promise.all(servers.map((s) => g.gating.store.getGuildSettings(s.id)));
    return settings.every((x) => (x?.lastFullSyncAt ?? 0) >= marked);
  };
  const deadline = Date.now() + 30_000;
  while (!(await passed())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the ten periodic passes');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await holdPasses(g, servers);
  if (idle) for (const s of servers) await g.gating.service.idle(s.id);
}

/** Alice proven by her ENS name in the harness's server and nine more, none due for a periodic pass. */
async function tenServers(g: GatingHarness): Promise<Server[]> {
  await setup(g);
  addIdentity(g, IDENTITY, { discordHandle: 'alice' });
  const servers = [serverA(g)];
  for (let i = 1; i < 10; i += 1) servers.push(await addServer(g, `Server ${i}`));
  for (const server of servers) await verifyIn(g, server, ALICE, IDENTITY);
  await holdPasses(g, servers);
  return servers;
}

/**
 * Moves the start of the cycle under way (the store's newest) so that it ends `endsInMs` from now, as if
 * the test had begun that far before the end of a cycle: instead of waiting up to 36 s for the next one
 * (or a cycle ending in the middle of ten passes), the test names where in its cycle it is. Every process
 * still reads the cycle from the store, and the store begins the next one at its end.
 */
async function cycleEndsIn(g: GatingHarness, endsInMs: number): Promise<void> {
  await g.gating.store.recheckCycle(Date.now(), INTERVAL_MS);
  const startedAt = Date.now() + endsInMs - INTERVAL_MS;
  const update =
    'UPDATE recheck_cycles SET started_at = $1 WHERE started_at = (SELECT MAX(started_at) FROM recheck_cycles)';
  const url = g.h.config.DATABASE_URL;
  if (url) {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(update, [startedAt]).finally(() => client.end());
    return;
  }
  const sqlite = new DatabaseSync(join(g.h.config.DATA_DIR, SQLITE_FILE_NAME));
  try {
    sqlite.exec('PRAGMA busy_timeout = 5000');
    sqlite.prepare(update.replace('$1', '?')).run(startedAt);
  } finally {
    sqlite.close();
  }
}

/** Waits for the re-check cycle after the one under way (as every process names it) to begin. */
/** The cycle that began at `startedAt`, as the store counts it: one upstream read, reused by the nine others. */
async function expectOneReadForTen(g: GatingHarness, startedAt: number): Promise<void> {
  expect((await g.gating.store.recheckCycle(Date.now(), INTERVAL_MS)).current).toMatchObject({
    startedAt,
    upstreamRequests: 1,
    reusedChecks: 9,
    passes: 10,
  });
}

async function nextCycle(g: GatingHarness): Promise<number> {
  const { current } = await g.gating.store.recheckCycle(Date.now(), INTERVAL_MS);
  const ends = current.startedAt + INTERVAL_MS;
  // A timer may fire a millisecond early: a little past the end, the next cycle has begun.
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, ends - Date.now()) + 50));
  const next = await g.gating.store.recheckCycle(Date.now(), INTERVAL_MS);
  expect(next.current.startedAt).toBe(ends);
  return ends;
}

it('ten servers sharing a member’s identity: one upstream credential request for it per cycle; a change between cycles is seen in all ten, and a moderator’s re-check still reads fresh', async () => {
  const metricsPort = await freePort();
  const g = await startGating({
    env: {
      GATING_RECHECK_HOURS: '0.01',
      CACHE_TTL_CREDENTIAL_SECONDS: '0',
      METRICS_PORT: String(metricsPort),
      METRICS_HOST: '127.0.0.1',
    },
  });
  const servers = await tenServers(g);
  const holdsHuman = () =>
    servers.filter((s) =>
      g.h.discord.state.guilds.get(s.id)?.members.get(ALICE)?.roles.includes(s.humanRoleId),
    );
  expect(holdsHuman()).toHaveLength(10);

  // A first cycle, begun after the proofs' own reads: the ten passes read the identity once between them.
  await cycleEndsIn(g, INTERVAL_MS);
  const before = credentialRequests(g);
  await passAll(g, servers);
  expect(credentialRequests(g) - before).toBe(1);
  const { current: first } = await g.gating.store.recheckCycle(Date.now(), INTERVAL_MS);
  expect(first).toMatchObject({ upstreamRequests: 1, reusedChecks: 9, passes: 10 });

  // Between cycles, Alice's human credential goes; cycle 2 reads it once and all ten servers see it.
  g.h.upstream.world.setCredentials(IDENTITY, gatingCredentials(IDENTITY, { human: false }));
  await cycleEndsIn(g, 300);
  const second = await nextCycle(g);
  await passAll(g, servers);
  expect(credentialRequests(g, second)).toBe(1);
  await expectOneReadForTen(g, second);
  for (const s of servers) {
    const [link] = await g.gating.store.getIdentityLinks(s.id, IDENTITY);
    expect(link?.lastCheckAt).toBeGreaterThanOrEqual(second);
    expect(link?.lastResult?.isHuman).toEqual([]);
  }

  // /metrics: the cycle under way cost one request, nine reads answered by another server's check.
  const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
  expect(sample(metrics, 'gating_recheck_cycle_upstream_requests', 'cycle="current"')).toBe(1);
  expect(sample(metrics, 'gating_recheck_cycle_reused_checks', 'cycle="current"')).toBe(9);
  expect(sample(metrics, 'gating_recheck_cycle_keeping_up', '')).toBe(1);

  // The loss waits for its confirmation (GATING_CONFIRM_MINUTES) in every server. A moderator's re-check
  // of the member reads fresh, in the same cycle, and its answer takes the role at once.
  expect(holdsHuman()).toHaveLength(10);
  const checked = Date.now();
  await runIn(g, servers[3] as Server, (servers[3] as Server).ownerId, 'gating', [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'recheck',
      options: [{ type: ApplicationCommandOptionType.User, name: 'member', value: ALICE }],
    } as never,
  ]);
  expect(credentialRequests(g, checked)).toBe(1);
  await waitFor(
    () => !holdsHuman().includes(servers[3] as Server),
    'the fresh answer to take the role in server 3',
  );
  expect(holdsHuman()).toHaveLength(9);
}, 150_000);

it('across two bot processes on one PostgreSQL: the second process’s passes take the first one’s read of the cycle', async () => {
  const database = await createDatabase('recheck_cycles');
  const env = { GATING_RECHECK_HOURS: '0.01', CACHE_TTL_CREDENTIAL_SECONDS: '0', DATABASE_URL: database.url };
  let second: Awaited<ReturnType<typeof startSecondBot>> | undefined;
  try {
    const g = await startGating({ env });
    const servers = await tenServers(g);
    second = await startSecondBot(g, { ...env, GATING_ENABLED: 'true' });
    // The proofs' own reads fell in the cycle under way: the passes below run in the next one.
    await cycleEndsIn(g, 300);
    const cycle = await nextCycle(g);
    // This process passes server A as its scheduler would, reading Alice's credentials, then stops.
    const first = servers[0] as Server;
    await g.gating.service.guilds.recheckGuild(first.id, {
      fresh: false,
      cause: 'periodic',
      cycleStartedAt: cycle,
    });
    expect(credentialRequests(g, cycle)).toBe(1);
    await g.gating.service.idle(first.id);
    await g.gating.service.stop();
    // The other process's scheduler re-checks the nine others: from the store, not from Web3.bio.
    await passAll(g, servers.slice(1), false);
    expect(credentialRequests(g, cycle)).toBe(1);
    await expectOneReadForTen(g, cycle);
  } finally {
    await second?.stop();
    await closeGating();
    await database.drop();
  }
}, 150_000);
