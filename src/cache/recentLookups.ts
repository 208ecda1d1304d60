/**
 * Recently looked-up identities, per member and per server, for autocomplete. In memory (LRU-bounded)
 * by default; in Redis with REDIS_URL so every process sees the same lists (redisRecentLookups.ts).
 */
import type { LRUCache } from 'lru-cache';
import { growingLru } from './growingLru.ts';

/** One successful lookup to remember. */
export interface LookupToRemember {
  userId: string;
  /** The server it was made in; null in a DM or a private channel. */
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
  /** Servers whose list the member's public lookups were taken out of. */
  servers: number;
}

export interface RecentLookups {
  remember(lookup: LookupToRemember): Promise<void>;
  /** The member's own recent lookups, most recent first, without repeats. */
  ofUser(userId: string): Promise<string[]>;
  /** The server's recent public lookups, most recent first, without repeats. */
  ofGuild(guildId: string): Promise<string[]>;
  /**
   * Clear the member's own list, and take their public lookups out of the lists of the servers named in
   * it (lookups that already fell off the member's list stay in server lists until they age out).
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
 * A member's entry names the server its public copy went to ('' when none), so `forgetUser` can take it
 * out again; a server's entry names the member. Both are JSON so a shared store keeps them as strings.
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

/** The servers a member's entries sent a public copy to, with the copies to take out of each. */
export function publicCopies(userId: string, entries: readonly string[]): Map<string, string[]> {
  const byGuild = new Map<string, string[]>();
  for (const text of entries) {
    const entry = decodeEntry(text);
    if (!entry || entry[1] === '') continue;
    const copies = byGuild.get(entry[1]) ?? [];
    copies.push(encodeEntry([entry[0], userId]));
    byGuild.set(entry[1], copies);
  }
  return byGuild;
}

/** The entries `remember` writes: the member's, and the server's unless the lookup was private or in a DM. */
export function entriesOf(lookup: LookupToRemember): { user: string; guild: string | undefined } {
  const shared = lookup.guildId !== null && !lookup.private ? lookup.guildId : '';
  return {
    user: encodeEntry([lookup.identity, shared]),
    guild: shared === '' ? undefined : encodeEntry([lookup.identity, lookup.userId]),
  };
}

/** In this process's memory, bounded by `limits` (LRU over members and over servers). */
export class MemoryRecentLookups implements RecentLookups {
  readonly #limits: RecentLookupsLimits;
  readonly #users: LRUCache<string, string[]>;
  readonly #guilds: LRUCache<string, string[]>;

  constructor(limits: Partial<RecentLookupsLimits> = {}) {
    this.#limits = { ...DEFAULT_RECENT_LOOKUPS_LIMITS, ...limits };
    const ttl = this.#limits.ttlMs;
    this.#users = growingLru({ maxEntries: this.#limits.users, ttl });
    this.#guilds = growingLru({ maxEntries: this.#limits.guilds, ttl });
  }

  async remember(lookup: LookupToRemember): Promise<void> {
    const { user, guild } = entriesOf(lookup);
    pushFront(this.#users, lookup.userId, user, this.#limits.perUser);
    if (guild !== undefined && lookup.guildId !== null)
      pushFront(this.#guilds, lookup.guildId, guild, this.#limits.perGuild);
  }

  async ofUser(userId: string): Promise<string[]> {
    return identitiesOf(this.#users.get(userId) ?? []);
  }

  async ofGuild(guildId: string): Promise<string[]> {
    return identitiesOf(this.#guilds.get(guildId) ?? []);
  }

  async forgetUser(userId: string): Promise<ForgottenLookups> {
    const entries = this.#users.get(userId) ?? [];
    this.#users.delete(userId);
    const copies = publicCopies(userId, entries);
    for (const [guildId, remove] of copies) {
      const list = this.#guilds.get(guildId, { updateAgeOnGet: false });
      if (list)
        this.#guilds.set(
          guildId,
          list.filter((entry) => !remove.includes(entry)),
        );
    }
    return { lookups: identitiesOf(entries).length, servers: copies.size };
  }

  async close(): Promise<void> {
    this.#users.clear();
    this.#guilds.clear();
  }
}

/** Put `entry` first in `key`'s list (moving it if there), keeping at most `max`. */
function pushFront(lists: LRUCache<string, string[]>, key: string, entry: string, max: number): void {
  // Read as written: its age starts again. Already first (the same lookup again), nothing else changes.
  const list = lists.get(key, WRITTEN) ?? [];
  if (list[0] !== entry) lists.set(key, [entry, ...list.filter((e) => e !== entry)].slice(0, max));
}

const WRITTEN = { updateAgeOnGet: true } as const;
