/**
 * Recently looked-up identities, per member and per server, for autocomplete. In memory (LRU-bounded)
 * by default; in Redis with REDIS_URL so every process sees the same lists (redisRecentLookups.ts).
 */
import type { LRUCache } from 'lru-cache';
import { growingLru } from './growingLru.ts';

/** One successful lookup to remember. */
export interface LookupToRemember {
  userId: string;
  /**
   * The server it was made in, when that server installed the bot; null in a DM, a private channel, or a
   * server reached only through the member's own install (its other members are never offered it).
   */
  guildId: string | null;
  /** The normalised identity. */
  identity: string;
  /** Asked with `private:true`: kept in the member's own list only, never in the server's. */
  private: boolean;
}

/** What `forgetUser` cleared. */
export interface ForgottenLookups {
  /** Identities removed from the member's own list. */
  lookups: number;
  /** The member's public lookups taken out of server lists (suggested to the other members until then). */
  publicLookups: number;
  /** Servers whose list the member's public lookups were taken out of. */
  servers: number;
}

export const NOTHING_FORGOTTEN: ForgottenLookups = { lookups: 0, publicLookups: 0, servers: 0 };

export interface RecentLookups {
  remember(lookup: LookupToRemember): Promise<void>;
  /** The member's own recent lookups, most recent first, without repeats. */
  ofUser(userId: string): Promise<string[]>;
  /** The server's recent public lookups, most recent first, without repeats. */
  ofGuild(guildId: string): Promise<string[]>;
  /**
   * Clear the member's own list, and take every public lookup of theirs out of every server's list,
   * however long ago it fell off their own list.
   */
  forgetUser(userId: string): Promise<ForgottenLookups>;
  close(): Promise<void>;
}

export interface RecentLookupsLimits {
  /** Lookups kept per member. */
  perUser: number;
  /** Lookups kept per server. */
  perGuild: number;
  /** Members whose lists are kept (memory only: Redis lists expire instead). */
  users: number;
  /** Servers whose lists are kept (memory only). */
  guilds: number;
  /** A list not written for this long is dropped. */
  ttlMs: number;
}

export const DEFAULT_RECENT_LOOKUPS_LIMITS: RecentLookupsLimits = {
  perUser: 20,
  perGuild: 50,
  users: 50_000,
  guilds: 5_000,
  ttlMs: 30 * 86_400_000,
};

/**
 * A member's entry names the server its public copy went to ('' when none); a server's entry names the
 * member, so `forgetUser` can take out all of theirs. Both are JSON so a shared store keeps them as strings.
 */
export type UserEntry = [identity: string, guildId: string];
export type GuildEntry = [identity: string, userId: string];

export function encodeEntry(entry: UserEntry | GuildEntry): string {
  return JSON.stringify(entry);
}

/** The entry, or undefined for anything that is not two strings (a shared store may hold junk). */
export function decodeEntry(text: string): [string, string] | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      typeof value[1] === 'string'
      ? [value[0], value[1]]
      : undefined;
  } catch {
    return undefined;
  }
}

/** The identities of encoded entries, in order, first occurrence kept. */
export function identitiesOf(entries: readonly string[]): string[] {
  const seen = new Set<string>();
  for (const text of entries) {
    const entry = decodeEntry(text);
    if (entry) seen.add(entry[0]);
  }
  return [...seen];
}

/** The servers a member's own entries sent a public copy to. */
export function guildsNamed(entries: readonly string[]): Set<string> {
  const guilds = new Set<string>();
  for (const text of entries) {
    const guildId = decodeEntry(text)?.[1];
    if (guildId) guilds.add(guildId);
  }
  return guilds;
}

/** The member a server's entry names, or undefined for junk. */
export function memberOf(guildEntry: string): string | undefined {
  return decodeEntry(guildEntry)?.[1];
}

/** The entries `remember` writes: the member's, and the server's unless the lookup was private or in a DM. */
export function entriesOf(lookup: LookupToRemember): { user: string; guild: string | undefined } {
  const shared = lookup.guildId !== null && !lookup.private ? lookup.guildId : '';
  return {
    user: encodeEntry([lookup.identity, shared]),
    guild: shared === '' ? undefined : encodeEntry([lookup.identity, lookup.userId]),
  };
}

/**
 * In this process's memory, bounded by `limits` (LRU over members and over servers). Beside the lists, an
 * index of the servers whose lists hold each member's public lookups, kept in step with those lists (a
 * write, a trim, an eviction or an expiry updates it), so `forgetUser` finds every copy and the index
 * never holds more than the lists do.
 */
export class MemoryRecentLookups implements RecentLookups {
  readonly #limits: RecentLookupsLimits;
  readonly #users: LRUCache<string, string[]>;
  readonly #guilds: LRUCache<string, string[]>;
  /** Member -> the servers whose lists hold at least one public lookup of theirs. */
  readonly #sharedTo = new Map<string, Set<string>>();

  constructor(limits: Partial<RecentLookupsLimits> = {}) {
    this.#limits = { ...DEFAULT_RECENT_LOOKUPS_LIMITS, ...limits };
    const ttl = this.#limits.ttlMs;
    this.#users = growingLru({ maxEntries: this.#limits.users, ttl });
    this.#guilds = growingLru({
      maxEntries: this.#limits.guilds,
      ttl,
      // A list replaced by `set` is accounted for by the writer; one evicted, expired or deleted is gone.
      noDisposeOnSet: true,
      dispose: (list, guildId) => this.#untrack(guildId, list, []),
    });
  }

  async remember(lookup: LookupToRemember): Promise<void> {
    const { user, guild } = entriesOf(lookup);
    pushFront(this.#users, lookup.userId, user, this.#limits.perUser);
    if (guild === undefined || lookup.guildId === null) return;
    const dropped = pushFront(this.#guilds, lookup.guildId, guild, this.#limits.perGuild);
    const servers = this.#sharedTo.get(lookup.userId) ?? new Set<string>();
    servers.add(lookup.guildId);
    this.#sharedTo.set(lookup.userId, servers);
    this.#untrack(lookup.guildId, dropped, this.#guilds.peek(lookup.guildId) ?? []);
  }

  async ofUser(userId: string): Promise<string[]> {
    return identitiesOf(this.#users.get(userId) ?? []);
  }

  async ofGuild(guildId: string): Promise<string[]> {
    return identitiesOf(this.#guilds.get(guildId) ?? []);
  }

  async forgetUser(userId: string): Promise<ForgottenLookups> {
    const own = this.#users.get(userId) ?? [];
    this.#users.delete(userId);
    let publicLookups = 0;
    let servers = 0;
    for (const guildId of [...(this.#sharedTo.get(userId) ?? [])]) {
      const list = this.#guilds.get(guildId, { updateAgeOnGet: false }) ?? [];
      const kept = list.filter((entry) => memberOf(entry) !== userId);
      if (kept.length === list.length) continue;
      publicLookups += list.length - kept.length;
      servers += 1;
      if (kept.length === 0) this.#guilds.delete(guildId);
      else this.#guilds.set(guildId, kept, { noUpdateTTL: true });
    }
    this.#sharedTo.delete(userId);
    return { lookups: identitiesOf(own).length, publicLookups, servers };
  }

  async close(): Promise<void> {
    this.#users.clear();
    this.#guilds.clear();
    this.#sharedTo.clear();
  }

  /** `removed` left the server's list: their members no longer have a copy there unless `kept` has one. */
  #untrack(guildId: string, removed: readonly string[], kept: readonly string[]): void {
    if (removed.length === 0) return;
    const still = new Set(kept.map(memberOf));
    for (const entry of removed) {
      const userId = memberOf(entry);
      if (userId === undefined || still.has(userId)) continue;
      const servers = this.#sharedTo.get(userId);
      servers?.delete(guildId);
      if (servers?.size === 0) this.#sharedTo.delete(userId);
    }
  }
}

/**
 * Put `entry` first in `key`'s list (moving it if there), keeping at most `max`; returns the entries the
 * cap pushed out.
 */
function pushFront(lists: LRUCache<string, string[]>, key: string, entry: string, max: number): string[] {
  // Read as written: its age starts again. Already first (the same lookup again), nothing else changes.
  const list = lists.get(key, WRITTEN) ?? [];
  if (list[0] === entry) return [];
  const moved = [entry, ...list.filter((e) => e !== entry)];
  lists.set(key, moved.slice(0, max));
  return moved.slice(max);
}

const WRITTEN = { updateAgeOnGet: true } as const;
