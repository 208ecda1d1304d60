/**
 * Deliveries acted on, so that each signed delivery from Discord (an interaction, a webhook event) is
 * acted on once: by this process (`SeenDeliveries`), and with REDIS_URL by every process sharing the
 * Redis (`SharedDeliveries`). A delivery is known by a key its signature covers (an interaction's id; an
 * event's signature) and remembered while its signed timestamp is still accepted (MAX_SIGNATURE_AGE_MS
 * either side of now): after that the signature check refuses it anyway.
 */
import type { Redis } from 'ioredis';
import { MAX_SIGNATURE_AGE_MS } from './discordSignature.ts';
import { errorSummary, type WebLogger } from './responses.ts';

/** Whether a delivery is seen for the first time: a boolean at once, or a promise when another process must be asked. */
export interface DeliveryLedger {
  /**
   * True the first time `key` (stamped `timestampSeconds`, its signed `X-Signature-Timestamp`) is seen;
   * false for a delivery already acted on. Only call it for a delivery whose signature was checked.
   */
  firstSighting(key: string, timestampSeconds: number, now: number): boolean | Promise<boolean>;
}

/**
 * How much longer than its window a delivery is remembered: its body may arrive up to the request timeout
 * (15 s) after its headers were checked, and replicas' clocks differ a little (each checks the timestamp
 * against its own; NTP keeps them far closer than this).
 */
export const REMEMBER_MARGIN_MS = 60_000;

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

/** SET NX PX of each key (KEYS[i], for ARGV[i] ms): 1 for each key set now, 0 for one already there. */
const CLAIM_SCRIPT = `
local firsts = {}
for i, key in ipairs(KEYS) do
  firsts[i] = redis.call('SET', key, '1', 'PX', ARGV[i], 'NX') and 1 or 0
end
return firsts`;

interface ClaimCommand {
  claimDeliveries(keyCount: number, ...keysAndTtls: (string | number)[]): Promise<number[]>;
}

/**
 * The deliveries every process sharing the Redis acted on: this process's set first (a repeat to the same
 * process costs no round trip), then `SET <prefix>delivery:<key> 1 NX PX <ms>` (several deliveries' in
 * one script call, see `#send`), kept until the stamp is no longer accepted (plus REMEMBER_MARGIN_MS). When Redis cannot answer, the delivery is judged by this
 * process's set alone (logged once per outage, and again when Redis is back): lookups keep working, and a
 * gating command handed to the worker is still acted on once by the store's unique hand-off row.
 */
export class SharedDeliveries implements DeliveryLedger {
  readonly #local: SeenDeliveries;
  readonly #redis: Redis;
  readonly #prefix: string;
  readonly #logger: WebLogger;
  readonly #maxAgeMs: number;
  #unreachable = false;
  /** Claims waiting to be sent, and whether a call is in flight or about to go. */
  #waiting: { key: string; ttl: number; resolve: (first: boolean) => void }[] = [];
  #sending = false;

  constructor(o: { redis: Redis; prefix: string; logger: WebLogger; maxAgeMs?: number }) {
    this.#maxAgeMs = o.maxAgeMs ?? MAX_SIGNATURE_AGE_MS;
    this.#local = new SeenDeliveries(this.#maxAgeMs);
    this.#redis = o.redis;
    const redis = o.redis as Redis & Partial<ClaimCommand>;
    if (redis.claimDeliveries === undefined) redis.defineCommand('claimDeliveries', { lua: CLAIM_SCRIPT });
    this.#prefix = `${o.prefix}delivery:`;
    this.#logger = o.logger;
  }

  firstSighting(key: string, timestampSeconds: number, now: number): boolean | Promise<boolean> {
    if (!this.#local.firstSighting(key, timestampSeconds, now)) return false;
    const ttl = Math.max(1, timestampSeconds * 1_000 + this.#maxAgeMs - now) + REMEMBER_MARGIN_MS;
    return new Promise((resolve) => {
      this.#waiting.push({ key: this.#prefix + key, ttl, resolve });
      if (this.#sending) return;
      this.#sending = true;
      setImmediate(() => this.#send());
    });
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
    const claims = this.#waiting;
    this.#waiting = [];
    this.#sending = true;
    const redis = this.#redis as Redis & ClaimCommand;
    redis
      .claimDeliveries(claims.length, ...claims.map((c) => c.key), ...claims.map((c) => c.ttl))
      .then(
        (firsts) => {
          if (this.#unreachable) this.#back();
          for (const [i, claim] of claims.entries()) claim.resolve(firsts[i] === 1);
        },
        (error: unknown) => {
          this.#outage(error);
          for (const claim of claims) claim.resolve(true);
        },
      )
      .finally(() => {
        this.#sending = false;
        if (this.#waiting.length > 0) this.#send();
      });
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
