import { Client, Events, GatewayIntentBits, Options } from 'discord.js';
import { commandsFor } from '../commands/index.ts';
import type { Config } from './config.ts';
import type { BotDeps, Command } from './discord/command.ts';
import { Cooldown } from './discord/cooldown.ts';
import { createRouter, type InteractionRouter } from './discord/router.ts';
import { DEFAULT_DISCORD_API_URL, type DiscordOAuthConfig } from './gating/discordOAuth.ts';
import { GatingService } from './gating/service.ts';
import type { SiweConfig } from './gating/siwe.ts';
import { startVerifyServer, type VerifyServer } from './gating/verifyServer.ts';
import type { Logger } from './log.ts';
import { openStore } from './store/index.ts';
import type { GatingStore } from './store/types.ts';
import type { Web3BioClient } from './web3bio/client.ts';
import { parseIdentity } from './web3bio/identity.ts';

export interface Bot {
  client: Client;
  router: InteractionRouter;
  commands: readonly Command[];
  /** The role-gating module, when GATING_ENABLED. */
  gating?: BotGating;
  /** Stop taking interactions, finish the ones in flight (up to `graceMs`), then disconnect. */
  stop(graceMs?: number): Promise<void>;
}

export interface BotGating {
  service: GatingService;
  store: GatingStore;
  /** Where the verification server listens (not PUBLIC_URL), e.g. http://127.0.0.1:8080 */
  verifyUrl: string;
}

export type GatingConfig = Pick<
  Config,
  | 'DATA_DIR'
  | 'DATABASE_URL'
  | 'HTTP_HOST'
  | 'HTTP_PORT'
  | 'PUBLIC_URL'
  | 'RPC_URL'
  | 'DISCORD_APPLICATION_ID'
  | 'DISCORD_API_URL'
  | 'DISCORD_CLIENT_SECRET'
  | 'GATING_RECHECK_HOURS'
  | 'GATING_LEASE_SECONDS'
  | 'GATING_CONFIRM_MINUTES'
  | 'AUDIT_RETENTION_DAYS'
>;

/** The parts of the gating module that `startBot` starts and stops together. */
interface GatingParts extends BotGating {
  verifyServer: VerifyServer;
  ownsStore: boolean;
}

/** Open the store (unless given), create the service and start the verification server. */
async function startGating(input: {
  config: GatingConfig;
  logger: Logger;
  web3bio: Web3BioClient;
  client: Client;
  store?: GatingStore | undefined;
}): Promise<GatingParts> {
  const { config, logger } = input;
  if (!config.PUBLIC_URL) throw new Error('PUBLIC_URL is required when GATING_ENABLED=true');
  const oauth: DiscordOAuthConfig | undefined = config.DISCORD_CLIENT_SECRET
    ? {
        clientId: config.DISCORD_APPLICATION_ID,
        clientSecret: config.DISCORD_CLIENT_SECRET,
        apiUrl: config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL,
        publicUrl: config.PUBLIC_URL,
      }
    : undefined;
  const siwe: SiweConfig = {
    publicUrl: config.PUBLIC_URL,
    ...(config.RPC_URL ? { rpcUrl: config.RPC_URL } : {}),
    discordSignIn: oauth !== undefined,
  };
  const store =
    input.store ??
    (await openStore(
      { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR },
      { leaseMs: config.GATING_LEASE_SECONDS * 1_000 },
    ));
  try {
    const service = new GatingService({
      store,
      web3bio: input.web3bio,
      discord: input.client,
      logger: logger.child({ module: 'gating' }),
      siwe,
      recheckIntervalMs: config.GATING_RECHECK_HOURS * 3_600_000,
      confirmMs: config.GATING_CONFIRM_MINUTES * 60_000,
      auditRetentionMs: config.AUDIT_RETENTION_DAYS * 86_400_000,
    });
    const verifyServer = await startVerifyServer({
      port: config.HTTP_PORT,
      host: config.HTTP_HOST,
      store,
      siwe,
      ...(oauth ? { oauth } : {}),
      onVerified: (result) => service.verification.completeSignature(result),
      logger: logger.child({ module: 'verify-server' }),
    });
    return {
      service,
      store,
      verifyUrl: verifyServer.url,
      verifyServer,
      ownsStore: input.store === undefined,
    };
  } catch (error) {
    if (input.store === undefined) await store.close().catch(() => undefined);
    throw error;
  }
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
  /** With GATING_ENABLED: an already open store to use (the caller closes it) instead of opening one from config. */
  store?: GatingStore;
}): Promise<Bot> {
  const { config, logger, web3bio } = options;
  const commands = options.commands ?? commandsFor(config);
  const cooldown = new Cooldown({
    limit: config.USER_COOLDOWN_COMMANDS,
    windowMs: config.USER_COOLDOWN_SECONDS * 1_000,
  });
  const client = createDiscordClient(config);
  const gating = config.GATING_ENABLED
    ? await startGating({ config, logger, web3bio, client, store: options.store })
    : undefined;
  const deps: BotDeps = { config, logger, web3bio, ...(gating ? { gating: gating.service } : {}) };
  const router = createRouter({ commands, deps, cooldown });

  const onInteraction = (interaction: Parameters<InteractionRouter['handle']>[0]) =>
    void router.handle(interaction);
  client.on(Events.InteractionCreate, onInteraction);
  client.on(Events.Error, (error) => logger.error({ err: error }, 'discord client error'));
  client.on(Events.Warn, (message) => logger.warn({ message }, 'discord client warning'));
  client.on(Events.ShardDisconnect, (event, shardId) =>
    logger.warn({ code: event.code, shardId }, 'gateway disconnected'),
  );
  client.on(Events.ShardResume, (shardId) => logger.info({ shardId }, 'gateway resumed'));
  if (gating) {
    const { service } = gating;
    client.on(Events.GuildMemberAdd, (member) => {
      service.members.onMemberJoin(member).catch((error: unknown) => {
        logger.error({ err: error, guildId: member.guild.id, userId: member.id }, 'member join sync failed');
      });
    });
  }

  // ens-normalize builds its tables on first use, blocking the event loop for about a second; done
  // here, that cost cannot land inside the first interaction's 3 s window, where no deferral timer could fire.
  parseIdentity('vitalik.eth');

  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(config.DISCORD_TOKEN);
    await ready;
  } catch (error) {
    await client.destroy();
    if (gating) await stopGating(gating, logger);
    throw error;
  }
  gating?.service.start();
  logger.info(
    { user: client.user?.tag, guilds: client.guilds.cache.size, commands: commands.length },
    'bot ready',
  );

  return {
    client,
    router,
    commands,
    ...(gating
      ? { gating: { service: gating.service, store: gating.store, verifyUrl: gating.verifyUrl } }
      : {}),
    async stop(graceMs = 10_000) {
      client.off(Events.InteractionCreate, onInteraction);
      const drained = await Promise.race([
        router.drain().then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, graceMs, false).unref()),
      ]);
      if (!drained) logger.warn({ inFlight: router.inFlight }, 'stopping with interactions still in flight');
      // Role edits in progress finish (bounded) while the client can still reach Discord.
      if (gating) await stopGating(gating, logger);
      await client.destroy();
    },
  };
}

/** Stop the service (in-progress role edits finish, bounded), the verification server, and our store. */
async function stopGating(gating: GatingParts, logger: Logger): Promise<void> {
  const steps: [string, () => Promise<void>][] = [
    ['gating service', () => gating.service.stop()],
    ['verify server', () => gating.verifyServer.close()],
  ];
  if (gating.ownsStore) steps.push(['gating store', () => gating.store.close()]);
  for (const [what, stop] of steps) {
    await stop().catch((error: unknown) => logger.warn({ err: error }, `could not stop the ${what} cleanly`));
  }
}
