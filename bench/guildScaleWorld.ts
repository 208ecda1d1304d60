/**
 * The stand-ins of the guild-scale benchmark (bench/guildScale.ts) in a process of their own, so the bot
 * process(es) under measurement hold nothing but the bot: the stand-in Discord serving `guilds` guilds of
 * REALISTIC_GUILD's shape, and the stand-in Web3.bio answering each linked identity with a human
 * credential (the members already hold the human role, so a re-check changes nothing).
 * Told what to build over IPC; answers with where the stand-ins listen and what was built, and later,
 * when asked, with what the stand-ins have counted (`counts`) or with /whois interactions to sign
 * (`whois`, for the capacity benchmark, bench/capacity.ts).
 */
import { addScaleGuilds, type GuildShape, REALISTIC_GUILD } from '../fakes/discord/scale.ts';
import { startFakeDiscord } from '../fakes/discord/server.ts';
import { gatingCredentials, rawProfile } from '../fakes/web3bio/builders.ts';
import { startFakeWeb3Bio } from '../fakes/web3bio/server.ts';

export const WORLD_API_KEY = 'bench-guild-scale-key';

export interface WorldBuild {
  guilds: number;
  shape?: GuildShape;
  /** Spread the guilds evenly over this many shards (addScaleGuilds). */
  shardCount?: number;
  /** The first linked member of every run of this many guilds proves one identity shared between them. */
  sharedEvery?: number;
  /** Discord's global REST limit per bot token, enforced by the stand-in (none by default). */
  globalPerSecond?: number;
}

export interface WorldGuild {
  id: string;
  humanRoleId: string;
  /** The linked members' user ids. */
  linked: string[];
  /** The identity each linked member proved (same order). */
  identities: string[];
}

/** What the stand-ins counted so far. */
export interface WorldCounts {
  web3bioRequests: number;
  discordRequests: number;
  discord429s: number;
  /** Discord requests by route (`GET /guilds/:id/members`). */
  discordRoutes: Record<string, number>;
}

/** The identity a /whois asks about: a profile in the stand-in Web3.bio. */
export const WHOIS_IDENTITY = 'capacity-bench.eth';

export interface WorldReady {
  discordApiUrl: string;
  token: string;
  applicationId: string;
  web3bioUrl: string;
  guilds: WorldGuild[];
  buildMs: number;
}

/** The identity a benchmark links for a member. */
export function linkedIdentity(userId: string): string {
  return `scale${userId}.eth`;
}

/** The identity linked member `index` of guild `guild` proves: shared across `sharedEvery` guilds, or its own. */
export function worldIdentity(
  guild: number,
  index: number,
  userId: string,
  sharedEvery: number | undefined,
): string {
  return index === 0 && sharedEvery !== undefined
    ? `shared${Math.floor(guild / sharedEvery)}.eth`
    : linkedIdentity(userId);
}

type Message = { type: 'build'; build: WorldBuild } | { type: 'counts' } | { type: 'whois'; count: number };

let answer: (message: Exclude<Message, { type: 'build' }>) => void = () => {};

process.on('message', (message: Message) => {
  if (message.type === 'build') void build(message.build);
  else answer(message);
});

async function build(request: WorldBuild): Promise<void> {
  const began = performance.now();
  const shape = request.shape ?? REALISTIC_GUILD;
  const discord = await startFakeDiscord();
  const web3bio = await startFakeWeb3Bio({ seed: false, apiKeys: { [WORLD_API_KEY]: 'full' } });
  const built = addScaleGuilds(discord.state, request.guilds, shape, request.shardCount);
  const guilds = built.map((guild, g) => {
    const linked = guild.memberIds.slice(0, shape.linked);
    const identities = linked.map((userId, i) => worldIdentity(g, i, userId, request.sharedEvery));
    return { id: guild.id, humanRoleId: guild.humanRoleId, linked, identities };
  });
  for (const identity of new Set(guilds.flatMap((guild) => guild.identities)))
    web3bio.world.setCredentials(identity, gatingCredentials(identity, { human: true }));
  web3bio.world.addProfile(rawProfile('ens', WHOIS_IDENTITY, `0x${'c'.repeat(40)}`));
  if (request.globalPerSecond !== undefined)
    discord.enforceRateLimits({ globalPerSecond: request.globalPerSecond, routes: [] });
  const asker = { guildId: guilds[0]?.id ?? '', userId: guilds[0]?.linked[0] ?? '' };
  answer = (message) => {
    if (message.type === 'counts') {
      const limited = discord.rateLimitCounts;
      const counts: WorldCounts = {
        web3bioRequests: web3bio.requests.length,
        discordRequests: discord.requests.length,
        discord429s: Object.values(limited).reduce((sum: number, n) => sum + Number(n), 0),
        discordRoutes: {},
      };
      for (const { method, path } of discord.requests) {
        const route = `${method} ${path.replace(/\d{5,}/g, ':id')}`;
        counts.discordRoutes[route] = (counts.discordRoutes[route] ?? 0) + 1;
      }
      process.send?.({ type: 'counts', counts });
    } else {
      const bodies = Array.from({ length: message.count }, () =>
        JSON.stringify(
          discord.buildCommandInteraction({
            name: 'whois',
            ...asker,
            options: [{ name: 'identity', type: 3, value: WHOIS_IDENTITY }],
          }),
        ),
      );
      process.send?.({ type: 'whois', bodies });
    }
  };
  const ready: WorldReady = {
    discordApiUrl: discord.apiUrl,
    token: discord.token,
    applicationId: discord.applicationId,
    web3bioUrl: web3bio.url,
    guilds,
    buildMs: performance.now() - began,
  };
  process.send?.({ type: 'ready', ready });
  process.on('disconnect', () => {
    void Promise.allSettled([discord.close(), web3bio.close()]).then(() => process.exit(0));
  });
}
