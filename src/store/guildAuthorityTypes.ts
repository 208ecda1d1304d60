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
}

export interface StoredGuildAuthority {
  guildId: string;
  ownerId: string;
  roles: StoredGuildRole[];
  /** When the gateway side wrote it (ms). */
  updatedAt: number;
}

export interface GuildAuthorityStore {
  /** Replace a server's snapshot (the gateway side, on guild and role events). */
  saveGuildAuthority(snapshot: Omit<StoredGuildAuthority, 'updatedAt'>): Promise<void>;
  /** The server's snapshot; undefined when none was written (or it cannot be read: decide nothing on it). */
  getGuildAuthority(guildId: string): Promise<StoredGuildAuthority | undefined>;
  /** Forget a server's snapshot (the bot left it); false when there was none. */
  deleteGuildAuthority(guildId: string): Promise<boolean>;
}
