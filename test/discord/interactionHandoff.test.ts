/**
 * The hand-off queue between web replicas and gateway workers, on a real PostgreSQL store (each worker
 * with a store of its own, as two processes would have): what the worker answers, drops and leaves to
 * other shards, a slow command under a short lease, a dead worker's hand-off and guild lease taken over
 * (a live one's not), a replayed hand-off, pruning, and what the table holds at rest (read directly).
 */

import type { APIInteraction } from 'discord-api-types/v10';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import {
  HandoffInbox,
  type HandoffInboxOptions,
  handoffQueue,
  INTERACTION_TOKEN_LIFE_MS,
} from '../../src/discord/interactionHandoff.ts';
import type { Responder } from '../../src/discord/responder.ts';
import type { WebhookRest } from '../../src/discord/webhookRest.ts';
import { createLogger, type Logger } from '../../src/ops/log.ts';
import { openPostgresStore } from '../../src/store/postgresStore.ts';
import type { GatingStore } from '../../src/store/types.ts';

const KEY = Buffer.alloc(32, 3);
const T0 = 1_800_000_000_000;
let db: Awaited<ReturnType<typeof createDatabase>>;
let raw: pg.Client;
const stores: GatingStore[] = [];
const inboxes: HandoffInbox[] = [];
let lines: Record<string, unknown>[];
let logger: Logger;

beforeAll(async () => {
  db = await createDatabase('handoff_inbox');
  raw = new pg.Client({ connectionString: db.url });
  await raw.connect();
});
afterAll(async () => {
  await raw.end();
  await db.drop();
});
beforeEach(() => {
  lines = [];
  logger = createLogger({
    level: 'info',
    secrets: [],
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) },
  });
});
afterEach(async () => {
  for (const inbox of inboxes.splice(0)) await inbox.stop();
  // The next test starts from an empty queue.
  await raw.query('DELETE FROM interaction_handoffs');
  await raw.query('DELETE FROM guild_leases');
  for (const store of stores.splice(0)) await store.close();
});

async function store(options: { leaseMs?: number; now?: () => number } = {}): Promise<GatingStore> {
  const opened = await openPostgresStore(db.url, options);
  stores.push(opened);
  return opened;
}

/** A gating command as Discord sends it, in `guildId`, with its own id and token. */
function interaction(n: number, guildId = '111111111111111111'): APIInteraction {
  return {
    id: String(1_400_000_000_000_000_000n + BigInt(n)),
    application_id: '100000000000000001',
    type: 2,
    token: `interaction-token-${n}-${'x'.repeat(40)}`,
    guild_id: guildId,
    data: { id: '1', name: 'gating', type: 1 },
    version: 1,
  } as unknown as APIInteraction;
}

function inbox(
  options: Partial<HandoffInboxOptions> & Pick<HandoffInboxOptions, 'store' | 'run'>,
): HandoffInbox {
  const made = new HandoffInbox({
    logger,
    rest: {} as WebhookRest,
    key: KEY,
    leaseMs: 60_000,
    pollMs: 50,
    ...options,
  });
  inboxes.push(made);
  return made;
}

const rows = async () =>
  (await raw.query('SELECT * FROM interaction_handoffs ORDER BY id')).rows as Record<string, unknown>[];

describe('HandoffInbox', () => {
  it('answers a hand-off as already deferred, with its token opened; the row keeps no token, in clear or sealed, once answered', async () => {
    const replica = handoffQueue(await store(), KEY);
    const sent = interaction(1);
    expect(await replica.handOver(sent)).toBe('queued');
    // At rest: the interaction without its token, and the token sealed (not in clear anywhere in the row).
    const [queued] = await rows();
    expect(JSON.stringify(queued)).not.toContain(sent.token);
    expect(queued?.interaction).not.toHaveProperty('token');
    expect(String(queued?.sealed_token)).toMatch(/^\S+$/);

    const ran: { interaction: APIInteraction; answered: boolean }[] = [];
    const worker = inbox({
      store: await store(),
      run: async (got: APIInteraction, responder: Responder) => {
        ran.push({ interaction: got, answered: responder.answered });
      },
    });
    worker.nudge();
    await worker.idle();
    expect(ran).toEqual([{ interaction: sent, answered: true }]);
    const [answered] = await rows();
    expect(answered).toMatchObject({ sealed_token: null, interaction: {}, interaction_id: sent.id });
    expect(answered?.answered_at).not.toBeNull();
  });

  it('the same interaction handed over again (a replay, to any replica) queues nothing and runs nothing more', async () => {
    const sent = interaction(2);
    const [a, b] = [handoffQueue(await store(), KEY), handoffQueue(await store(), KEY)];
    expect(await a.handOver(sent)).toBe('queued');
    let runs = 0;
    const worker = inbox({ store: await store(), run: async () => void runs++ });
    worker.nudge();
    await worker.idle();
    expect(await b.handOver(sent)).toBe('replayed');
    expect(await a.handOver(sent)).toBe('replayed');
    worker.nudge();
    await worker.idle();
    expect(runs).toBe(1);
    expect(await rows()).toHaveLength(1);
  });

  it('a 1.5 s command under a 1 s lease runs once with two workers polling: the lease is renewed while it runs', async () => {
    await handoffQueue(await store(), KEY).handOver(interaction(3));
    const runs: string[] = [];
    const slow = (worker: string) => async () => {
      runs.push(worker);
      await new Promise((resolve) => setTimeout(resolve, 1_500));
    };
    const [first, second] = [
      inbox({ store: await store({ leaseMs: 1_000 }), leaseMs: 1_000, run: slow('first') }),
      inbox({ store: await store({ leaseMs: 1_000 }), leaseMs: 1_000, run: slow('second') }),
    ];
    first.start();
    second.start();
    await expect.poll(async () => (await rows())[0]?.answered_at ?? null, { timeout: 5_000 }).not.toBeNull();
    // Both kept polling past the first lease's end.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs).toHaveLength(1);
    expect(lines.filter((l) => l.msg === 'handed-over interaction answered')).toHaveLength(1);
  });

  it("a dead worker's hand-off is taken over with its guild's re-check lease, ended at once, not a lease later", async () => {
    const sent = interaction(5);
    const guildId = String(sent.guild_id);
    await handoffQueue(await store(), KEY).handOver(sent);
    // The dead worker claimed the hand-off (a 2 s lease) and was mid-pass (a guild lease of a minute),
    // holding another guild's pass too; a live process holds a third guild's.
    const [dead, live, worker] = [await store({ leaseMs: 2_000 }), await store(), await store()];
    expect(await live.acquireGuildLease('333333333333333333', 'host:2:live/pass', Date.now() + 60_000)).toBe(
      true,
    );
    expect(await dead.acquireGuildLease('222222222222222222', 'host:1:dead/pass', Date.now() + 60_000)).toBe(
      true,
    );
    expect(await dead.acquireGuildLease(guildId, 'host:1:dead/pass', Date.now() + 60_000)).toBe(true);
    const [open] = await dead.openHandoffs(1);
    expect(await dead.claimHandoff(open?.id ?? 0, 'host:1:dead')).not.toBeNull();
    const passTaken: boolean[] = [];
    const taker = inbox({
      store: worker,
      holder: 'host:3:new',
      // The command: the guild's pass, which needs the lease (GuildRechecks' holder is `<process>/<part>`).
      run: async () =>
        void passTaken.push(await worker.acquireGuildLease(guildId, 'host:3:new/pass', Date.now() + 60_000)),
    });
    taker.nudge();
    await taker.idle();
    // Its claim has not lapsed yet: the dead worker still looks alive, nothing runs.
    expect(passTaken).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 2_050));
    taker.nudge();
    await taker.idle();
    expect(passTaken).toEqual([true]);
    expect(lines.filter((l) => l.deadProcess === 'host:1:dead')).toHaveLength(1);
    // Only the guild of the hand-off: the dead worker's other pass is left to its lease, the live one's kept.
    expect(await worker.acquireGuildLease('222222222222222222', 'host:3:new/pass', Date.now() + 1_000)).toBe(
      false,
    );
    expect(await worker.acquireGuildLease('333333333333333333', 'host:3:new/pass', Date.now() + 1_000)).toBe(
      false,
    );
  });

  it("a live worker's hand-off and pass stay its own past the first lease: the other worker runs nothing and takes no lease", async () => {
    const sent = interaction(6);
    const guildId = String(sent.guild_id);
    await handoffQueue(await store(), KEY).handOver(sent);
    const events: string[] = [];
    const pass = (name: string, own: GatingStore) => async () => {
      if (!(await own.acquireGuildLease(guildId, `host:${name}/pass`, Date.now() + 300))) {
        events.push(`${name}: elsewhere`);
        return;
      }
      events.push(`${name}: pass`);
      // A 1.2 s pass under a 300 ms lease, renewed as GuildRechecks renews it.
      const renew = setInterval(
        () => void own.acquireGuildLease(guildId, `host:${name}/pass`, Date.now() + 300),
        100,
      );
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      clearInterval(renew);
      await own.releaseGuildLease(guildId, `host:${name}/pass`);
    };
    const [a, b] = [await store({ leaseMs: 300 }), await store({ leaseMs: 300 })];
    const first = inbox({ store: a, leaseMs: 300, holder: 'host:a', run: pass('a', a) });
    first.start();
    await expect.poll(() => events.length).toBe(1);
    const second = inbox({ store: b, leaseMs: 300, holder: 'host:b', run: pass('b', b) });
    second.start();
    await expect.poll(async () => (await rows())[0]?.answered_at ?? null, { timeout: 5_000 }).not.toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(events).toEqual(['a: pass']);
    expect(lines.filter((l) => l.deadProcess !== undefined)).toEqual([]);
  });

  it('a sharded worker answers its own shard’s hand-off though 40 of another shard’s were queued first', async () => {
    const replica = handoffQueue(await store(), KEY);
    // (guild_id >> 22) % 2: the guild's shard of 2.
    const guildOn = (shard: bigint, n: number) => String(((2n * BigInt(n) + shard) << 22n) + 7n);
    for (let n = 0; n < 40; n++) await replica.handOver(interaction(100 + n, guildOn(1n, n)));
    const ours = interaction(200, guildOn(0n, 1));
    await replica.handOver(ours);
    const ran: string[] = [];
    const worker = inbox({
      store: await store(),
      shards: { ids: [0], count: 2 },
      run: async (got: APIInteraction) => void ran.push(got.id),
    });
    worker.nudge();
    await worker.idle();
    expect(ran).toEqual([ours.id]);
    expect((await rows()).filter((r) => r.answered_at === null)).toHaveLength(40);
  });

  it('rows past the token’s 15 minutes are pruned, answered or not; a younger one is answered', async () => {
    const clock = { t: T0 };
    const now = () => clock.t;
    const replica = handoffQueue(await store({ now }), KEY);
    await replica.handOver(interaction(300));
    await replica.handOver(interaction(301));
    let runs = 0;
    const worker = inbox({
      store: await store({ now }),
      now,
      pruneEveryMs: 1_000,
      run: async () => void runs++,
    });
    worker.nudge();
    await worker.idle();
    expect(runs).toBe(2);
    clock.t += 10 * 60_000;
    await replica.handOver(interaction(302));
    clock.t += INTERACTION_TOKEN_LIFE_MS - 10 * 60_000 + 1;
    worker.nudge();
    await worker.idle();
    // The two answered ones are gone; the third, 5 minutes old, was answered and stays (its mark).
    expect((await rows()).map((r) => r.interaction_id)).toEqual([interaction(302).id]);
    expect(runs).toBe(3);
    expect(
      lines.some((l) => l.msg === 'interaction hand-offs older than their token pruned' && l.pruned === 2),
    ).toBe(true);
  });

  it('a sealed token moved to another row does not open: the worker drops that hand-off and runs nothing', async () => {
    const replica = handoffQueue(await store(), KEY);
    await replica.handOver(interaction(400));
    await replica.handOver(interaction(401));
    // Someone with the database, not the key, swaps the tokens between the two rows.
    await raw.query(
      `UPDATE interaction_handoffs SET sealed_token = (SELECT sealed_token FROM interaction_handoffs o
         WHERE o.id <> interaction_handoffs.id)`,
    );
    let runs = 0;
    const worker = inbox({ store: await store(), run: async () => void runs++ });
    worker.nudge();
    await worker.idle();
    expect(runs).toBe(0);
    expect(
      lines.filter((l) => String(l.msg).includes('does not open with TOKEN_ENCRYPTION_KEY')),
    ).toHaveLength(2);
    // So does one sealed with another key.
    await handoffQueue(await store(), Buffer.alloc(32, 9)).handOver(interaction(402));
    worker.nudge();
    await worker.idle();
    expect(runs).toBe(0);
  });
});
