import { Client, Events, GatewayIntentBits, type GuildMember } from 'discord.js';
import { type CachePolicy, clientCacheOptions } from '../../src/discord/clientCaches.ts';
import type { FakeDiscord } from './server.ts';

/**
 * A real discord.js client (Guilds + GuildMembers intents, no pings) logged in to the stand-in Discord,
 * caching what the bot caches (clientCaches.ts) unless told otherwise.
 */
export async function loginClient(discord: FakeDiscord, caches: CachePolicy = 'lean'): Promise<Client> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers],
    rest: { api: discord.apiUrl },
    allowedMentions: { parse: [] },
    ...clientCacheOptions(caches),
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(discord.token);
  await ready;
  return client;
}

/**
 * The member as the client saw them join (GUILD_MEMBER_ADD), once it has; the member cache keeps only the
 * bot, so a test waits for the event rather than for the cache. Call before making the member join.
 */
export function memberJoined(
  client: Client,
  guildId: string,
  userId: string,
  timeoutMs = 5_000,
): Promise<GuildMember> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off(Events.GuildMemberAdd, onJoin);
      reject(new Error(`member ${userId} did not reach the client within ${timeoutMs} ms`));
    }, timeoutMs);
    const onJoin = (member: GuildMember) => {
      if (member.guild.id !== guildId || member.id !== userId) return;
      clearTimeout(timer);
      client.off(Events.GuildMemberAdd, onJoin);
      resolve(member);
    };
    client.on(Events.GuildMemberAdd, onJoin);
  });
}
