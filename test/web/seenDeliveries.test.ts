/**
 * The deliveries acted on: this process's set (kept for the whole window, however many deliveries pass),
 * and the set shared through the real Redis by every replica, including what happens while Redis is gone
 * and when it comes back empty (a Redis of the test's own, killed and started again).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { type OwnRedis, startOwnRedis } from '../../fakes/redisServer.ts';
import {
  closeRedisClient,
  createRedisClient,
  RECONNECT_MAX_MS,
  untilRedisReady,
} from '../../src/cache/redisStore.ts';
import { DeliveryGenerations, WRITE_BACK_LEASE_MS } from '../../src/web/deliveryGenerations.ts';
import { MAX_SIGNATURE_AGE_MS } from '../../src/web/discordSignature.ts';
import {
  REMEMBER_MARGIN_MS,
  SeenDeliveries,
  SharedDeliveries,
  type Sighting,
} from '../../src/web/seenDeliveries.ts';

const NOW = 1_800_000_000_000;
const NOW_S = NOW / 1_000;
const id = (n: number) => String(1_300_000_000_000_000_000n + BigInt(n));

/** A logger that keeps each line's level and message. */
function recordingLogger() {
  const logs: { level: string; msg?: string }[] = [];
  const line = (level: string) => (_obj: object, msg?: string) =>
    void logs.push({ level, ...(msg ? { msg } : {}) });
  return { logs, logger: { info: line('info'), warn: line('warn'), error: line('error') } };
}

/** Sends the delivery until it is judged (acted on or refused as seen): every answer, in order. */
async function untilJudged(ledger: SharedDeliveries, key: string, stamp: number): Promise<Sighting[]> {
  const answers: Sighting[] = [];
  const deadline = Date.now() + 20_000;
  do answers.push(await ledger.firstSighting(key, stamp, Date.now()));
  while (answers.at(-1) === 'unjudged' && Date.now() < deadline);
  return answers;
}

describe('SeenDeliveries (one process)', () => {
  it('acts on a delivery once', () => {
    const seen = new SeenDeliveries();
    expect(seen.firstSighting(id(1), NOW_S, NOW)).toBe(true);
    expect(seen.firstSighting(id(1), NOW_S, NOW + 1_000)).toBe(false);
    expect(seen.firstSighting(id(2), NOW_S, NOW + 2_000)).toBe(true);
    expect(seen.size).toBe(2);
  });

  it('still refuses a replay after 60,000 other deliveries within the window (the old set kept 50,000)', () => {
    const seen = new SeenDeliveries();
    expect(seen.firstSighting(id(0), NOW_S, NOW)).toBe(true);
    // 60,000 more over the next four minutes, stamped as they arrive.
    for (let n = 1; n <= 60_000; n++) {
      const at = NOW + n * 4;
      expect(seen.firstSighting(id(n), Math.floor(at / 1_000), at)).toBe(true);
    }
    expect(seen.size).toBe(60_001);
    const later = NOW + 4 * 60_000 + 1;
    expect(seen.firstSighting(id(0), NOW_S, later)).toBe(false);
    expect(seen.firstSighting(id(30_000), Math.floor((NOW + 120_000) / 1_000), later)).toBe(false);
  });

  it('forgets a second whole once its stamp is no longer accepted, and not before', () => {
    const seen = new SeenDeliveries();
    seen.firstSighting(id(1), NOW_S, NOW);
    seen.firstSighting(id(2), NOW_S + 60, NOW + 60_000);
    // Its last accepted moment (and the margin for a body that arrived after its headers): still held.
    const lastHeld = NOW + MAX_SIGNATURE_AGE_MS + REMEMBER_MARGIN_MS;
    expect(seen.firstSighting(id(3), NOW_S + 1, lastHeld)).toBe(true);
    expect(seen.firstSighting(id(1), NOW_S, lastHeld)).toBe(false);
    expect(seen.size).toBe(3);
    // A second later the signature check refuses it as stale anyway: the second is gone.
    expect(seen.firstSighting(id(4), NOW_S + 2, lastHeld + 1_000)).toBe(true);
    expect(seen.size).toBe(3);
    expect(seen.firstSighting(id(2), NOW_S + 60, lastHeld + 1_000)).toBe(false);
  });
});

describe('SharedDeliveries (every replica, through Redis)', () => {
  const prefix = `test-deliveries-${randomUUID()}:`;
  let admin: Redis;
  const clients: Redis[] = [];
  const { logs, logger } = recordingLogger();
  const replica = async (url = REDIS_URL) => {
    const redis = createRedisClient(url);
    clients.push(redis);
    if (url === REDIS_URL) await untilRedisReady(redis);
    return new SharedDeliveries({ redis, prefix, logger });
  };

  beforeAll(async () => {
    admin = createRedisClient(REDIS_URL);
    await untilRedisReady(admin);
  });
  afterAll(async () => {
    await deleteKeys(admin, `${prefix}*`);
    for (const client of [...clients, admin]) await closeRedisClient(client);
  });

  it('a delivery acted on by one replica is refused by another, and remembered for its whole window', async () => {
    const [a, b] = [await replica(), await replica()];
    const now = Date.now();
    const stamp = Math.floor(now / 1_000) - 30;
    expect(await a.firstSighting(id(1), stamp, now)).toBe(true);
    expect(await b.firstSighting(id(1), stamp, now + 5)).toBe(false);
    expect(await a.firstSighting(id(1), stamp, now + 10)).toBe(false);
    expect(await b.firstSighting(id(2), stamp, now)).toBe(true);
    // Kept in Redis until the stamp is no longer accepted, and the margin.
    const ttl = await admin.pttl(`${prefix}delivery:${id(1)}`);
    const expected = stamp * 1_000 + MAX_SIGNATURE_AGE_MS - now + REMEMBER_MARGIN_MS;
    expect(ttl).toBeGreaterThan(expected - 2_000);
    expect(ttl).toBeLessThanOrEqual(expected);
  });

  it('claims made in one turn of the event loop go to Redis in one call, each answered for itself', async () => {
    const [a, b] = [await replica(), await replica()];
    const named = clients.at(-2) as unknown as { claimDeliveries: (...args: unknown[]) => Promise<number[]> };
    const claim = named.claimDeliveries.bind(named);
    const calls: number[] = [];
    named.claimDeliveries = (...args) => {
      // Its keys: the generation marker, the holds, then one per delivery.
      calls.push(Number(args[0]) - 2);
      return claim(...args);
    };
    const now = Date.now();
    const stamp = Math.floor(now / 1_000);
    // Replica b acted on 100..104 first; a then sees 100..119 at once.
    for (let n = 100; n < 105; n++) expect(await b.firstSighting(id(n), stamp, now)).toBe(true);
    const firsts = await Promise.all(
      Array.from({ length: 20 }, (_, i) => a.firstSighting(id(100 + i), stamp, now)),
    );
    expect(firsts).toEqual(Array.from({ length: 20 }, (_, i) => i >= 5));
    // The 20 went together; 5 came back as acted on already, by replica b.
    expect(calls).toEqual([20]);
    const later = [id(200), id(201), id(100)].map((key) => a.firstSighting(key, stamp, now));
    // id(100) is refused by a's own set, before Redis: only two more claims go, in one call.
    expect(await Promise.all(later)).toEqual([true, true, false]);
    expect(calls).toEqual([20, 2]);
  });

  it('without Redis, a replica judges by its own set and says so once', async () => {
    // A port nothing listens on: every command fails at once, as during an outage.
    const down = await replica('redis://127.0.0.1:1');
    const now = Date.now();
    const stamp = Math.floor(now / 1_000);
    expect(await down.firstSighting(id(10), stamp, now)).toBe(true);
    expect(await down.firstSighting(id(11), stamp, now)).toBe(true);
    expect(down.firstSighting(id(10), stamp, now)).toBe(false);
    const warnings = logs.filter((l) => l.level === 'warn' && l.msg?.startsWith('Redis unreachable'));
    expect(warnings).toHaveLength(1);
  });

  it('says when Redis answers again, and from then on a replay is refused through it', async () => {
    logs.length = 0;
    const redis = createRedisClient(REDIS_URL);
    clients.push(redis);
    await untilRedisReady(redis);
    const flaky = new SharedDeliveries({ redis, prefix, logger });
    const named = redis as unknown as { claimDeliveries: (...args: unknown[]) => Promise<number[]> };
    const claim = named.claimDeliveries.bind(redis);
    let down = true;
    // The outage as the client reports it: every command rejected until Redis is back.
    named.claimDeliveries = (...args) =>
      down ? Promise.reject(new Error('Connection is closed.')) : claim(...args);
    const other = await replica();
    const now = Date.now();
    const stamp = Math.floor(now / 1_000);
    expect(await flaky.firstSighting(id(20), stamp, now)).toBe(true);
    down = false;
    expect(await flaky.firstSighting(id(21), stamp, now)).toBe(true);
    expect(await other.firstSighting(id(21), stamp, now)).toBe(false);
    expect(logs.map((l) => `${l.level} ${l.msg?.split(':')[0]}`)).toEqual([
      'warn Redis unreachable',
      'info Redis reachable again',
    ]);
  });

  it('a replica stopped as it writes back leaves no hold: the other replicas go on acting, and what it acted on stays refused', async () => {
    const redis = createRedisClient(REDIS_URL);
    clients.push(redis);
    await untilRedisReady(redis);
    const stopping = new SharedDeliveries({ redis, prefix, logger });
    const other = await replica();
    const named = redis as unknown as { claimDeliveries: (...args: unknown[]) => Promise<number[]> };
    const claim = named.claimDeliveries.bind(redis);
    let down = true;
    named.claimDeliveries = (...args) =>
      down ? Promise.reject(new Error('Connection is closed.')) : claim(...args);
    const stamp = Math.floor(Date.now() / 1_000);
    // Acted on while Redis could not answer: remembered, and written back on the next connection.
    expect(await stopping.firstSighting(id(30), stamp, Date.now())).toBe(true);
    down = false;
    // The connection comes back and the replica starts writing back; it is stopped right then (a deploy),
    // the way the app stops it: the ledger first, then its client.
    const stopped = new Promise<void>((resolve, reject) => {
      redis.once('ready', () => {
        stopping
          .close()
          .then(() => closeRedisClient(redis))
          .then(resolve, reject);
      });
    });
    redis.disconnect(true);
    await stopped;
    // No hold left (a lease would make every replica wait, then refuse Discord's deliveries with 503).
    expect(await admin.zrangebyscore(`${prefix}deliveries:holds`, Date.now(), '+inf')).toEqual([]);
    const now = Date.now();
    expect(await other.firstSighting(id(31), Math.floor(now / 1_000), now)).toBe(true);
    // What the stopped replica acted on was written back before it went: a replay to the other is refused.
    expect(await other.firstSighting(id(30), stamp, Date.now())).toBe(false);
  });

  it('a replica killed as it writes back holds the others only until its lease lapses, within seconds', async () => {
    const other = await replica();
    const redis = createRedisClient(REDIS_URL);
    clients.push(redis);
    await untilRedisReady(redis);
    const generations = new DeliveryGenerations(redis, prefix);
    const { generation } = await generations.adopt(randomUUID(), undefined, undefined);
    // The killed replica had taken its lease to write back, and never released it.
    await generations.adopt(randomUUID(), generation, `writeback:${randomUUID()}`);
    const killedAt = Date.now();
    const answers = await untilJudged(other, id(40), Math.floor(killedAt / 1_000));
    // Held (refused for now, 503 at the route) while the lease stands, then acted on once.
    expect(answers[0]).toBe('unjudged');
    expect(answers.filter((answer) => answer !== 'unjudged')).toEqual([true]);
    // The lease lapses after WRITE_BACK_LEASE_MS; the 10 s it was froze every replica's interactions that long.
    expect(Date.now() - killedAt).toBeGreaterThanOrEqual(WRITE_BACK_LEASE_MS - 1_000);
    expect(Date.now() - killedAt).toBeLessThan(7_000);
  });
});

describe('SharedDeliveries when Redis comes back empty (a redis-server of its own, no persistence)', () => {
  const prefix = 'bot:';
  let own: OwnRedis;
  const clients: Redis[] = [];
  const ledgers: SharedDeliveries[] = [];
  const { logs, logger } = recordingLogger();
  const client = async () => {
    const redis = createRedisClient(own.url);
    clients.push(redis);
    await untilRedisReady(redis);
    return redis;
  };
  const replica = async () => {
    const ledger = new SharedDeliveries({ redis: await client(), prefix, logger });
    ledgers.push(ledger);
    return ledger;
  };
  const reconnected = () =>
    expect.poll(() => clients.map((c) => c.status), { timeout: 10_000 }).toEqual(clients.map(() => 'ready'));
  /** Acted on: a Redis started moments ago holds the first deliveries while a new generation settles. */
  const actedOn = async (ledger: SharedDeliveries, key: string, stamp: number) =>
    expect((await untilJudged(ledger, key, stamp)).filter((answer) => answer !== 'unjudged')).toEqual([true]);

  beforeAll(async () => {
    own = await startOwnRedis();
  });
  afterAll(async () => {
    for (const ledger of ledgers) await ledger.close();
    for (const c of clients) await closeRedisClient(c);
    await own?.close();
  });

  it('killed and started again empty: what each replica acted on (during the outage too) is written back, and no replay to the other replica is acted on again; a new delivery is', async () => {
    const [a, b] = [await replica(), await replica()];
    const stamp = Math.floor(Date.now() / 1_000) - 10;
    await actedOn(a, id(1), stamp);
    await actedOn(a, id(2), stamp);
    await actedOn(b, id(3), stamp);
    await own.kill();
    // While Redis is gone, a judges by its own set: acted on, and remembered.
    expect(await a.firstSighting(id(4), stamp, Date.now())).toBe(true);
    await own.restart();
    await reconnected();
    // At once, the captured deliveries to the replica that never saw them, and a new one.
    const [one, two, three, four, fresh] = await Promise.all([
      untilJudged(b, id(1), stamp),
      untilJudged(b, id(2), stamp),
      untilJudged(a, id(3), stamp),
      untilJudged(b, id(4), stamp),
      untilJudged(b, id(5), Math.floor(Date.now() / 1_000)),
    ]);
    for (const answers of [one, two, three, four]) {
      expect(answers).not.toContain(true);
      expect(answers.at(-1)).toBe(false);
    }
    // The new one waited while the replicas wrote back (refused for now, and forgotten), then was acted on.
    expect(fresh[0]).toBe('unjudged');
    expect(fresh.at(-1)).toBe(true);
    expect(fresh.filter((answer) => answer !== 'unjudged')).toEqual([true]);
    expect(await a.firstSighting(id(5), Math.floor(Date.now() / 1_000), Date.now())).toBe(false);
    // Written back with the time each had left, not a new window.
    const admin = await client();
    const ttl = await admin.pttl(`${prefix}delivery:${id(1)}`);
    const left = stamp * 1_000 + MAX_SIGNATURE_AGE_MS - Date.now() + REMEMBER_MARGIN_MS;
    expect(ttl).toBeGreaterThan(left - 5_000);
    expect(ttl).toBeLessThanOrEqual(left + 1_000);
    expect(logs.filter((l) => l.msg?.startsWith('Redis lost the shared deliveries'))).toHaveLength(2);
  });

  it('a replica started while Redis was down (it remembers nothing) waits for the others to write back', async () => {
    const a = await replica();
    const stamp = Math.floor(Date.now() / 1_000) - 10;
    await actedOn(a, id(10), stamp);
    await own.kill();
    const starting = replica();
    await own.restart();
    const c = await starting;
    const answers = await untilJudged(c, id(10), stamp);
    expect(answers).not.toContain(true);
    expect(answers.at(-1)).toBe(false);
    expect(await c.firstSighting(id(11), Math.floor(Date.now() / 1_000), Date.now())).toBe(true);
  });

  it('a client is back within about a second of Redis however long it was gone: what the 3 s of settling count on', async () => {
    const redis = await client();
    await own.kill();
    // ioredis's own backoff would be at 1.6-3.2 s between attempts by now.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    await own.restart();
    const started = performance.now();
    await expect.poll(() => redis.status, { timeout: 5_000, interval: 20 }).toBe('ready');
    expect(performance.now() - started).toBeLessThan(RECONNECT_MAX_MS + 500);
  });

  it('flushed without a reconnection: the replicas notice the marker gone and write back', async () => {
    const [a, b] = [await replica(), await replica()];
    const stamp = Math.floor(Date.now() / 1_000) - 10;
    await actedOn(a, id(20), stamp);
    const admin = await client();
    await admin.flushall();
    const answers = await untilJudged(b, id(20), stamp);
    expect(answers).not.toContain(true);
    expect(answers.at(-1)).toBe(false);
    expect(await admin.exists(`${prefix}delivery:${id(20)}`)).toBe(1);
  });
});
