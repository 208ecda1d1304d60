import {
  Client,
  Events,
  GatewayDispatchEvents,
  type GatewayGuildMemberUpdateDispatchData,
  GatewayIntentBits,
} from 'discord.js';
import type { APIInteraction } from 'discord-api-types/v10';
import { commandsFor } from '../../commands/index.ts';
import { createRecentLookups } from '../cache/index.ts';
import type { RecentLookups } from '../cache/recentLookups.ts';
import { type CachePolicy, clientCacheOptions } from '../discord/clientCaches.ts';
import type { BotDeps, Command } from '../discord/command.ts';
import { redisIdentifyThrottler } from '../discord/identifyQueue.ts';
import { HandoffInbox } from '../discord/interactionHandoff.ts';
import { DEFAULT_DISCORD_API_URL } from '../discord/oauth.ts';
import { callbackResponse, Responder } from '../discord/responder.ts';
import type { InteractionRouter } from '../discord/router.ts';
import { InteractionWebhooks } from '../discord/webhookRest.ts';
import { provenIdentitiesOf } from '../gating/provenIdentities.ts';
import type { GatingService } from '../gating/service.ts';
import type { Logger } from '../ops/log.ts';
import { type BotMetrics, createMetrics } from '../ops/metrics.ts';
import type { GatingStore } from '../store/types.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import { type OpsServers, startOpsServers } from '../web/listeners.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { parseIdentity } from '../web3bio/identity.ts';
import { type GatingParts, startGating, stopGating } from './botGating.ts';
import { botOpsChecks, countRoleEdits, recheckCycleScrape } from './botMetrics.ts';
import type { Config } from './config.ts';
import { handoffKey } from './gatingSetup.ts';
import { httpEndpoint, interactionRouter } from './interactionRouting.ts';
import { UpstreamHealthSampler } from './upstreamHealth.ts';

export interface Bot {
  client: Client;
  router: InteractionRouter;
  commands: readonly Command[];
  /** The role-gating module, when GATING_ENABLED. */
  gating?: BotGating;
  metrics: BotMetrics;
  /** `/healthz`, `/readyz` and (without METRICS_PORT) `/metrics`, when gating is off and HTTP_PORT is set. */
  httpUrl?: string;
  /** `/healthz`, `/readyz`, `/metrics` on METRICS_HOST:METRICS_PORT, when METRICS_PORT is set. */
  metricsUrl?: string;
  /** Stop taking interactions, finish the ones in flight (up to `graceMs`), then disconnect. */
  stop(graceMs?: number): Promise<void>;
}

export interface BotGating {
  service: GatingService;
  store: GatingStore;
  /** Where the verification server listens (not PUBLIC_URL), e.g. http://127.0.0.1:8080 */
  verifyUrl: string;
}

/** The shards a shard process serves (from the shard manager). */
export interface ShardSlice {
  ids: number[];
  count: number;
  /** Shard processes in all (each takes its share of the bot's REST budget for member lists). */
  processes: number;
}

/**
 * The discord.js client with the fewest intents the enabled features need, caching only what the bot
 * reads (clientCaches.ts); with `shards`, only those, identifying through `identify` when given.
 */
export function createDiscordClient(
  config: Pick<Config, 'DISCORD_API_URL' | 'GATING_ENABLED'>,
  shards?: ShardSlice,
  caches: CachePolicy = 'lean',
  identify?: ReturnType<typeof redisIdentifyThrottler>,
): Client {
  const intents = [GatewayIntentBits.Guilds];
  if (config.GATING_ENABLED) intents.push(GatewayIntentBits.GuildMembers);
  return new Client({
    intents,
    ...(shards ? { shards: shards.ids, shardCount: shards.count } : {}),
    ...(identify ? { ws: { buildIdentifyThrottler: (manager) => identify.build(manager) } } : {}),
    allowedMentions: { parse: [], repliedUser: false },
    rest: config.DISCORD_API_URL ? { api: config.DISCORD_API_URL } : {},
    ...clientCacheOptions(caches),
  });
}

export interface StartBotOptions {
  config: Config;
  logger: Logger;
  web3bio: Web3BioClient;
  commands?: readonly Command[];
  /** With GATING_ENABLED: an already open store to use (the caller closes it) instead of opening one from config. */
  store?: GatingStore;
  /** The registry the client's observers already report to (see createWeb3BioFromConfig); default a new one. */
  metrics?: BotMetrics;
  /**
   * In a shard process: serve only these shards, and run no HTTP server (the shard manager runs it once
   * per machine; see sharding.ts).
   */
  shards?: ShardSlice;
  /** discord.js's own caches instead of the bot's (the guild-scale benchmark's baseline); default 'lean'. */
  discordCaches?: CachePolicy;
  /**
   * The recent lookups autocomplete reads (closed by `stop`); default from config (Redis with REDIS_URL,
   * else this process's memory). A shard process without Redis gets one that forgets in every process.
   */
  recentLookups?: RecentLookups;
  /** How often a watched Farcaster sign-in's channel is read; default 1.5 s (the end-to-end tests shorten it). */
  farcasterPollMs?: number;
}

/** Log in and route interactions. Resolves once the gateway session is ready. */
export async function startBot(options: StartBotOptions): Promise<Bot> {
  const { config, logger, web3bio } = options;
  const metrics = options.metrics ?? createMetrics();
  const commands = options.commands ?? commandsFor(config);
  const overHttp = config.INTERACTIONS === 'http';
  // INTERACTIONS=http, PROCESS_ROLE=gateway: gating for the web replicas, whose gating interactions arrive through the store.
  const worker = overHttp && config.PROCESS_ROLE === 'gateway';
  // A shard process with REDIS_URL identifies through the bot's one queue there (every process, every machine).
  const identify = options.shards && config.REDIS_URL ? redisIdentifyThrottler(config, logger) : undefined;
  const client = createDiscordClient(config, options.shards, options.discordCaches, identify);
  // Interaction answers (callbacks, webhook edits, follow-ups, files) go through this, not client.rest.
  const webhooks = new InteractionWebhooks(config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL);
  const intake = interactionIntake(config, webhooks, overHttp && !worker);
  const { endpoint: interactions } = intake;
  // Linked Roles alone also run in the gating module (store, page, re-checks), without the GuildMembers intent.
  const gating =
    config.GATING_ENABLED || config.LINKED_ROLES_ENABLED
      ? await startGating({
          config,
          logger,
          web3bio,
          client,
          store: options.store,
          shards: options.shards,
          worker,
          ...(interactions ? { interactions } : {}),
          metrics,
          farcasterPollMs: options.farcasterPollMs,
        })
      : undefined;
  const recentLookups =
    options.recentLookups ??
    createRecentLookups({ redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX });
  const router = interactionRouter(config, botDeps(options, recentLookups, gating), metrics, commands);
  intake.routeTo(router);
  countRoleEdits(client, metrics);
  const http = await startBotOps(options, { client, gating, metrics, interactions }, async () => {
    await recentLookups.close();
    if (gating) await stopGating(gating, logger);
    await webhooks.close();
  });
  const gateway = listenToGateway(client, { router, webhooks, logger, gating, taking: !overHttp });

  // ens-normalize builds its tables on first use, blocking the event loop for about a second; done
  // here, that cost cannot land inside the first interaction's 3 s window, where no deferral timer could fire.
  parseIdentity('vitalik.eth');

  await logIn(client, config.DISCORD_TOKEN, async () => {
    await client.destroy();
    await identify?.close();
    await http.close();
    await recentLookups.close();
    if (gating) await stopGating(gating, logger);
    await webhooks.close();
  });
  const work = startGatingWork(options, { gating, metrics, worker, webhooks, router });
  logReady(logger, client, commands.length, options.shards);

  return {
    client,
    router,
    commands,
    metrics,
    ...(http.url === undefined ? {} : { httpUrl: http.url }),
    ...(http.metricsUrl === undefined ? {} : { metricsUrl: http.metricsUrl }),
    ...(gating
      ? { gating: { service: gating.service, store: gating.store, verifyUrl: gating.verifyUrl } }
      : {}),
    async stop(graceMs = 10_000) {
      gateway.stopTaking();
      const drained = await Promise.race([
        router.drain().then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, graceMs, false).unref()),
      ]);
      if (!drained) logger.warn({ inFlight: router.inFlight }, 'stopping with interactions still in flight');
      await work.stop();
      // Role edits in progress finish (bounded) while the client can still reach Discord.
      if (gating) await stopGating(gating, logger);
      await http.close();
      await recentLookups.close();
      await client.destroy();
      await identify?.close();
      await webhooks.close();
    },
  };
}

/**
 * With `http`, the `POST /interactions` endpoint on the pages' server: it is made before the router it
 * dispatches to, which `routeTo` hands it once built.
 */
function interactionIntake(config: Config, webhooks: InteractionWebhooks, http: boolean) {
  let routeInteraction: InteractionEndpoint['dispatch'] = async () => {};
  const endpoint: InteractionEndpoint | undefined = http
    ? httpEndpoint(config, webhooks, (interaction, responder) => routeInteraction(interaction, responder))
    : undefined;
  return {
    endpoint,
    routeTo(router: InteractionRouter) {
      routeInteraction = (interaction, responder) => router.handle(interaction, responder);
    },
  };
}

/** What the commands are given: config, clients, and with gating its service and the members' proofs. */
function botDeps(
  options: StartBotOptions,
  recentLookups: RecentLookups,
  gating: GatingParts | undefined,
): BotDeps {
  const { config, logger, web3bio } = options;
  return {
    config,
    logger,
    web3bio,
    recentLookups,
    ...(gating
      ? {
          gating: gating.service,
          provenIdentities: (userId, guildId) => provenIdentitiesOf(gating.store, userId, guildId),
        }
      : {}),
  };
}

/** `/healthz`, `/readyz`, `/metrics` (none in a shard process); on failure, `undo` what was started. */
async function startBotOps(
  options: StartBotOptions,
  parts: {
    client: Client;
    gating: GatingParts | undefined;
    metrics: BotMetrics;
    interactions: InteractionEndpoint | undefined;
  },
  undo: () => Promise<void>,
): Promise<OpsServers> {
  const { client, gating, metrics, interactions } = parts;
  if (options.shards !== undefined) return { close: async () => {} };
  try {
    return await startOpsServers({
      config: options.config,
      logger: options.logger,
      ...botOpsChecks(client, gating, metrics, recheckCycleScrape(options.config, options.web3bio)),
      ...(interactions && !gating ? { interactions } : {}),
    });
  } catch (error) {
    await undo();
    throw error;
  }
}

/**
 * Route the gateway's interactions (unless `taking` is false: with an Interactions Endpoint URL set,
 * Discord sends none over the gateway), log the client's errors and the gateway's state, and with gating
 * tell it of members joining and renamed.
 */
function listenToGateway(
  client: Client,
  o: {
    router: InteractionRouter;
    webhooks: InteractionWebhooks;
    logger: Logger;
    gating: GatingParts | undefined;
    taking: boolean;
  },
): { stopTaking(): void } {
  const { router, webhooks, logger, gating } = o;
  // Interactions are read raw, as Discord sent them: the router works on the same JSON an HTTP POST carries.
  let taking = o.taking;
  const onInteraction = (interaction: APIInteraction, shard: number) => {
    if (!taking) return;
    const responder = new Responder(webhooks, interaction, callbackResponse(webhooks, interaction));
    void router.handle(interaction, responder, { shard });
  };
  client.ws.on(GatewayDispatchEvents.InteractionCreate, onInteraction);
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
    // Read raw: discord.js reports a rename (userUpdate) only for a user it had cached (clientCaches.ts).
    client.ws.on(GatewayDispatchEvents.GuildMemberUpdate, (data: GatewayGuildMemberUpdateDispatchData) => {
      service.members.onMemberUpdate(data.user.id, data.user.username);
    });
  }
  return {
    stopTaking() {
      taking = false;
      client.ws.off(GatewayDispatchEvents.InteractionCreate, onInteraction);
    },
  };
}

/** Log in and wait for the gateway session; on failure, `undo` what was started. */
async function logIn(client: Client, token: string, undo: () => Promise<void>): Promise<void> {
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(token);
    await ready;
  } catch (error) {
    await undo();
    throw error;
  }
}

/**
 * Once logged in: the gating service, the dashboard's upstream health sampler and (in the gateway worker)
 * the inbox of interactions the web replicas hand over. `stop` stops the last two.
 */
function startGatingWork(
  options: StartBotOptions,
  o: {
    gating: GatingParts | undefined;
    metrics: BotMetrics;
    worker: boolean;
    webhooks: InteractionWebhooks;
    router: InteractionRouter;
  },
): { stop(): Promise<void> } {
  const { config, logger, shards } = options;
  const { gating, metrics, router } = o;
  gating?.service.start();
  // The dashboard's upstream health: this process's Web3.bio requests, a minute at a time, in the store.
  const upstream =
    gating && config.DASHBOARD_ENABLED
      ? new UpstreamHealthSampler({ metrics, store: gating.store, logger })
      : undefined;
  upstream?.start();
  const inbox =
    o.worker && gating
      ? new HandoffInbox({
          store: gating.store,
          logger: logger.child({ module: 'handoff' }),
          rest: o.webhooks,
          run: (interaction, responder) => router.handle(interaction, responder),
          key: handoffKey(config),
          leaseMs: config.GATING_LEASE_SECONDS * 1_000,
          ...(shards ? { shards: { ids: shards.ids, count: shards.count } } : {}),
        })
      : undefined;
  inbox?.start();
  return {
    async stop() {
      await inbox?.stop();
      await upstream?.stop();
    },
  };
}

function logReady(logger: Logger, client: Client, commands: number, shards: ShardSlice | undefined): void {
  logger.info(
    {
      user: client.user?.tag,
      guilds: client.guilds.cache.size,
      commands,
      // A shard process's logger already names its shards (gatewayProcess.ts): only the totals here.
      ...(shards ? { shardCount: shards.count, processes: shards.processes } : {}),
    },
    'bot ready',
  );
}
