/**
 * Each server's owner and roles as the gateway side last saw them (`guild_authority`, migration 15). A web
 * replica has no gateway cache: what it must decide itself (suggestions, which cannot be handed to the
 * gateway worker) it decides from this snapshot and the member's role ids in the interaction.
 */

/** A role as the rights need it: its permissions are Discord's bitfield. */
export interface StoredGuildRole {
  id: string;
  name: string;
  position: number;
  permissions: bigint;
  /** Managed by an integration (a bot's own role, a booster role): nobody can hand it out. */
  managed?: boolean;
}

/** A text channel as the dashboard names it (the log channel, the verify panels). */
export interface StoredGuildChannel {
  id: string;
  name: string;
}

export interface StoredGuildAuthority {
  guildId: string;
  ownerId: string;
  roles: StoredGuildRole[];
  /** The server's name and icon hash (the dashboard's list); null in snapshots from before migration 17. */
  name?: string | null;
  icon?: string | null;
  /** Its text channels, for names; empty in snapshots from before migration 17. */
  channels?: StoredGuildChannel[];
  /** When the gateway side wrote it (ms). */
  updatedAt: number;
}

/** A server as the dashboard's list shows it. */
export interface GuildListing {
  guildId: string;
  name: string | null;
  icon: string | null;
}

export interface GuildAuthorityStore {
  /** Replace a server's snapshot (the gateway side, on guild and role events). */
  saveGuildAuthority(snapshot: Omit<StoredGuildAuthority, 'updatedAt'>): Promise<void>;
  /** The server's snapshot; undefined when none was written (or it cannot be read: decide nothing on it). */
  getGuildAuthority(guildId: string): Promise<StoredGuildAuthority | undefined>;
  /** Forget a server's snapshot (the bot left it); false when there was none. */
  deleteGuildAuthority(guildId: string): Promise<boolean>;
  /** Of `guildIds`, the servers with a snapshot (the bot is in them), by name. */
  listGuildAuthorities(guildIds: readonly string[]): Promise<GuildListing[]>;
  /** Every server with a snapshot (for forgetting the ones the bot left while no process watched). */
  listGuildAuthorityIds(): Promise<string[]>;
}
