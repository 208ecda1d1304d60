/**
 * The bot's PostgreSQL connections terminated during a burst of `/verify` (a failover, a restart, a
 * pooler's idle timeout do the same), in each process role: one process (PROCESS_ROLE=all), and the
 * INTERACTIONS=http split (a gateway worker and two web replicas). Ended as a failover ends them, every
 * member is linked by their one `/verify` (what a dropped connection failed is tried again where running
 * it again is safe, before the member is told to try again); ended every 30 ms for as long as the burst
 * runs, the process lives and every member is answered. Either way every role a stored proof decides is
 * applied, within the due-check pass when the sync after the proof failed.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeMessage, InteractionResult } from '../../fakes/discord/server.ts';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { startRoundRobin } from '../../fakes/roundRobin.ts';
import { MAX_TRIES, retryWaitMs } from '../../src/store/postgresRetry.ts';
import {
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  hasRole,
  seen,
  setup,
  startGating,
  waitFor,
} from './gatingHarness.ts';
import { isEphemeral, visibleMessage } from './harness.ts';
import { type Replica, startReplica } from './replicaHarness.ts';

const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
const MEMBERS = 10;
/** A failover's faults: every connection ended 5 times, 75 ms apart. */
const FAILOVER = { everyMs: 75, sweeps: 5 };
/** Faults that keep coming: every connection ended every 30 ms until the burst is answered. */
const SUSTAINED = { everyMs: 30, sweeps: Number.POSITIVE_INFINITY };
/** How long the first sweep waits for an operation under way before it ends whatever is connected. */
const FIRST_SWEEP_WAIT_MS = 5_000;
/** The driver's waits over all its tries, each at its shortest (half its step). */
const SHORTEST_RETRY_WINDOW_MS = Array.from({ length: MAX_TRIES - 1 }, (_, i) =>
  retryWaitMs(i + 1, () => 0),
).reduce((a, b) => a + b, 0);

/**
 * Terminates every connection to `database` but its own, `sweeps` times `everyMs` apart (a failover, a
 * restart or a pooler ends them all at once, and may do so again while the bot reconnects). Counts the
 * connections ended and, of those, the ones in the middle of an operation (a statement running, or a
 * transaction open).
 */
function startTerminating(database: string, { everyMs, sweeps }: { everyMs: number; sweeps: number }) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let stopped = false;
  const ended = { all: 0, inFlight: 0 };
  const loop = (async () => {
    await admin.connect();
    // The first sweep comes once an operation is under way (its connection active, or in a transaction),
    // read in the same snapshot as the terminations: on a fast machine a fixed start met only idle ones.
    const started = Date.now();
    for (let sweep = 0; sweep < sweeps && !stopped; sweep += 1) {
      const waiting = sweep === 0 && Date.now() - started < FIRST_SWEEP_WAIT_MS;
      const result = await admin.query(
        `SELECT pg_terminate_backend(pid) AS done, state FROM pg_stat_activity
          WHERE datname = $1 AND pid <> pg_backend_pid()
            AND ($2 = false OR EXISTS (SELECT 1 FROM pg_stat_activity WHERE datname = $1
              AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')))`,
        [database, waiting],
      );
      if (waiting && result.rows.length === 0) {
        sweep -= 1;
        await sleep(1);
        continue;
      }
      for (const row of result.rows as { done: boolean; state: string | null }[]) {
        if (!row.done) continue;
        ended.all += 1;
        if (row.state === 'active' || row.state === 'idle in transaction') ended.inFlight += 1;
      }
      await sleep(everyMs);
    }
    await admin.end();
  })();
  return {
    async stop(): Promise<typeof ended> {
      stopped = true;
      await loop;
      return ended;
    },
  };
}

/** Anything that escaped to the process: an `'error'` event nobody handled would be one. */
let escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);
beforeEach(() => {
  escaped = [];
  process.on('uncaughtException', onEscape);
  process.on('unhandledRejection', onEscape);
});
afterEach(() => {
  process.off('uncaughtException', onEscape);
  process.off('unhandledRejection', onEscape);
});

type Member = { userId: string; identity: string };

/**
 * Ten members (named `<prefix><n>`) run `/verify`, each by their identity's own record, while the
 * database's connections are terminated by `faults`. Returns what each member saw.
 */
async function verifyBurst(
  g: GatingHarness,
  database: string,
  faults: { everyMs: number; sweeps: number },
  prefix: string,
): Promise<{ members: Member[]; answers: FakeMessage[] }> {
  const members: Member[] = [];
  for (let i = 0; i < MEMBERS; i += 1) {
    const username = `${prefix}${i}`;
    const userId = await addMember(g, username);
    const identity = `${username}-${Date.now().toString(36)}.eth`;
    addIdentity(g, identity, { discordHandle: username, human: true });
    members.push({ userId, identity });
  }
  const terminator = startTerminating(database, faults);
  let results: PromiseSettledResult<InteractionResult>[];
  try {
    results = await Promise.allSettled(
      members.map((m, i) =>
        sleep(i * 15).then(() =>
          g.h.run('verify', { identity: m.identity }, { userId: m.userId, timeoutMs: 20_000 }),
        ),
      ),
    );
  } finally {
    // The faults reached the bot's connections, some in the middle of an operation.
    expect((await terminator.stop()).inFlight).toBeGreaterThan(0);
  }
  // Every member was answered: never silence.
  const answers = results.map((r, i) => {
    if (r.status === 'rejected') throw new Error(`member ${i} got no answer: ${String(r.reason)}`);
    return visibleMessage(r.value);
  });
  // The process lives and answers.
  expect(escaped).toEqual([]);
  const later = visibleMessage(
    await g.h.run('whoami', {}, { userId: members[0]?.userId ?? '', timeoutMs: 15_000 }),
  );
  expect(seen(later).length).toBeGreaterThan(0);
  return { members, answers };
}

/** The members holding a proof now. */
async function provenOf(g: GatingHarness, members: readonly Member[]): Promise<string[]> {
  const out: string[] = [];
  for (const m of members) {
    const links = await g.gating.store.getUserLinks(g.guildId, m.userId);
    if (links.some((l) => l.releasedAt === null)) out.push(m.userId);
  }
  return out;
}

/**
 * Every role decided is applied to the proven members (by the sync after the proof, or by the
 * due-check pass when that sync failed), and the due checks are cleared.
 */
async function rolesFollow(g: GatingHarness, proven: readonly string[]): Promise<void> {
  await waitFor(
    () => proven.every((userId) => hasRole(g, userId, g.humanRoleId)),
    `the human role for ${proven.length} proven members`,
    20_000,
  );
  await expect.poll(() => g.gating.store.listDueChecks(Date.now(), 100), { timeout: 10_000 }).toEqual([]);
  expect(escaped).toEqual([]);
}

/**
 * Connections ended the way a failover, a restart or a pooler ends them: all at once, a few times over
 * 300 ms, less than the driver's shortest wait over all its tries (a fault that keeps coming back faster
 * than an operation runs is the next test's). Every member is linked by their one `/verify`.
 */
async function linkedThroughFailover(g: GatingHarness, database: string): Promise<void> {
  expect(FAILOVER.everyMs * (FAILOVER.sweeps - 1)).toBeLessThan(SHORTEST_RETRY_WINDOW_MS);
  const { members, answers } = await verifyBurst(g, database, FAILOVER, 'failover');
  for (const [i, message] of answers.entries()) {
    expect(seen(message), `member ${i}`).toContain('is now linked');
    expect(seen(message)).not.toContain('already match');
  }
  const proven = await provenOf(g, members);
  expect(proven).toHaveLength(MEMBERS);
  await rolesFollow(g, proven);
}

/**
 * Connections ended every 30 ms until the burst is answered: operations whose every try is cut off give
 * up (bounded), the member is told so privately, and runs `/verify` again once the database is back.
 */
async function answeredThroughSustainedFaults(g: GatingHarness, database: string): Promise<void> {
  const { members, answers } = await verifyBurst(g, database, SUSTAINED, 'sustained');
  const linked = answers.filter((m) => seen(m).includes('is now linked'));
  for (const message of answers.filter((m) => !linked.includes(m))) expect(isEphemeral(message)).toBe(true);
  for (const message of linked) expect(seen(message)).not.toContain('already match');
  const provenUnderFaults = await provenOf(g, members);
  expect(provenUnderFaults.length).toBeGreaterThanOrEqual(linked.length);
  // Nobody without a stored proof got the role.
  for (const m of members)
    if (!provenUnderFaults.includes(m.userId)) expect(hasRole(g, m.userId, g.humanRoleId)).toBe(false);
  for (const m of members.filter((m) => !provenUnderFaults.includes(m.userId))) {
    const again = visibleMessage(await g.h.run('verify', { identity: m.identity }, { userId: m.userId }));
    expect(seen(again)).toContain('is now linked');
  }
  const proven = await provenOf(g, members);
  expect(proven).toHaveLength(MEMBERS);
  await rolesFollow(g, proven);
}

describe('PostgreSQL connections terminated during a /verify burst, PROCESS_ROLE=all', () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let g: GatingHarness;
  beforeAll(async () => {
    db = await createDatabase('db_faults_all');
    g = await startGating({ env: { DATABASE_URL: db.url, GATING_DUE_CHECK_SECONDS: '1' } });
    await setup(g);
  }, 30_000);
  afterAll(async () => {
    await closeGating();
    await db?.drop();
  });

  it('connections ended as by a failover: every member is linked by their one /verify', async () => {
    await linkedThroughFailover(g, new URL(db.url).pathname.slice(1));
  }, 60_000);

  it('connections ended every 30 ms: the process lives, every member is answered, every role decided is applied', async () => {
    await answeredThroughSustainedFaults(g, new URL(db.url).pathname.slice(1));
  }, 60_000);
});

describe('PostgreSQL connections terminated during a /verify burst, INTERACTIONS=http (gateway worker + web replicas)', () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let g: GatingHarness;
  const replicas: Replica[] = [];
  let lb: Awaited<ReturnType<typeof startRoundRobin>>;
  const prefix = `web3bio-test:${randomUUID()}:`;

  beforeAll(async () => {
    db = await createDatabase('db_faults_http');
    const shared = { INTERACTIONS: 'http', DATABASE_URL: db.url, TOKEN_ENCRYPTION_KEY: 'cd'.repeat(32) };
    g = await startGating({
      env: { ...shared, PROCESS_ROLE: 'gateway', GATING_DUE_CHECK_SECONDS: '1' },
    });
    const replicaEnv = {
      ...shared,
      PROCESS_ROLE: 'web',
      GATING_ENABLED: 'true',
      PUBLIC_URL: 'https://verify.example.test',
      USER_COOLDOWN_COMMANDS: '100',
      REDIS_URL,
      REDIS_PREFIX: prefix,
    };
    for (let i = 0; i < 2; i++) replicas.push(await startReplica(g.h.discord, g.h.upstream, replicaEnv));
    lb = await startRoundRobin(replicas.map((r) => r.replica.url));
    g.h.discord.useInteractionsEndpoint(`${lb.url}/interactions`);
    await setup(g);
  }, 30_000);
  afterAll(async () => {
    await lb?.close();
    for (const r of replicas) await r.close();
    await closeGating();
    await db?.drop();
    const { Redis } = await import('ioredis');
    const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
    await deleteKeys(client, `${prefix}*`);
    await client.quit();
  });

  it('connections ended as by a failover: every member is linked by their one /verify', async () => {
    await linkedThroughFailover(g, new URL(db.url).pathname.slice(1));
  }, 60_000);

  it('connections ended every 30 ms: the worker and the replicas live, every member is answered, every role decided is applied', async () => {
    await answeredThroughSustainedFaults(g, new URL(db.url).pathname.slice(1));
    // Both replicas still answer.
    for (const r of replicas) expect((await fetch(`${r.replica.url}/healthz`)).status).toBe(200);
  }, 60_000);
});
