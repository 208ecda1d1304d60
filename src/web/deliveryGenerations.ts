/**
 * How replicas keep the shared set of deliveries acted on (seenDeliveries.ts) whole across a Redis that
 * lost it: restarted without persistence, flushed, or swapped for an empty one behind the same URL.
 *
 * A generation marker (`<prefix>deliveries:generation`, no expiry) names the set the deliveries were
 * claimed in. Each claim is checked against it in the same script call, so no claim is judged against a
 * Redis whose data the replica has not checked. The marker was chosen over `INFO server`'s run_id: the
 * run_id changes when the process restarts, while the marker is gone exactly when the data is (a restart
 * without persistence, FLUSHALL, eviction), and the claim script can read it atomically with the claims.
 *
 * When the marker is missing, the first replica to see it starts a new generation and, when the set was
 * lost, a settling time (SETTLE_MS), long enough for every other replica to reconnect and notice (see
 * ADOPT_SCRIPT for how a replica that knew no earlier generation decides); each replica that
 * remembers deliveries writes them back (SET NX) under a lease. Until the settling time is over and every
 * lease is released (or lapsed), the claim script answers "wait": no replica acts on a delivery that
 * another may still write back.
 */
import type { Redis } from 'ioredis';

/** How long a new generation waits for every replica: reconnects come at most RECONNECT_MAX_MS apart, and each replica checks the marker every WATCH_MS. */
export const SETTLE_MS = 3_000;
/** How recently a Redis must have started for a new generation to settle when its starter knew no earlier one. */
export const YOUNG_REDIS_MS = 10_000;
/**
 * How long a replica's write-back holds the others without a word from it (renewed with every batch).
 * Each call fails within the client's 1 s command timeout, which ends the write-back, so a live replica
 * renews well within it; one killed as it writes back holds every replica's deliveries no longer than
 * this (it was 10 s: a deploy's killed replica froze every interaction that long).
 */
export const WRITE_BACK_LEASE_MS = 3_000;
/** Deliveries written back per script call. */
const WRITE_BACK_BATCH = 1_000;

/** The milliseconds of Redis's own clock (one clock for every replica). */
const REDIS_NOW = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/**
 * KEYS[1] the marker, KEYS[2] the holds (sorted set: member -> until, Redis ms), KEYS[3..] deliveries;
 * ARGV[1] the generation the caller wrote back into, ARGV[2..] each delivery's ms. -1: another generation
 * (or none); -2: a generation still being restored; else 1 for each key set now, 0 for one already there.
 */
const CLAIM_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return -1 end
${REDIS_NOW}
if redis.call('ZCOUNT', KEYS[2], '(' .. now, '+inf') > 0 then return -2 end
local firsts = {}
for i = 3, #KEYS do
  firsts[i - 2] = redis.call('SET', KEYS[i], '1', 'PX', ARGV[i - 1], 'NX') and 1 or 0
end
return firsts`;

/**
 * KEYS[1] the marker, KEYS[2] the holds; ARGV[1] a new generation's name, ARGV[2] SETTLE_MS, ARGV[3] the
 * caller's lease ('' when it has nothing to write back), ARGV[4] its length, ARGV[5] YOUNG_REDIS_MS,
 * ARGV[6] the generation the caller knew ('' for none). The marker's generation (started now when
 * missing) and 1 when this call started it. A settling time starts with a generation that replaces one the
 * caller knew (the set was lost), or that a Redis younger than YOUNG_REDIS_MS starts for a caller that knew
 * none: a replica that itself restarted cannot tell a Redis that lost the set from a first start, but a
 * Redis up for longer than that had every remembering replica reconnected already (they would have
 * started the generation).
 */
const ADOPT_SCRIPT = `
${REDIS_NOW}
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
local generation = redis.call('GET', KEYS[1])
local started = 0
if not generation then
  generation = ARGV[1]
  started = 1
  redis.call('SET', KEYS[1], generation)
end
local settle = ARGV[6] ~= '' and ARGV[6] ~= generation
if started == 1 and not settle then
  local info = redis.pcall('INFO', 'server')
  local uptime = type(info) == 'string' and tonumber(string.match(info, 'uptime_in_seconds:(%d+)'))
  settle = not uptime or uptime * 1000 < tonumber(ARGV[5])
end
if settle then redis.call('ZADD', KEYS[2], 'NX', now + tonumber(ARGV[2]), 'settle:' .. generation) end
if ARGV[3] ~= '' then redis.call('ZADD', KEYS[2], now + tonumber(ARGV[4]), ARGV[3]) end
return {generation, started}`;

/** KEYS[1] the holds, KEYS[2..] deliveries; ARGV[1] the lease, ARGV[2] its length, ARGV[3..] each delivery's ms. */
const WRITE_BACK_SCRIPT = `
for i = 2, #KEYS do
  redis.call('SET', KEYS[i], '1', 'PX', ARGV[i + 1], 'NX')
end
${REDIS_NOW}
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
return #KEYS - 1`;

interface GenerationCommands {
  claimDeliveries(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<number[] | number>;
  adoptDeliveries(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<[string, number]>;
  writeBackDeliveries(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<number>;
}

/** A delivery to claim or write back: its Redis key and how long to keep it, ms. */
export interface DeliveryClaim {
  key: string;
  ttl: number;
}

/** What a claim call answered: each claim's first sighting, or why none was judged. */
export type ClaimAnswer = boolean[] | 'other generation' | 'restoring';

function claimAnswer(answer: number[] | number): ClaimAnswer {
  if (answer === -1) return 'other generation';
  if (answer === -2) return 'restoring';
  return (answer as number[]).map((first) => first === 1);
}

/** The marker and holds of one key prefix, and the three scripts on one client. */
export class DeliveryGenerations {
  readonly #redis: Redis & GenerationCommands;
  readonly #marker: string;
  readonly #holds: string;

  constructor(redis: Redis, prefix: string) {
    const named = redis as Redis & Partial<GenerationCommands>;
    if (named.claimDeliveries === undefined) named.defineCommand('claimDeliveries', { lua: CLAIM_SCRIPT });
    if (named.adoptDeliveries === undefined) named.defineCommand('adoptDeliveries', { lua: ADOPT_SCRIPT });
    if (named.writeBackDeliveries === undefined)
      named.defineCommand('writeBackDeliveries', { lua: WRITE_BACK_SCRIPT });
    this.#redis = redis as Redis & GenerationCommands;
    this.#marker = `${prefix}deliveries:generation`;
    this.#holds = `${prefix}deliveries:holds`;
  }

  /** SET NX PX of each claim, in one call, if `generation` is the marker's and nothing is being restored. */
  claim(generation: string, claims: readonly DeliveryClaim[]): Promise<ClaimAnswer> {
    const keysAndArgs: (string | number)[] = [this.#marker, this.#holds];
    for (const claim of claims) keysAndArgs.push(claim.key);
    keysAndArgs.push(generation);
    for (const claim of claims) keysAndArgs.push(claim.ttl);
    try {
      return this.#redis.claimDeliveries(claims.length + 2, ...keysAndArgs).then(claimAnswer);
    } catch (error) {
      // As the async function it was: a client that throws fails the call, judged as an outage.
      return Promise.reject(error);
    }
  }

  /** The marker's generation now, or undefined when there is none. */
  async current(): Promise<string | undefined> {
    return (await this.#redis.get(this.#marker)) ?? undefined;
  }

  /**
   * The marker's generation, started as `fresh` when missing (settling as ADOPT_SCRIPT says, `known` being
   * the generation the caller claimed in before); `lease` (when given) holds every replica's claims until
   * `release`d.
   */
  async adopt(
    fresh: string,
    known: string | undefined,
    lease: string | undefined,
  ): Promise<{ generation: string; started: boolean }> {
    const [generation, started] = await this.#redis.adoptDeliveries(
      2,
      this.#marker,
      this.#holds,
      fresh,
      SETTLE_MS,
      lease ?? '',
      WRITE_BACK_LEASE_MS,
      YOUNG_REDIS_MS,
      known ?? '',
    );
    return { generation, started: started === 1 };
  }

  /** SET NX PX of every delivery, in batches, each renewing `lease`. */
  async writeBack(lease: string, deliveries: readonly DeliveryClaim[]): Promise<void> {
    for (let start = 0; start < deliveries.length; start += WRITE_BACK_BATCH) {
      const batch = deliveries.slice(start, start + WRITE_BACK_BATCH);
      await this.#redis.writeBackDeliveries(
        batch.length + 1,
        this.#holds,
        ...batch.map((d) => d.key),
        lease,
        WRITE_BACK_LEASE_MS,
        ...batch.map((d) => d.ttl),
      );
    }
  }

  /** Lets the other replicas go on claiming. */
  async release(lease: string): Promise<void> {
    await this.#redis.zrem(this.#holds, lease);
  }
}
