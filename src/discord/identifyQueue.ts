/**
 * One identify queue per bot, in Redis, for shards spread over processes and machines. Discord lets a bot
 * start one session per rate-limit bucket (`shard_id % max_concurrency`) every 5 seconds, whichever
 * process or machine starts it; discord.js spaces the identifies of one process only. Here each identify
 * takes its bucket's slot with `SET key NX PX 5000`: whoever sets it may identify now, everyone else waits
 * until the key expires. While Redis cannot be reached, a process spaces its own identifies, as discord.js
 * would, and says so once.
 * @see https://discord.com/developers/docs/events/gateway#sharding-max-concurrency
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import type { Config } from '../app/config.ts';
import { createRedisClient, untilRedisReady } from '../cache/redisStore.ts';

/** Discord's 5 s between two identifies of one bucket, and 250 ms for the frame to reach it (Discord counts on arrival). */
export const IDENTIFY_SPACING_MS = 5_250;

/** What discord.js asks of an identify throttler (@discordjs/ws `IIdentifyThrottler`). */
export interface IdentifyThrottler {
  waitForIdentify(shardId: number, signal: AbortSignal): Promise<void>;
}

export interface IdentifyQueueOptions {
  /** A connected client (or one connecting): the queue never closes it. */
  redis: Pick<Redis, 'set' | 'pttl'>;
  /** The keys' prefix, per bot: REDIS_PREFIX and the application id. */
  key: string;
  /** `session_start_limit.max_concurrency` from `GET /gateway/bot`. */
  maxConcurrency: number;
  spacingMs?: number;
  onRedisDown?: (err: unknown) => void;
}

export class RedisIdentifyQueue implements IdentifyThrottler {
  readonly #o: Required<Omit<IdentifyQueueOptions, 'onRedisDown'>> &
    Pick<IdentifyQueueOptions, 'onRedisDown'>;
  /** Per bucket, when this process last identified (the fallback while Redis is away). */
  readonly #localLast = new Map<number, number>();
  #warned = false;

  constructor(o: IdentifyQueueOptions) {
    this.#o = { spacingMs: IDENTIFY_SPACING_MS, ...o, maxConcurrency: Math.max(1, o.maxConcurrency) };
  }

  /** Resolves when `shardId` may identify; rejects when `signal` aborts. */
  async waitForIdentify(shardId: number, signal: AbortSignal): Promise<void> {
    const bucket = shardId % this.#o.maxConcurrency;
    const key = `${this.#o.key}identify:${bucket}`;
    const mine = randomUUID();
    for (;;) {
      signal.throwIfAborted();
      const wait = await this.#take(key, mine, bucket);
      if (wait === 0) return;
      await sleep(wait, undefined, { signal });
    }
  }

  /** 0 when the slot is ours now, else how long to wait before asking again. */
  async #take(key: string, mine: string, bucket: number): Promise<number> {
    const { redis, spacingMs } = this.#o;
    try {
      if ((await redis.set(key, mine, 'PX', spacingMs, 'NX')) === 'OK') {
        this.#localLast.set(bucket, Date.now());
        return 0;
      }
      const left = await redis.pttl(key);
      return Math.min(Math.max(left, 25), spacingMs);
    } catch (err) {
      if (!this.#warned) this.#o.onRedisDown?.(err);
      this.#warned = true;
      const since = Date.now() - (this.#localLast.get(bucket) ?? 0);
      if (since >= spacingMs) {
        this.#localLast.set(bucket, Date.now());
        return 0;
      }
      return spacingMs - since;
    }
  }
}

/** What discord.js hands the throttler's builder (@discordjs/ws `WebSocketManager`). */
interface GatewayInfoSource {
  fetchGatewayInformation(): Promise<{ session_start_limit: { max_concurrency: number } }>;
}

/**
 * discord.js's `ws.buildIdentifyThrottler` for a shard process with REDIS_URL: the queue above, keyed per
 * bot, on a Redis client of its own (made on the first identify, closed by `close`).
 */
export function redisIdentifyThrottler(
  config: Pick<Config, 'REDIS_URL' | 'REDIS_PREFIX' | 'DISCORD_APPLICATION_ID'>,
  logger: { warn(obj: object, msg: string): void },
): { build(manager: GatewayInfoSource): Promise<IdentifyThrottler>; close(): Promise<void> } {
  let redis: Redis | undefined;
  let connected: Promise<void> | undefined;
  return {
    async build(manager) {
      const info = await manager.fetchGatewayInformation();
      redis ??= createRedisClient(config.REDIS_URL);
      // The client fails commands while it connects (it never queues them): wait for it, 2 s at most.
      // Every shard of the process builds at once: one wait, not a 'ready' listener per shard (past 10,
      // Node warned of a leak).
      connected ??= untilRedisReady(redis);
      await connected;
      return new RedisIdentifyQueue({
        redis,
        key: `${config.REDIS_PREFIX}${config.DISCORD_APPLICATION_ID}:`,
        maxConcurrency: info.session_start_limit.max_concurrency,
        onRedisDown: (err) =>
          logger.warn({ err }, 'Redis unreachable: identifies spaced by this process only'),
      });
    },
    async close() {
      const client = redis;
      redis = undefined;
      connected = undefined;
      if (client) await client.quit().catch(() => client.disconnect());
    },
  };
}
