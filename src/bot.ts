import { Client, Events, GatewayIntentBits, Options } from 'discord.js';
import { commandsFor } from '../commands/index.ts';
import type { Config } from './config.ts';
import type { BotDeps, Command } from './discord/command.ts';
import { Cooldown } from './discord/cooldown.ts';
import { createRouter, type InteractionRouter } from './discord/router.ts';
import type { Logger } from './log.ts';
import type { Web3BioClient } from './web3bio/client.ts';
import { parseIdentity } from './web3bio/identity.ts';

export interface Bot {
  client: Client;
  router: InteractionRouter;
  commands: readonly Command[];
  /** Stop taking interactions, finish the ones in flight (up to `graceMs`), then disconnect. */
  stop(graceMs?: number): Promise<void>;
}

/** The discord.js client with the fewest intents the enabled features need. */
export function createDiscordClient(config: Pick<Config, 'DISCORD_API_URL' | 'GATING_ENABLED'>): Client {
  const intents = [GatewayIntentBits.Guilds];
  if (config.GATING_ENABLED) intents.push(GatewayIntentBits.GuildMembers);
  return new Client({
    intents,
    allowedMentions: { parse: [], repliedUser: false },
    rest: config.DISCORD_API_URL ? { api: config.DISCORD_API_URL } : {},
    makeCache: Options.cacheWithLimits({
      ...Options.DefaultMakeCacheSettings,
      MessageManager: 0,
      PresenceManager: 0,
      ReactionManager: 0,
      ThreadManager: 0,
      VoiceStateManager: 0,
    }),
  });
}

/** Log in and route interactions. Resolves once the gateway session is ready. */
export async function startBot(options: {
  config: Config;
  logger: Logger;
  web3bio: Web3BioClient;
  commands?: readonly Command[];
}): Promise<Bot> {
  const { config, logger, web3bio } = options;
  const deps: BotDeps = { config, logger, web3bio };
  const commands = options.commands ?? commandsFor(config);
  const cooldown = new Cooldown({
    limit: config.USER_COOLDOWN_COMMANDS,
    windowMs: config.USER_COOLDOWN_SECONDS * 1_000,
  });
  const router = createRouter({ commands, deps, cooldown });
  const client = createDiscordClient(config);

  const onInteraction = (interaction: Parameters<InteractionRouter['handle']>[0]) =>
    void router.handle(interaction);
  client.on(Events.InteractionCreate, onInteraction);
  client.on(Events.Error, (error) => logger.error({ err: error }, 'discord client error'));
  client.on(Events.Warn, (message) => logger.warn({ message }, 'discord client warning'));
  client.on(Events.ShardDisconnect, (event, shardId) =>
    logger.warn({ code: event.code, shardId }, 'gateway disconnected'),
  );
  client.on(Events.ShardResume, (shardId) => logger.info({ shardId }, 'gateway resumed'));

  // ens-normalize builds its tables on first use, blocking the event loop for about a second; done
  // here, that cost cannot land inside the first interaction's 3 s window, where no deferral timer could fire.
  parseIdentity('vitalik.eth');

  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(config.DISCORD_TOKEN);
  await ready;
  logger.info(
    { user: client.user?.tag, guilds: client.guilds.cache.size, commands: commands.length },
    'bot ready',
  );

  return {
    client,
    router,
    commands,
    async stop(graceMs = 10_000) {
      client.off(Events.InteractionCreate, onInteraction);
      const drained = await Promise.race([
        router.drain().then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, graceMs, false).unref()),
      ]);
      if (!drained) logger.warn({ inFlight: router.inFlight }, 'stopping with interactions still in flight');
      await client.destroy();
    },
  };
}
