/**
 * The stand-ins of the guild-scale benchmark (bench/guildScale.ts) in a process of their own, so the bot
 * process(es) under measurement hold nothing but the bot: the stand-in Discord serving `guilds` guilds of
 * REALISTIC_GUILD's shape, and the stand-in Web3.bio answering each linked identity with a human
 * credential (the members already hold the human role, so a re-check changes nothing).
 * Told what to build over IPC; answers with where the stand-ins listen and what was built.
 */
import { addScaleGuilds, type GuildShape, REALISTIC_GUILD } from '../fakes/discord/scale.ts';
import { startFakeDiscord } from '../fakes/discord/server.ts';
import { gatingCredentials } from '../fakes/web3bio/builders.ts';
import { startFakeWeb3Bio } from '../fakes/web3bio/server.ts';

export const WORLD_API_KEY = 'bench-guild-scale-key';

export interface WorldBuild {
  guilds: number;
  shape?: GuildShape;
}

export interface WorldGuild {
  id: string;
  humanRoleId: string;
  /** The linked members' user ids. */
  linked: string[];
}

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

process.on('message', (message: { type: string; build?: WorldBuild }) => {
  if (message.type === 'build' && message.build) void build(message.build);
});

async function build(request: WorldBuild): Promise<void> {
  const began = performance.now();
  const shape = request.shape ?? REALISTIC_GUILD;
  const discord = await startFakeDiscord();
  const web3bio = await startFakeWeb3Bio({ seed: false, apiKeys: { [WORLD_API_KEY]: 'full' } });
  const guilds = addScaleGuilds(discord.state, request.guilds, shape).map((guild) => ({
    id: guild.id,
    humanRoleId: guild.humanRoleId,
    linked: guild.memberIds.slice(0, shape.linked),
  }));
  for (const guild of guilds) {
    for (const userId of guild.linked) {
      const identity = linkedIdentity(userId);
      web3bio.world.setCredentials(identity, gatingCredentials(identity, { human: true }));
    }
  }
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
