/**
 * Shared setup for the gating service tests: the real discord.js client logged in to the stand-in
 * Discord, the real Web3.bio client against the stand-in Web3.bio, and SQLite ':memory:' stores.
 * One Discord session serves a whole test file; each test gets its own guild, store and identities.
 */
import type { Client } from 'discord.js';
import { pino } from 'pino';
import { loginClient, memberJoined } from '../../fakes/discord/client.ts';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from '../../fakes/discord/server.ts';
import { nextSnowflake } from '../../fakes/discord/snowflake.ts';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { GatingService, type GatingServiceOptions } from '../../src/gating/service.ts';
import { gatingNoticeText } from '../../src/render/gatingNotices.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore, StoreOptions } from '../../src/store/types.ts';
import { Web3BioClient } from '../../src/web3bio/client.ts';

export const PUBLIC_URL = 'https://bot.example.org';
export const silentLogger = pino({ level: 'silent' });

export interface Fakes {
  discord: FakeDiscord;
  web3: FakeWeb3Bio;
  client: Client;
  web3bio: Web3BioClient;
  close(): Promise<void>;
}

/** Start both stand-ins and log a real discord.js client in (Guilds + GuildMembers intents). */
export async function startFakes(): Promise<Fakes> {
  const discord = await startFakeDiscord();
  const web3 = await startFakeWeb3Bio({ seed: false });
  const client = await loginClient(discord);
  const web3bio = new Web3BioClient({
    baseUrl: web3.url,
    rateLimit: null,
    retry: { retries: 1, baseDelayMs: 5, maxDelayMs: 10 },
    timeoutMs: 2_000,
  });
  return {
    discord,
    web3,
    client,
    web3bio,
    async close() {
      await client.destroy();
      await web3bio.close();
      await Promise.all([discord.close(), web3.close()]);
    },
  };
}

/** Resolves once the client has the guild in its cache. */
export async function addGuild(
  fakes: Fakes,
  input: Parameters<FakeDiscord['addGuild']>[0] = {},
): Promise<FakeGuild> {
  const guild = fakes.discord.addGuild(input);
  await waitFor(() => fakes.client.guilds.cache.has(guild.id));
  return guild;
}

/** Adds a role and waits until the client has seen it. */
export async function addRole(
  fakes: Fakes,
  guild: FakeGuild,
  name: string,
  position: number,
  managed = false,
) {
  const role = fakes.discord.addRole(guild.id, { name, position, managed });
  await waitFor(() => fakes.client.guilds.cache.get(guild.id)?.roles.cache.has(role.id) === true);
  return role;
}

/** A member joining (GUILD_MEMBER_ADD is dispatched, as Discord does with the GuildMembers intent). */
export async function addMember(fakes: Fakes, guild: FakeGuild, username: string, roles: string[] = []) {
  const id = nextSnowflake();
  const joined = memberJoined(fakes.client, guild.id, id);
  fakes.discord.addMember(guild.id, { id, username }, { roles, dispatchJoin: true });
  await joined;
  return id;
}

/** Adds an ENS profile (with a `discord` link when `discordHandle` is given) and its credentials. */
export function addEnsIdentity(
  fakes: Fakes,
  name: string,
  opts: { discordHandle?: string; address?: string; human?: boolean; spam?: boolean } = {},
): { name: string; address: string } {
  const address = opts.address ?? nextAddress();
  fakes.web3.world.addProfile(ensProfile(name, address, opts.discordHandle));
  fakes.web3.world.setCredentials(name, gatingCredentials(name, opts));
  return { name, address };
}

/** A counter of unique ENS names so tests sharing the stand-in never collide. */
let nameSeed = 0;
export function uniqueName(prefix: string): string {
  nameSeed += 1;
  return `${prefix}${nameSeed}x${Date.now().toString(36)}.eth`;
}

export async function openStore(opts: StoreOptions = {}): Promise<GatingStore> {
  return openSqliteStore(':memory:', opts);
}

export const manualScheduler = { start() {}, stop() {} };

export function createService(
  fakes: Fakes,
  store: GatingStore,
  over: Partial<GatingServiceOptions> = {},
): GatingService {
  return new GatingService({
    store,
    web3bio: fakes.web3bio,
    discord: fakes.client,
    logger: silentLogger,
    siwe: { publicUrl: PUBLIC_URL },
    noticeText: gatingNoticeText,
    recheckIntervalMs: 60 * 60_000,
    scheduler: manualScheduler,
    worker: { pollMs: 20, backoffMs: 10, maxAttempts: 3 },
    logFlushMs: 10,
    ...over,
  });
}

/** Role edits (PUT/DELETE) the fake received for one member and role. */
export function roleEdits(
  fakes: Fakes,
  guildId: string,
  userId: string,
  roleId: string,
  method?: 'PUT' | 'DELETE',
) {
  const path = `/guilds/${guildId}/members/${userId}/roles/${roleId}`;
  return fakes.discord.requests.filter(
    (r) =>
      r.path === path &&
      (method === undefined ? r.method === 'PUT' || r.method === 'DELETE' : r.method === method),
  );
}

export function memberRoles(fakes: Fakes, guild: FakeGuild, userId: string): string[] {
  return fakes.discord.state.guilds.get(guild.id)?.members.get(userId)?.roles ?? [];
}

/** Messages the bot posted in a channel, oldest first. */
export function channelMessages(fakes: Fakes, channelId: string): string[] {
  return [...fakes.discord.state.messages.values()]
    .filter((m) => m.channel_id === channelId)
    .map((m) => m.content);
}

/** Polls a condition (for gateway events that have no promise to await); fails after `timeoutMs`. */
export async function waitFor(condition: () => boolean, timeoutMs = 3_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
