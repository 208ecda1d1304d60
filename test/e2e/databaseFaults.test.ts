/**
 * The bot's PostgreSQL connections terminated during a burst of `/verify` (a failover, a restart, a
 * pooler's idle timeout do the same), in each process role: one process (PROCESS_ROLE=all), and the
 * INTERACTIONS=http split (a gateway worker and two web replicas). The process lives, every member is
 * answered (an answer or a private error, never silence), and every role a stored proof decides is
 * applied once the faults stop, within the due-check pass.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/server.ts';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { startRoundRobin } from '../../fakes/roundRobin.ts';
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

/** Terminates every connection to `database` but its own, every `everyMs`, until stopped. */
function startTerminating(database: string, everyMs = 30) {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  let stopped = false;
  let terminated = 0;
  const loop = (async () => {
    await admin.connect();
    while (!stopped) {
      const result = await admin.query(
        'SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      terminated += result.rows.filter((r: { done: boolean }) => r.done).length;
      await sleep(everyMs);
    }
    await admin.end();
  })();
  return {
    async stop(): Promise<number> {
      stopped = true;
      await loop;
      return terminated;
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

/**
 * Ten members run `/verify` (each by their identity's own record) while the database's connections are
 * terminated again and again; then the checks every process role must pass.
 */
async function verifyBurstUnderFaults(g: GatingHarness, database: string): Promise<void> {
  const members: { userId: string; identity: string }[] = [];
  for (let i = 0; i < MEMBERS; i += 1) {
    const username = `faulty${i}`;
    const userId = await addMember(g, username);
    const identity = `${username}-${Date.now().toString(36)}.eth`;
    addIdentity(g, identity, { discordHandle: username, human: true });
    members.push({ userId, identity });
  }
  const terminator = startTerminating(database);
  await sleep(60);
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
    // The faults reached the bot's connections.
    expect(await terminator.stop()).toBeGreaterThan(0);
  }

  // Every member was answered: their reply, or a private error. Never silence.
  const answers = results.map((r, i) => {
    if (r.status === 'rejected') throw new Error(`member ${i} got no answer: ${String(r.reason)}`);
    return visibleMessage(r.value);
  });
  const linked = answers.filter((m) => seen(m).includes('is now linked'));
  for (const message of answers.filter((m) => !linked.includes(m))) expect(isEphemeral(message)).toBe(true);
  for (const message of linked) expect(seen(message)).not.toContain('already match');

  // The process lives and answers.
  expect(escaped).toEqual([]);
  const later = visibleMessage(
    await g.h.run('whoami', {}, { userId: members[0]?.userId ?? '', timeoutMs: 15_000 }),
  );
  expect(seen(later).length).toBeGreaterThan(0);

  // Every role decided is applied: each member whose proof was stored gets the role, by the due-check
  // pass when the sync after the proof failed.
  const provenNow = async () => {
    const out: string[] = [];
    for (const m of members) {
      const links = await g.gating.store.getUserLinks(g.guildId, m.userId);
      if (links.some((l) => l.releasedAt === null)) out.push(m.userId);
    }
    return out;
  };
  const provenUnderFaults = await provenNow();
  expect(provenUnderFaults.length).toBeGreaterThanOrEqual(linked.length);
  // Nobody without a stored proof got the role.
  for (const m of members)
    if (!provenUnderFaults.includes(m.userId)) expect(hasRole(g, m.userId, g.humanRoleId)).toBe(false);
  // A member refused during the faults runs /verify again once the database is back, as they would.
  for (const m of members.filter((m) => !provenUnderFaults.includes(m.userId))) {
    const again = visibleMessage(await g.h.run('verify', { identity: m.identity }, { userId: m.userId }));
    expect(seen(again)).toContain('is now linked');
  }
  const proven = await provenNow();
  expect(proven).toHaveLength(MEMBERS);
  await waitFor(
    () => proven.every((userId) => hasRole(g, userId, g.humanRoleId)),
    `the human role for ${proven.length} proven members`,
    20_000,
  );
  // The due checks the proofs saved are cleared once their members were synced.
  await expect.poll(() => g.gating.store.listDueChecks(Date.now(), 100), { timeout: 10_000 }).toEqual([]);
  expect(escaped).toEqual([]);
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

  it('the process lives, every member is answered, every role decided is applied', async () => {
    await verifyBurstUnderFaults(g, new URL(db.url).pathname.slice(1));
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

  it('the worker and the replicas live, every member is answered, every role decided is applied', async () => {
    await verifyBurstUnderFaults(g, new URL(db.url).pathname.slice(1));
    // Both replicas still answer.
    for (const r of replicas) expect((await fetch(`${r.replica.url}/healthz`)).status).toBe(200);
  }, 60_000);
});
