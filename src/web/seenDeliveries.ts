/**
 * Deliveries acted on, so that each signed delivery from Discord (an interaction, a webhook event) is
 * acted on once: by this process (`SeenDeliveries`), and with REDIS_URL by every process sharing the
 * Redis (`SharedDeliveries`). A delivery is known by a key its signature covers (an interaction's id; an
 * event's signature) and remembered while its signed timestamp is still accepted (MAX_SIGNATURE_AGE_MS
 * either side of now): after that the signature check refuses it anyway.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { type DeliveryClaim, DeliveryGenerations } from './deliveryGenerations.ts';
import { MAX_SIGNATURE_AGE_MS } from './discordSignature.ts';
import { errorSummary, type WebLogger } from './responses.ts';

/**
 * Whether a delivery is seen for the first time (true), was acted on already (false), or could not be
 * judged in time ('unjudged': the shared set is being restored after Redis lost it; the delivery is
 * neither acted on nor remembered, so the same one sent again later is judged then).
 */
export type Sighting = boolean | 'unjudged';

/** Whether a delivery is seen for the first time: a boolean at once, or a promise when another process must be asked. */
export interface DeliveryLedger {
  /**
   * True the first time `key` (stamped `timestampSeconds`, its signed `X-Signature-Timestamp`) is seen;
   * false for a delivery already acted on. Only call it for a delivery whose signature was checked.
   */
  firstSighting(key: string, timestampSeconds: number, now: number): boolean | Promise<Sighting>;
}

/**
 * How much longer than its window a delivery is remembered: its body may arrive up to the request timeout
 * (15 s) after its headers were checked, and replicas' clocks differ a little (each checks the timestamp
 * against its own; NTP keeps them far closer than this).
 */
export const REMEMBER_MARGIN_MS = 60_000;

/** How long a delivery stamped `timestampSeconds` is still kept at `now`, ms (at least the margin). */
export function rememberForMs(
  timestampSeconds: number,
  now: number,
  maxAgeMs = MAX_SIGNATURE_AGE_MS,
): number {
  return Math.max(1, timestampSeconds * 1_000 + maxAgeMs - now) + REMEMBER_MARGIN_MS;
}

/**
 * This process's deliveries, kept until their signed timestamp is no longer accepted (and
 * REMEMBER_MARGIN_MS more), however many there are (a count cap would forget deliveries that could still be replayed; only Discord's own deliveries
 * get in, as each is checked first). One set per signed second: a replay carries the same timestamp (the
 * signature covers it), so only that second's set is read, and a second is forgotten whole once it
 * expires, at most once a second.
 */
export class SeenDeliveries implements DeliveryLedger {
  readonly #bySecond = new Map<number, Set<string>>();
  readonly #maxAgeMs: number;
  #size = 0;
  #sweptAt = Number.NEGATIVE_INFINITY;

  constructor(maxAgeMs = MAX_SIGNATURE_AGE_MS) {
    this.#maxAgeMs = maxAgeMs;
  }

  firstSighting(key: string, timestampSeconds: number, now: number): boolean {
    if (now - this.#sweptAt >= 1_000) this.#forgetExpired(now);
    const second = this.#bySecond.get(timestampSeconds);
    if (second === undefined) this.#bySecond.set(timestampSeconds, new Set([key]));
    else if (second.has(key)) return false;
    else second.add(key);
    this.#size++;
    return true;
  }

  /** Forgets a delivery that was not acted on after all (see `Sighting`). */
  forget(key: string, timestampSeconds: number): void {
    if (this.#bySecond.get(timestampSeconds)?.delete(key)) this.#size--;
  }

  /** The deliveries still remembered at `now`, by signed second. */
  remembered(now: number): IterableIterator<[number, ReadonlySet<string>]> {
    this.#forgetExpired(now);
    return this.#bySecond.entries();
  }

  /** How many deliveries are remembered. */
  get size(): number {
    return this.#size;
  }

  #forgetExpired(now: number): void {
    this.#sweptAt = now;
    for (const [second, keys] of this.#bySecond) {
      if (second * 1_000 + this.#maxAgeMs + REMEMBER_MARGIN_MS >= now) continue;
      this.#size -= keys.size;
      this.#bySecond.delete(second);
    }
  }
}

/**
 * How long a delivery may wait for the shared set to be restored (below) before it is refused as
 * unjudged: a held interaction still leaves the router its default 1.2 s (DEFER_AFTER_MS) to defer
 * within Discord's 3 s.
 */
export const HOLD_MS = 1_000;
/** How often a replica reads the generation marker (deliveryGenerations.ts) to notice a Redis that lost it. */
export const WATCH_MS = 1_000;
/** How soon claims held while a generation settles are tried again. */
const RETRY_HELD_MS = 100;

interface Claim extends DeliveryClaim {
  /** The delivery's key in this process's set, and its signed second. */
  id: string;
  second: number;
  /** performance.now() when it was first seen. */
  since: number;
  resolve: (sighting: Sighting) => void;
  timer?: NodeJS.Timeout;
  done: boolean;
}

/**
 * The deliveries every process sharing the Redis acted on: this process's set first (a repeat to the same
 * process costs no round trip), then `SET <prefix>delivery:<key> 1 NX PX <ms>` (several deliveries' in
 * one script call, see `#send`), kept until the stamp is no longer accepted (plus REMEMBER_MARGIN_MS).
 *
 * A Redis that comes back empty (restarted without persistence, flushed) has forgotten the set: each claim
 * is checked against a generation marker in the same call, and each replica reads the marker every
 * WATCH_MS and on every (re)connection; on a new generation, every replica writes back what it still
 * remembers, and claims wait until all have (deliveryGenerations.ts). A delivery held longer than HOLD_MS
 * is answered 'unjudged' (the route refuses it with 503) and forgotten here.
 *
 * When Redis cannot answer, the delivery is judged by this process's set alone (logged once per outage,
 * and again when Redis is back): lookups keep working, and a gating command handed to the worker is still
 * acted on once by the store's unique hand-off row. What was acted on meanwhile is written back on
 * reconnection.
 */
export class SharedDeliveries implements DeliveryLedger {
  readonly #local: SeenDeliveries;
  readonly #redis: Redis;
  readonly #generations: DeliveryGenerations;
  readonly #prefix: string;
  readonly #logger: WebLogger;
  readonly #maxAgeMs: number;
  readonly #now: () => number;
  /** This process's hold on the others while it writes back. */
  readonly #lease = `writeback:${randomUUID()}`;
  /** The generation this process claims in, once it wrote back into it. */
  #generation: string | undefined;
  #restoring: Promise<void> | undefined;
  #restoreAgain = false;
  #closed = false;
  #unreachable = false;
  /** Claims waiting to be sent, and whether a call is in flight or about to go. */
  #waiting: Claim[] = [];
  #sending = false;
  #retryTimer: NodeJS.Timeout | undefined;
  /** Deliveries seen here whose claim is not answered yet: not written back, as they may not be acted on. */
  readonly #pending = new Set<string>();
  readonly #watch: NodeJS.Timeout;
  readonly #onReady = () => void this.#restore();

  constructor(o: { redis: Redis; prefix: string; logger: WebLogger; maxAgeMs?: number; now?: () => number }) {
    this.#maxAgeMs = o.maxAgeMs ?? MAX_SIGNATURE_AGE_MS;
    this.#local = new SeenDeliveries(this.#maxAgeMs);
    this.#redis = o.redis;
    this.#generations = new DeliveryGenerations(o.redis, o.prefix);
    this.#prefix = `${o.prefix}delivery:`;
    this.#logger = o.logger;
    this.#now = o.now ?? Date.now;
    o.redis.on('ready', this.#onReady);
    if (o.redis.status === 'ready') this.#onReady();
    this.#watch = setInterval(() => this.#check(), WATCH_MS).unref();
  }

  firstSighting(key: string, timestampSeconds: number, now: number): boolean | Promise<Sighting> {
    if (!this.#local.firstSighting(key, timestampSeconds, now)) return false;
    const ttl = rememberForMs(timestampSeconds, now, this.#maxAgeMs);
    return new Promise((resolve) => {
      this.#pending.add(key);
      this.#waiting.push({
        id: key,
        second: timestampSeconds,
        key: this.#prefix + key,
        ttl,
        since: performance.now(),
        resolve,
        done: false,
      });
      this.#schedule();
    });
  }

  /**
   * Stops reading the marker and listening to the client, which its owner closes once this resolves: a
   * write-back under way is finished first, so that its lease is released, not left to hold every other
   * replica's deliveries until it lapses (a replica stopped as it wrote back did, and Discord's deliveries
   * to the others got 503 for seconds). Each command fails within the client's timeout, so this ends.
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watch);
    clearTimeout(this.#retryTimer);
    this.#redis.off('ready', this.#onReady);
    await this.#restoring;
  }

  #schedule(): void {
    if (this.#sending || this.#restoring !== undefined || this.#retryTimer !== undefined) return;
    this.#sending = true;
    setImmediate(() => this.#send());
  }

  /**
   * Sends the claims waiting in one script call, and, once Redis answers it, those that came meanwhile.
   * The first waits for the end of the event loop's turn, so the deliveries read in the same turn go with
   * it. On loopback, each round trip's system calls and each command's parsing cost a web replica more
   * than the rest of the check: a SET per delivery took it from 0.74x to 0.6x the throughput of a bare
   * endpoint; gathered by turn into one call, Redis costs it 6-9 µs a delivery and the ratio stays at
   * 0.72x, where waiting a millisecond (batches of ~7) saved CPU but added latency: 0.59x
   * (npm run bench -- --only http).
   */
  #send(): void {
    const claims = this.#waiting.filter((c) => !c.done);
    this.#waiting = [];
    if (claims.length === 0) {
      this.#sending = false;
      return;
    }
    // No generation yet: the marker never matches '', so Redis, if it answers, says to restore first.
    this.#generations
      .claim(this.#generation ?? '', claims)
      .then(
        (answer) => {
          if (this.#unreachable) this.#back();
          if (typeof answer === 'string') this.#hold(claims, answer);
          else for (const [i, claim] of claims.entries()) this.#settle(claim, answer[i] === true);
        },
        (error: unknown) => {
          this.#outage(error);
          for (const claim of claims) this.#settle(claim, true);
        },
      )
      .finally(() => {
        this.#sending = false;
        if (this.#waiting.length > 0) this.#schedule();
      });
  }

  /** Claims Redis would not judge yet: waiting again, up to HOLD_MS from their first sighting. */
  #hold(claims: Claim[], why: 'other generation' | 'restoring'): void {
    for (const claim of claims) {
      const left = claim.since + HOLD_MS - performance.now();
      if (left <= 0) {
        this.#settle(claim, 'unjudged');
        continue;
      }
      claim.timer ??= setTimeout(() => this.#giveUp(claim), left);
      this.#waiting.push(claim);
    }
    if (why === 'other generation') void this.#restore();
    else if (this.#retryTimer === undefined)
      this.#retryTimer = setTimeout(() => {
        this.#retryTimer = undefined;
        this.#schedule();
      }, RETRY_HELD_MS);
  }

  /** A held claim's time is up while it waits (one in a call is settled by the call's answer). */
  #giveUp(claim: Claim): void {
    if (!claim.done && this.#waiting.includes(claim)) this.#settle(claim, 'unjudged');
  }

  #settle(claim: Claim, sighting: Sighting): void {
    if (claim.done) return;
    claim.done = true;
    clearTimeout(claim.timer);
    this.#pending.delete(claim.id);
    if (sighting === 'unjudged') this.#local.forget(claim.id, claim.second);
    claim.resolve(sighting);
  }

  /** Reads the marker: a generation other than this process's means Redis lost the set. */
  #check(): void {
    if (this.#restoring !== undefined || this.#generation === undefined) return;
    this.#generations.current().then(
      (generation) => {
        if (generation !== this.#generation) void this.#restore();
      },
      () => {},
    );
  }

  /** Adopts the marker's generation, writing back first; claims wait meanwhile. */
  #restore(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    if (this.#restoring !== undefined) {
      this.#restoreAgain = true;
      return this.#restoring;
    }
    this.#restoring = this.#writeBack()
      .then(
        () => {
          if (this.#unreachable) this.#back();
        },
        (error: unknown) => {
          // Redis went again: what waited is judged here, as in any outage.
          this.#outage(error);
          for (const claim of this.#waiting.splice(0)) this.#settle(claim, true);
        },
      )
      .finally(() => {
        this.#restoring = undefined;
        if (this.#restoreAgain) {
          this.#restoreAgain = false;
          void this.#restore();
        } else this.#schedule();
      });
    return this.#restoring;
  }

  async #writeBack(): Promise<void> {
    const now = this.#now();
    const deliveries: DeliveryClaim[] = [];
    for (const [second, ids] of this.#local.remembered(now))
      for (const id of ids)
        if (!this.#pending.has(id))
          deliveries.push({ key: this.#prefix + id, ttl: rememberForMs(second, now, this.#maxAgeMs) });
    const lease = deliveries.length > 0 ? this.#lease : undefined;
    const previous = this.#generation;
    const { generation, started } = await this.#generations.adopt(randomUUID(), previous, lease);
    if (previous !== undefined && generation !== previous)
      this.#logger.warn(
        { rememberedDeliveries: deliveries.length },
        'Redis lost the shared deliveries acted on (restarted empty or flushed): writing back those this process remembers; every replica holds deliveries until all have',
      );
    else if (started)
      this.#logger.info(
        { rememberedDeliveries: deliveries.length },
        'shared deliveries: a new generation in Redis',
      );
    if (lease !== undefined) {
      try {
        await this.#generations.writeBack(lease, deliveries);
      } finally {
        await this.#generations.release(lease).catch(() => undefined);
      }
    }
    this.#generation = generation;
  }

  #outage(error: unknown): void {
    if (this.#unreachable) return;
    this.#unreachable = true;
    this.#logger.warn(
      { err: errorSummary(error) },
      "Redis unreachable: deliveries are checked against this process's own set until it is back (a replay to another replica may be answered again; handed-over gating commands still act once)",
    );
  }

  #back(): void {
    this.#unreachable = false;
    this.#logger.info({}, 'Redis reachable again: deliveries are checked against the shared set');
  }
}
