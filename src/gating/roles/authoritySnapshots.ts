/**
 * Each server's owner and roles (and, for the owners' dashboard, its name, icon and text channels), kept in
 * the shared store for the processes without the gateway cache: web replicas (INTERACTIONS=http,
 * PROCESS_ROLE=web), which must decide some things themselves (suggestions cannot be handed to the
 * gateway worker), and whichever process serves the dashboard (a snapshot there means the bot is in the
 * server). The gateway process writes a snapshot of every server it serves once ready, and again after
 * guild, role and channel events (gathered per server for `debounceMs`, so a burst of role edits is one
 * write); it forgets a server the bot left, and at start the servers of its shards it no longer has (left
 * while no process watched). A replica with no snapshot decides nothing (authority.ts): the safe side.
 * A write the store refused is tried again (WRITE_ATTEMPTS in all, the wait doubling from `retryMs`),
 * unless a newer write or delete of that server came after it.
 */
import { ChannelType, type Client, type ClientEvents, Events, type Guild } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, StoredGuildChannel, StoredGuildRole } from '../../store/types.ts';
import { servesGuild } from './discordReads.ts';

/** How long a server's events are gathered before its snapshot is written. */
export const AUTHORITY_WRITE_DEBOUNCE_MS = 1_000;
/** Tries of one server's write (or delete) before it waits for the server's next event. */
export const WRITE_ATTEMPTS = 5;

export interface AuthoritySnapshotsOptions {
  discord: Client;
  store: Pick<GatingStore, 'saveGuildAuthority' | 'deleteGuildAuthority' | 'listGuildAuthorityIds'>;
  logger: Logger;
  debounceMs?: number;
  /** The first wait before a failed write is tried again, doubled each time. Default 1 s. */
  retryMs?: number;
}

/** Writes the servers' authority snapshots while started. */
export class AuthoritySnapshots {
  readonly #o: AuthoritySnapshotsOptions & { debounceMs: number; retryMs: number };
  /** Servers with a write waiting for its timer. */
  readonly #pending = new Map<string, NodeJS.Timeout>();
  /** Each server's last write (or delete), so one server's writes land in order. */
  readonly #writes = new Map<string, Promise<void>>();
  /** Each server's latest write (or delete) asked for: only that one is tried again. */
  readonly #latest = new Map<string, symbol>();
  readonly #retries = new Set<NodeJS.Timeout>();
  #unlisten: (() => void) | null = null;

  constructor(options: AuthoritySnapshotsOptions) {
    this.#o = { debounceMs: AUTHORITY_WRITE_DEBOUNCE_MS, retryMs: 1_000, ...options };
  }

  /** Listen to guild and role events, and write every server the client has now (one after another). */
  start(): void {
    if (this.#unlisten) return;
    const { discord } = this.#o;
    const offs: (() => void)[] = [];
    const on = <E extends keyof ClientEvents>(event: E, listener: (...args: ClientEvents[E]) => void) => {
      discord.on(event, listener);
      offs.push(() => discord.off(event, listener));
    };
    on(Events.GuildCreate, (guild) => this.#schedule(guild.id));
    on(Events.GuildAvailable, (guild) => this.#schedule(guild.id));
    on(Events.GuildUpdate, (_old, guild) => this.#schedule(guild.id));
    on(Events.GuildRoleCreate, (role) => this.#schedule(role.guild.id));
    on(Events.GuildRoleUpdate, (_old, role) => this.#schedule(role.guild.id));
    on(Events.GuildRoleDelete, (role) => this.#schedule(role.guild.id));
    on(Events.ChannelCreate, (channel) => this.#schedule(channel.guild.id));
    on(Events.ChannelUpdate, (_old, channel) => {
      if ('guild' in channel) this.#schedule(channel.guild.id);
    });
    on(Events.ChannelDelete, (channel) => {
      if ('guild' in channel) this.#schedule(channel.guild.id);
    });
    on(Events.GuildDelete, (guild) => this.#forget(guild.id));
    this.#unlisten = () => {
      for (const off of offs) off();
    };
    void this.#writeAll([...discord.guilds.cache.keys()]).then(() => this.#forgetLeft());
  }

  /** Stop listening; writes waiting for their timer are dropped (the next start writes every server). */
  async stop(): Promise<void> {
    this.#unlisten?.();
    this.#unlisten = null;
    for (const timer of [...this.#pending.values(), ...this.#retries]) clearTimeout(timer);
    this.#pending.clear();
    this.#retries.clear();
    await this.idle();
  }

  /** Resolves once every write begun so far has landed (or failed). */
  async idle(): Promise<void> {
    while (this.#writes.size > 0) await Promise.allSettled([...this.#writes.values()]);
  }

  async #writeAll(guildIds: readonly string[]): Promise<void> {
    for (const guildId of guildIds) {
      if (!this.#unlisten) return;
      await this.#enqueue(guildId, () => this.#write(guildId));
    }
  }

  #schedule(guildId: string): void {
    if (!this.#unlisten || this.#pending.has(guildId)) return;
    const timer = setTimeout(() => {
      this.#pending.delete(guildId);
      void this.#enqueue(guildId, () => this.#write(guildId));
    }, this.#o.debounceMs);
    timer.unref();
    this.#pending.set(guildId, timer);
  }

  #forget(guildId: string): void {
    clearTimeout(this.#pending.get(guildId));
    this.#pending.delete(guildId);
    void this.#enqueue(guildId, async () => {
      await this.#o.store.deleteGuildAuthority(guildId);
    });
  }

  /**
   * Runs `work` after the server's previous write; never rejects: a failure is logged and tried again
   * later, unless newer work for the server was asked for meanwhile (it writes what is current).
   */
  #enqueue(guildId: string, work: () => Promise<void>, attempt = 1): Promise<void> {
    const mark = Symbol(guildId);
    this.#latest.set(guildId, mark);
    const previous = this.#writes.get(guildId) ?? Promise.resolve();
    const next = previous.then(work).then(
      () => {
        if (this.#latest.get(guildId) === mark) this.#latest.delete(guildId);
      },
      (error: unknown) => {
        this.#o.logger.warn(
          { err: error, guildId, attempt },
          'could not store the server’s roles for the web replicas',
        );
        this.#retry(guildId, work, attempt, mark);
      },
    );
    this.#writes.set(guildId, next);
    void next.finally(() => {
      if (this.#writes.get(guildId) === next) this.#writes.delete(guildId);
    });
    return next;
  }

  #retry(guildId: string, work: () => Promise<void>, attempt: number, mark: symbol): void {
    if (!this.#unlisten || attempt >= WRITE_ATTEMPTS) return;
    const timer = setTimeout(
      () => {
        this.#retries.delete(timer);
        if (this.#unlisten && this.#latest.get(guildId) === mark)
          void this.#enqueue(guildId, work, attempt + 1);
      },
      this.#o.retryMs * 2 ** (attempt - 1),
    );
    timer.unref();
    this.#retries.add(timer);
  }

  /** Forgets the stored servers of this process's shards that the client no longer has. */
  async #forgetLeft(): Promise<void> {
    const { discord, store } = this.#o;
    try {
      for (const guildId of await store.listGuildAuthorityIds()) {
        if (!this.#unlisten) return;
        if (servesGuild(discord, guildId) && !discord.guilds.cache.has(guildId)) this.#forget(guildId);
      }
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'could not look for servers the bot left');
    }
  }

  /** The server as the client has it now (it left: nothing to write). */
  async #write(guildId: string): Promise<void> {
    const guild = this.#o.discord.guilds.cache.get(guildId);
    if (!guild?.available) return;
    await this.#o.store.saveGuildAuthority(snapshotOf(guild));
  }
}

/** What the store keeps of a server: its owner, roles, name, icon and text channels, as cached. */
function snapshotOf(guild: Guild): {
  guildId: string;
  ownerId: string;
  roles: StoredGuildRole[];
  name: string;
  icon: string | null;
  channels: StoredGuildChannel[];
} {
  const roles: StoredGuildRole[] = [...guild.roles.cache.values()].map((role) => ({
    id: role.id,
    name: role.name,
    position: role.position,
    permissions: role.permissions.bitfield,
    managed: role.managed,
  }));
  const channels: StoredGuildChannel[] = [...guild.channels.cache.values()]
    .filter((c) => c.type === ChannelType.GuildText || c.type === ChannelType.GuildAnnouncement)
    .map((c) => ({ id: c.id, name: c.name }));
  return { guildId: guild.id, ownerId: guild.ownerId, roles, name: guild.name, icon: guild.icon, channels };
}
