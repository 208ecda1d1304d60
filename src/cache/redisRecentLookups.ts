import type { Redis } from 'ioredis';
import {
  DEFAULT_RECENT_LOOKUPS_LIMITS,
  entriesOf,
  type ForgottenLookups,
  guildsNamed,
  identitiesOf,
  type LookupToRemember,
  type RecentLookups,
  type RecentLookupsLimits,
} from './recentLookups.ts';
import { closeRedisClient, createRedisClient, DEFAULT_REDIS_PREFIX } from './redisStore.ts';

/**
 * Remembers a batch of lookups in one round trip (a script runs alone in Redis). ARGV[1] is every key's
 * TTL (ms); then, per lookup in order, how many of its keys come next in KEYS (1 or 3), the member's
 * entry and list length, and for a public lookup in a server (3 keys) the server's entry, its list length,
 * the entry's score (now) and the oldest score kept, and the server's id. Per lookup, KEYS are the
 * member's list (the entry first, moved if there), then the server's sorted set and the member's set of
 * servers.
 */
const REMEMBER_SCRIPT = `
local a, k = 2, 1
while a <= #ARGV do
  local n = tonumber(ARGV[a])
  redis.call('LREM', KEYS[k], 0, ARGV[a + 1])
  redis.call('LPUSH', KEYS[k], ARGV[a + 1])
  redis.call('LTRIM', KEYS[k], 0, tonumber(ARGV[a + 2]) - 1)
  redis.call('PEXPIRE', KEYS[k], ARGV[1])
  if n == 3 then
    redis.call('ZADD', KEYS[k + 1], ARGV[a + 5], ARGV[a + 3])
    redis.call('ZREMRANGEBYSCORE', KEYS[k + 1], '-inf', '(' .. ARGV[a + 6])
    redis.call('ZREMRANGEBYRANK', KEYS[k + 1], 0, -tonumber(ARGV[a + 4]) - 1)
    redis.call('PEXPIRE', KEYS[k + 1], ARGV[1])
    redis.call('SADD', KEYS[k + 2], ARGV[a + 7])
    redis.call('PEXPIRE', KEYS[k + 2], ARGV[1])
    a = a + 8
  else
    a = a + 3
  end
  k = k + n
end
return k - 1`;

/**
 * How long a lookup waits for others to be written with it. Interactions arrive one per turn of the event
 * loop even under load, so a turn gathers one; a few milliseconds gather dozens at thousands a second,
 * and suggestions show a lookup that much later.
 */
const BATCH_WINDOW_MS = 10;

/** One lookup's part of a batch: its keys and its arguments (see REMEMBER_SCRIPT). */
interface BatchedLookup {
  keys: string[];
  args: (string | number)[];
  /** The same lookup again in one batch is written once (the last). */
  sameAs: string;
}

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
  /** The clock the server lists' entries are stamped with (tests move it). Default Date.now. */
  now?: () => number;
}

/**
 * One transaction (a script runs alone in Redis): the member's own list is read and deleted, and every
 * entry naming the member is removed from each server's list. KEYS: the member's list, the member's set of
 * servers, then each server's list; ARGV: the member, the oldest score still suggested, then each server's
 * id (ARGV[i] is the server of KEYS[i]). Returns the member's entries, how many of the removed entries
 * were still suggested, and from how many servers.
 */
const FORGET_SCRIPT = `
local own = redis.call('LRANGE', KEYS[1], 0, -1)
redis.call('DEL', KEYS[1])
local suggested, servers = 0, 0
for i = 3, #KEYS do
  local found = false
  local entries = redis.call('ZRANGE', KEYS[i], 0, -1, 'WITHSCORES')
  for j = 1, #entries, 2 do
    local ok, value = pcall(cjson.decode, entries[j])
    if ok and type(value) == 'table' and value[2] == ARGV[1] then
      redis.call('ZREM', KEYS[i], entries[j])
      if tonumber(entries[j + 1]) >= tonumber(ARGV[2]) then
        suggested = suggested + 1
        found = true
      end
    end
  end
  if found then servers = servers + 1 end
  redis.call('SREM', KEYS[2], ARGV[i])
end
return {own, suggested, servers}
`;

/**
 * The lists in Redis, shared by every process. A member's own list is `{prefix}recent:user:{id}` (capped
 * with LTRIM). A server's list is the sorted set `{prefix}recent:guild-lookups:{id}`, scored by when each
 * entry was written: capped to the most recent `perGuild`, and an entry older than `ttlMs` is no longer
 * suggested, even while newer lookups keep the set alive. `{prefix}recent:user-guilds:{id}` names every
 * server a member's public lookups went to, and outlives every one of them that is still suggested (its
 * expiry is pushed back at each such lookup), so `forgetUser` reaches them all. Every key expires `ttlMs`
 * after its last write. Errors reach the caller, which decides (autocomplete answers without the lists; a
 * lookup is answered anyway; /forget-lookups answers with an error).
 */
export class RedisRecentLookups implements RecentLookups {
  readonly #client: Redis & RememberCommand;
  readonly #ownsClient: boolean;
  readonly #prefix: string;
  readonly #limits: Pick<RecentLookupsLimits, 'perUser' | 'perGuild' | 'ttlMs'>;
  readonly #now: () => number;
  #lastStamp = 0;
  /** The lookups waiting to be written together. */
  #batch: { lookups: BatchedLookup[]; written: Promise<void> } | null = null;

  constructor(options: RedisRecentLookupsOptions) {
    const client = (options.client ?? createRedisClient(options.url)) as Redis & Partial<RememberCommand>;
    if (client.recentLookupsRemember === undefined)
      client.defineCommand('recentLookupsRemember', { lua: REMEMBER_SCRIPT });
    this.#client = client as Redis & RememberCommand;
    this.#ownsClient = options.client === undefined;
    this.#prefix = `${options.prefix ?? DEFAULT_REDIS_PREFIX}recent:`;
    this.#limits = { ...DEFAULT_RECENT_LOOKUPS_LIMITS, ...options.limits };
    this.#now = options.now ?? Date.now;
  }

  /**
   * Lookups remembered within BATCH_WINDOW_MS of each other are written together, in one script call:
   * with REDIS_URL every lookup pays this, and a round trip each cost a web replica tens of µs of CPU per
   * /whois under load (npm run bench -- --only http). Resolves once the batch is written.
   */
  remember(lookup: LookupToRemember): Promise<void> {
    let batch = this.#batch;
    if (!batch) {
      const lookups: BatchedLookup[] = [];
      const written = new Promise<void>((resolve) => setTimeout(resolve, BATCH_WINDOW_MS)).then(() => {
        if (this.#batch?.lookups === lookups) this.#batch = null;
        return this.#write(lookups);
      });
      batch = { lookups, written };
      this.#batch = batch;
    }
    batch.lookups.push(this.#batched(lookup));
    return batch.written;
  }

  /** A lookup's keys and arguments, stamped now. */
  #batched(lookup: LookupToRemember): BatchedLookup {
    const { user, guild } = entriesOf(lookup);
    const { perUser, perGuild, ttlMs } = this.#limits;
    const userKey = this.#userKey(lookup.userId);
    if (guild === undefined || lookup.guildId === null)
      return { keys: [userKey], args: [1, user, perUser], sameAs: `${userKey}\n${user}` };
    const now = this.#stamp();
    return {
      keys: [userKey, this.#guildKey(lookup.guildId), this.#sharedKey(lookup.userId)],
      args: [3, user, perUser, guild, perGuild, now, now - ttlMs, lookup.guildId],
      sameAs: `${userKey}\n${user}\n${guild}`,
    };
  }

  async #write(lookups: readonly BatchedLookup[]): Promise<void> {
    // The same lookup twice is written once, at its last place: the lists end as if each had been written.
    const seen = new Set<string>();
    const last: BatchedLookup[] = [];
    for (let i = lookups.length - 1; i >= 0; i -= 1) {
      const lookup = lookups[i] as BatchedLookup;
      if (seen.has(lookup.sameAs)) continue;
      seen.add(lookup.sameAs);
      last.push(lookup);
    }
    last.reverse();
    const keys = last.flatMap((l) => l.keys);
    await this.#client.recentLookupsRemember(
      keys.length,
      ...keys,
      this.#limits.ttlMs,
      ...last.flatMap((l) => l.args),
    );
  }

  async ofUser(userId: string): Promise<string[]> {
    return identitiesOf(await this.#client.lrange(this.#userKey(userId), 0, this.#limits.perUser - 1));
  }

  async ofGuild(guildId: string): Promise<string[]> {
    const oldest = this.#now() - this.#limits.ttlMs;
    const entries = await this.#client.zrange(
      this.#guildKey(guildId),
      '+inf',
      String(oldest),
      'BYSCORE',
      'REV',
      'LIMIT',
      0,
      this.#limits.perGuild,
    );
    return identitiesOf(entries);
  }

  async forgetUser(userId: string): Promise<ForgottenLookups> {
    // Lookups of this process still waiting to be written go first, so none comes back after the forget.
    await this.#batch?.written.catch(() => undefined);
    const userKey = this.#userKey(userId);
    const sharedKey = this.#sharedKey(userId);
    const [[, members] = [], [, own] = []] =
      (await this.#client.multi().smembers(sharedKey).lrange(userKey, 0, -1).exec()) ?? [];
    // The member's own entries name servers too (lists written before the set existed).
    const guilds = [
      ...new Set([...(Array.isArray(members) ? (members as string[]) : []), ...guildsNamed(strings(own))]),
    ];
    const keys = [userKey, sharedKey, ...guilds.map((id) => this.#guildKey(id))];
    const oldest = this.#now() - this.#limits.ttlMs;
    const [entries, publicLookups, servers] = (await this.#client.eval(
      FORGET_SCRIPT,
      keys.length,
      ...keys,
      userId,
      oldest,
      ...guilds,
    )) as [string[], number, number];
    return { lookups: identitiesOf(entries).length, publicLookups, servers };
  }

  async close(): Promise<void> {
    await this.#batch?.written.catch(() => undefined);
    if (this.#ownsClient) await closeRedisClient(this.#client);
  }

  /** Now, and later than any earlier stamp of this process, so two lookups in one millisecond keep their order. */
  #stamp(): number {
    this.#lastStamp = Math.max(this.#now(), this.#lastStamp + 1);
    return this.#lastStamp;
  }

  #userKey(userId: string): string {
    return `${this.#prefix}user:${userId}`;
  }

  #sharedKey(userId: string): string {
    return `${this.#prefix}user-guilds:${userId}`;
  }

  #guildKey(guildId: string): string {
    return `${this.#prefix}guild-lookups:${guildId}`;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
