/**
 * The gating module's reads of Discord through discord.js: guilds and members (cache first, then one
 * request), the member list for a guild walk, the role facts the hierarchy checks need, and the Discord
 * error codes gating acts on.
 */
import {
  type Client,
  DiscordAPIError,
  GatewayIntentBits,
  type Guild,
  type GuildMember,
  PermissionFlagsBits,
  ShardClientUtil,
} from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { RoleChange } from '../../store/types.ts';
import type { RequestLimiter } from '../../web3bio/rateLimiter.ts';
import type { MemberState } from '../rules/evaluation.ts';
import { handOutRights } from './authority.ts';
import { guildAuthorityOf, memberRolesOf } from './authorityReads.ts';
import { type InvokerRights, type RoleInfo, type RoleProblem, roleProblems } from './hierarchy.ts';

/** @see https://discord.com/developers/docs/topics/opcodes-and-status-codes#json-json-error-codes */
export const DISCORD_ERROR = {
  unknownMember: 10_007,
  unknownRole: 10_011,
  unknownAccess: 50_001,
  missingPermissions: 50_013,
} as const;

/** The Discord JSON error code of a REST error, or null. */
export function discordErrorCode(error: unknown): number | null {
  return error instanceof DiscordAPIError ? Number(error.code) : null;
}

/**
 * Whether this process's shards serve the guild (`(guild_id >> 22) % shardCount` is one of them). Always
 * true for a client that runs every shard (one process, the default).
 */
export function servesGuild(discord: Client, guildId: string): boolean {
  const { shards, shardCount } = discord.options;
  if (!Array.isArray(shards) || shardCount === undefined || shards.length >= shardCount) return true;
  try {
    return shards.includes(ShardClientUtil.shardIdForGuildId(guildId, shardCount));
  } catch {
    return false;
  }
}

/** The shards this client serves, for a store query's shard filter; null when it serves every guild. */
export function shardFilterOf(discord: Client): { ids: number[]; count: number } | null {
  const { shards, shardCount } = discord.options;
  if (!Array.isArray(shards) || shardCount === undefined || shards.length >= shardCount) return null;
  return { ids: [...shards], count: shardCount };
}

/** The guild from the gateway cache, else one request; null when the bot is not in it. */
export async function guildOf(discord: Client, guildId: string): Promise<Guild | null> {
  const cached = discord.guilds.cache.get(guildId);
  if (cached) return cached;
  try {
    return await discord.guilds.fetch(guildId);
  } catch {
    return null;
  }
}

/** The member from the cache, else one request; null when they are not in the guild. */
export async function memberOf(guild: Guild, userId: string): Promise<GuildMember | null> {
  const cached = guild.members.cache.get(userId);
  if (cached) return cached;
  try {
    return await guild.members.fetch(userId);
  } catch (error) {
    if (
      error instanceof DiscordAPIError &&
      (error.status === 404 || Number(error.code) === DISCORD_ERROR.unknownMember)
    )
      return null;
    throw error;
  }
}

/** Whether the client asked for the GuildMembers intent (member lists, joins, member updates). */
export function hasMembersIntent(discord: Client): boolean {
  return discord.options.intents.has(GatewayIntentBits.GuildMembers);
}

/**
 * A guild's member list as Discord answered it (see loadMembers), for one walk. The walk reads members
 * from here, not from `guild.members.cache`, which keeps only the bot itself (see clientCaches.ts).
 */
export class MemberRoster {
  readonly #members: ReadonlyMap<string, GuildMember>;
  readonly #holders = new Map<string, number>();

  constructor(members: ReadonlyMap<string, GuildMember>) {
    this.#members = members;
  }

  get size(): number {
    return this.#members.size;
  }

  get(userId: string): GuildMember | null {
    return this.#members.get(userId) ?? null;
  }

  /** How many members hold the role (counted once per role). */
  holders(roleId: string): number {
    let count = this.#holders.get(roleId);
    if (count === undefined) {
      count = 0;
      for (const member of this.#members.values()) if (member.roles.cache.has(roleId)) count += 1;
      this.#holders.set(roleId, count);
    }
    return count;
  }

  /** How many members hold at least one of the roles. */
  holdersOfAny(roleIds: readonly string[]): number {
    if (roleIds.length === 0) return 0;
    let count = 0;
    for (const member of this.#members.values())
      if (roleIds.some((roleId) => member.roles.cache.has(roleId))) count += 1;
    return count;
  }
}

/**
 * Guilds up to this many members are listed over REST, 1,000 a page, instead of with a gateway request
 * (op 8): a shard may send only 120 frames a minute, so a pass over thousands of small guilds would wait
 * on the gateway (and its requests time out), while REST limits each guild's member list on its own.
 * Larger guilds use op 8, which answers in chunks of 1,000 without a round trip each.
 * @see https://discord.com/developers/docs/events/gateway#rate-limiting
 * @see https://discord.com/developers/docs/resources/guild#list-guild-members
 */
export const REST_LIST_MAX_MEMBERS = 5_000;
const LIST_PAGE = 1_000;
/**
 * Member-list pages a process requests per second at most: discord.js allows a bot 50 REST requests a
 * second in all (Discord's global limit), and interaction replies and role edits need the rest.
 */
export const MEMBER_LIST_PAGES_PER_SECOND = 40;

/**
 * Every member of the guild (REST pages for a small guild, one gateway request for a large one), so each
 * member's roles come from the answer, not a request per member. Null without the GuildMembers intent
 * (Discord would refuse or never answer) or on a failure.
 */
export async function loadMembers(
  discord: Client,
  guild: Guild,
  logger: Logger,
  pages?: RequestLimiter,
): Promise<MemberRoster | null> {
  if (!hasMembersIntent(discord)) return null;
  try {
    const members =
      guild.memberCount <= REST_LIST_MAX_MEMBERS
        ? await listMembers(guild, pages)
        : await guild.members.fetch({ time: 30_000 });
    return new MemberRoster(members);
  } catch (error) {
    logger.warn(
      { err: error, guildId: guild.id },
      'could not fetch the member list; fetching members one by one',
    );
    return null;
  }
}

/** The guild's members over REST, page after page (by ascending user id) until a page is not full. */
async function listMembers(guild: Guild, pages?: RequestLimiter): Promise<Map<string, GuildMember>> {
  const members = new Map<string, GuildMember>();
  let after: string | undefined;
  for (;;) {
    const done = await pages?.acquire();
    const page = await guild.members
      .list({ limit: LIST_PAGE, ...(after === undefined ? {} : { after }) })
      .finally(() => done?.());
    let last = after;
    for (const [id, member] of page) {
      members.set(id, member);
      if (last === undefined || BigInt(id) > BigInt(last)) last = id;
    }
    if (page.size < LIST_PAGE || last === after) return members;
    after = last;
  }
}

/** Whether the bot holds Manage Roles in the guild. */
export function botCanManageRoles(guild: Guild): boolean {
  return guild.members.me?.permissions.has(PermissionFlagsBits.ManageRoles) ?? false;
}

/** What a member may hand out by hand: owners and administrators anything, others below their highest role. */
export function invokerRights(guild: Guild, member: GuildMember | null): InvokerRights {
  if (!member) return { bypass: false, highestPosition: 0 };
  return handOutRights(guildAuthorityOf(guild), memberRolesOf(member));
}

/** A role as the hierarchy checks see it, from the gateway cache; undefined when the guild has none. */
export function roleInfoOf(guild: Guild, roleId: string): RoleInfo | undefined {
  const role = guild.roles.cache.get(roleId);
  if (!role) return undefined;
  return {
    id: role.id,
    name: role.name,
    position: role.position,
    managed: role.managed,
    permissions: role.permissions.bitfield,
  };
}

/**
 * Every reason the bot could not (or must not) assign each of `roleIds`, from the gateway cache, so a
 * doomed edit costs no request. With `invoker`, also what that member could not hand out by hand.
 */
export function guildRoleProblems(
  guild: Guild,
  roleIds: readonly string[],
  invoker?: InvokerRights,
): RoleProblem[] {
  const me = guild.members.me;
  const roles = new Map<string, RoleInfo>();
  for (const id of roleIds) {
    const role = roleInfoOf(guild, id);
    if (role) roles.set(id, role);
  }
  return roleProblems({
    guildId: guild.id,
    roleIds: [...roleIds],
    roles,
    botHighestPosition: me?.roles.highest.position ?? 0,
    botCanManageRoles: botCanManageRoles(guild),
    ...(invoker ? { invoker } : {}),
  });
}

/**
 * How many members hold a role: from the walk's member list when it has one, else from the member cache
 * (which, with the bot's cache policy, knows almost nobody: a low count makes the mass-removal breaker
 * trip sooner, the safe side).
 */
export function roleHolders(guild: Guild, roster: MemberRoster | null): (roleId: string) => number {
  return (roleId) => roster?.holders(roleId) ?? guild.roles.cache.get(roleId)?.members.size ?? 0;
}

/**
 * A member as the rules see them: the roles they hold, as they will be once the changes already queued
 * for them are applied (so a queued addition is not taken for a role they lack, and the other way round).
 */
export function memberState(
  userId: string,
  member: GuildMember | null,
  queued: readonly Pick<RoleChange, 'roleId' | 'op'>[] = [],
): MemberState {
  const roleIds = new Set(member ? member.roles.cache.keys() : []);
  for (const change of queued) {
    if (change.op === 'add') roleIds.add(change.roleId);
    else roleIds.delete(change.roleId);
  }
  const age = member ? { createdAt: snowflakeTime(userId), joinedAt: member.joinedTimestamp } : undefined;
  return { userId, username: member?.user.username ?? null, roleIds, age };
}

const DISCORD_EPOCH_MS = 1_420_070_400_000n;

/** When a Discord id (a snowflake) was made: an account's creation time, in ms. */
export function snowflakeTime(id: string): number {
  try {
    return Number((BigInt(id) >> 22n) + DISCORD_EPOCH_MS);
  } catch {
    return Number.NaN;
  }
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
