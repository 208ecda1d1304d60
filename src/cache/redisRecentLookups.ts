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

/**
 * Puts an entry first in each list (moving it if there), keeps each at most its length, and renews each
 * list's TTL, in one round trip. KEYS: the member's list, then the server's (for a public lookup in a
 * server). ARGV: the TTL (ms), then for each key its entry and its length.
 */
const REMEMBER_SCRIPT = `
for i, key in ipairs(KEYS) do
  local entry = ARGV[2 * i]
  redis.call('LREM', key, 0, entry)
  redis.call('LPUSH', key, entry)
  redis.call('LTRIM', key, 0, tonumber(ARGV[2 * i + 1]) - 1)
  redis.call('PEXPIRE', key, ARGV[1])
end
return #KEYS`;

interface RememberCommand {
  recentLookupsRemember(keyCount: number, ...keysAndArgs: (string | number)[]): Promise<number>;
}

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
  readonly #client: Redis & RememberCommand;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #limits: Pick<RecentLookupsLimits, 'perUser' | 'perGuild' | 'ttlMs'>;

  constructor(options: RedisRecentLookupsOptions) {
    const client = (options.client ?? createRedisClient(options.url)) as Redis & Partial<RememberCommand>;
    if (client.recentLookupsRemember === undefined)
      client.defineCommand('recentLookupsRemember', { lua: REMEMBER_SCRIPT });
    this.#client = client as Redis & RememberCommand;
    this.#ownsClient = options.client === undefined;
    this.#prefix = `${options.prefix ?? DEFAULT_REDIS_PREFIX}recent:`;
    this.#limits = { ...DEFAULT_RECENT_LOOKUPS_LIMITS, ...options.limits };
  }

  /**
   * One script call rather than a MULTI of eight commands: with REDIS_URL every lookup pays this, and the
   * MULTI cost a web replica about 70 µs of CPU per /whois and grew its heap by tens of MiB under load
   * (npm run bench -- --only http).
   */
  async remember(lookup: LookupToRemember): Promise<void> {
    const { user, guild } = entriesOf(lookup);
    const { perUser, perGuild, ttlMs } = this.#limits;
    const userKey = this.#userKey(lookup.userId);
    if (guild !== undefined && lookup.guildId !== null)
      await this.#client.recentLookupsRemember(
        2,
        userKey,
        this.#guildKey(lookup.guildId),
        ttlMs,
        user,
        perUser,
        guild,
        perGuild,
      );
    else await this.#client.recentLookupsRemember(1, userKey, ttlMs, user, perUser);
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

  #userKey(userId: string): string {
    return `${this.#prefix}user:${userId}`;
  }

  #guildKey(guildId: string): string {
    return `${this.#prefix}guild:${guildId}`;
  }
}
