/**
 * What the discord.js client keeps in memory. The bot reads guilds, their roles and channels (permission
 * checks, the log channel) and its own member (`guild.members.me`, for role hierarchy); everything else
 * is either never read or read once from what a request returns (a gating walk uses the member list its
 * own request returned, see `loadMembers`), so it is not cached at all. With thousands of
 * guilds the members and users of one pass over all of them would otherwise stay in memory for good.
 * @see https://discordjs.guide/miscellaneous/cache-customization.html
 */
import {
  type CacheFactory,
  type CacheWithLimitsOptions,
  type ClientOptions,
  Collection,
  type GuildMember,
  Options,
  type User,
} from 'discord.js';

/**
 * `lean`: this bot's policy. `discord.js-defaults`: the library's own (members, users, emojis, stickers and
 * the rest kept without limit), for the guild-scale benchmark's baseline only.
 */
export type CachePolicy = 'lean' | 'discord.js-defaults';

/** The bot's own member (and user) stays whatever the limit: discord.js reads it as `guild.members.me`. */
export function isBotMember(member: GuildMember): boolean {
  return member.id === member.client.user?.id;
}

function isBotUser(user: User): boolean {
  return user.id === user.client.user?.id;
}

/**
 * Managers held at 0 entries (the bot itself excepted). Not listed, so unlimited: guilds, channels, roles
 * and permission overwrites, which discord.js needs whole (it does not support limiting them).
 */
export const LEAN_CACHE_LIMITS = {
  ApplicationCommandManager: 0,
  ApplicationEmojiManager: 0,
  AutoModerationRuleManager: 0,
  BaseGuildEmojiManager: 0,
  DMMessageManager: 0,
  EntitlementManager: 0,
  GuildBanManager: 0,
  GuildEmojiManager: 0,
  GuildForumThreadManager: 0,
  GuildInviteManager: 0,
  GuildMemberManager: { maxSize: 0, keepOverLimit: isBotMember },
  GuildMessageManager: 0,
  GuildScheduledEventManager: 0,
  GuildStickerManager: 0,
  GuildTextThreadManager: 0,
  MessageManager: 0,
  PresenceManager: 0,
  ReactionManager: 0,
  ReactionUserManager: 0,
  StageInstanceManager: 0,
  ThreadManager: 0,
  ThreadMemberManager: 0,
  UserManager: { maxSize: 0, keepOverLimit: isBotUser },
  VoiceStateManager: 0,
} satisfies CacheWithLimitsOptions;

/** Managers discord.js has that its `CacheWithLimitsOptions` type does not list yet; matched by name. */
const UNTYPED_LIMITS = { GuildSoundboardSoundManager: 0, PollAnswerVoterManager: 0 };

/**
 * What a manager that caches nothing gets: one collection shared by all of them that never stores, instead
 * of an empty collection each (a guild has a dozen such managers and each text channel two more, so
 * 2,500 guilds would hold some 180,000 empty collections).
 */
class NothingCached<K, V> extends Collection<K, V> {
  static override get [Symbol.species]() {
    return Collection;
  }

  override set(): this {
    return this;
  }
}

const NOTHING_CACHED = new NothingCached<unknown, unknown>();

/** The client options that decide what discord.js caches and sweeps. */
export function clientCacheOptions(
  policy: CachePolicy = 'lean',
): Pick<ClientOptions, 'makeCache' | 'sweepers'> {
  if (policy === 'discord.js-defaults') {
    return {
      makeCache: Options.cacheWithLimits(Options.DefaultMakeCacheSettings),
      sweepers: Options.DefaultSweeperSettings,
    };
  }
  const limits: Record<string, unknown> = { ...LEAN_CACHE_LIMITS, ...UNTYPED_LIMITS };
  const limited = Options.cacheWithLimits(limits as CacheWithLimitsOptions);
  const makeCache: CacheFactory = (managerType, holds, manager) =>
    limits[manager.name] === 0 ? (NOTHING_CACHED as never) : limited(managerType, holds, manager);
  // Nothing left grows by itself (threads and messages are not cached); the library's thread sweep is moot.
  return { makeCache, sweepers: {} };
}
