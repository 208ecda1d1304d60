import type { Redis } from 'ioredis';
import {
  DEFAULT_RECENT_LOOKUPS_LIMITS,
  entriesOf,
  type ForgottenLookups,
  identitiesOf,
  type LookupToRemember,
  publicCopies,
  type RecentLookups,
  type RecentLookupsLimits,
} from './recentLookups.ts';
import { closeRedisClient, createRedisClient, DEFAULT_REDIS_PREFIX } from './redisStore.ts';

export interface RedisRecentLookupsOptions {
  /** Used when no `client` is given (a client that never waits on a dead Redis: createRedisClient). */
  url?: string;
  /** An existing client; not closed by `close`. */
  client?: Redis;
  /** Prepended to every key. Default `web3bio:`. */
  prefix?: string;
  limits?: Partial<Pick<RecentLookupsLimits, 'perUser' | 'perGuild' | 'ttlMs'>>;
}

/**
 * The lists in Redis, shared by every process: `{prefix}recent:user:{id}` and `{prefix}recent:guild:{id}`,
 * each capped with LTRIM and expiring `ttlMs` after its last write. Errors reach the caller, which
 * decides (autocomplete answers without the lists; a lookup is answered anyway).
 */
export class RedisRecentLookups implements RecentLookups {
  readonly #client: Redis;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #limits: Pick<RecentLookupsLimits, 'perUser' | 'perGuild' | 'ttlMs'>;

  constructor(options: RedisRecentLookupsOptions) {
    this.#client = options.client ?? createRedisClient(options.url);
    this.#ownsClient = options.client === undefined;
    this.#prefix = `${options.prefix ?? DEFAULT_REDIS_PREFIX}recent:`;
    this.#limits = { ...DEFAULT_RECENT_LOOKUPS_LIMITS, ...options.limits };
  }

  async remember(lookup: LookupToRemember): Promise<void> {
    const { user, guild } = entriesOf(lookup);
    const multi = this.#client.multi();
    this.#pushFront(multi, this.#userKey(lookup.userId), user, this.#limits.perUser);
    if (guild !== undefined && lookup.guildId !== null)
      this.#pushFront(multi, this.#guildKey(lookup.guildId), guild, this.#limits.perGuild);
    await multi.exec();
  }

  async ofUser(userId: string): Promise<string[]> {
    return identitiesOf(await this.#client.lrange(this.#userKey(userId), 0, this.#limits.perUser - 1));
  }

  async ofGuild(guildId: string): Promise<string[]> {
    return identitiesOf(await this.#client.lrange(this.#guildKey(guildId), 0, this.#limits.perGuild - 1));
  }

  async forgetUser(userId: string): Promise<ForgottenLookups> {
    const key = this.#userKey(userId);
    const [[, read] = [], [, deleted] = []] =
      (await this.#client.multi().lrange(key, 0, -1).del(key).exec()) ?? [];
    const entries = Array.isArray(read) ? (read as string[]) : [];
    const copies = publicCopies(userId, entries);
    if (copies.size > 0) {
      const multi = this.#client.multi();
      for (const [guildId, remove] of copies) {
        for (const entry of remove) multi.lrem(this.#guildKey(guildId), 0, entry);
      }
      await multi.exec();
    }
    return { lookups: deleted === 0 ? 0 : identitiesOf(entries).length, servers: copies.size };
  }

  async close(): Promise<void> {
    if (this.#ownsClient) await closeRedisClient(this.#client);
  }

  #pushFront(multi: ReturnType<Redis['multi']>, key: string, entry: string, max: number): void {
    multi
      .lrem(key, 0, entry)
      .lpush(key, entry)
      .ltrim(key, 0, max - 1)
      .pexpire(key, this.#limits.ttlMs);
  }

  #userKey(userId: string): string {
    return `${this.#prefix}user:${userId}`;
  }

  #guildKey(guildId: string): string {
    return `${this.#prefix}guild:${guildId}`;
  }
}
