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
import { HandoffInbox } from '../discord/interactionHandoff.ts';
import { DEFAULT_DISCORD_API_URL, type DiscordOAuthConfig } from '../discord/oauth.ts';
import { callbackResponse, Responder } from '../discord/responder.ts';
import type { InteractionRouter } from '../discord/router.ts';
import { InteractionWebhooks } from '../discord/webhookRest.ts';
import {
  DEFAULT_REQUEST_POLL_MS,
  localFirstOperations,
  queuedOperations,
} from '../gating/dashboard/requests.ts';
import { provenIdentitiesOf } from '../gating/provenIdentities.ts';
import { MEMBER_LIST_PAGES_PER_SECOND, servesGuild } from '../gating/roles/discordReads.ts';
import { GatingService } from '../gating/service.ts';
import type { Logger } from '../ops/log.ts';
import { type BotMetrics, createMetrics } from '../ops/metrics.ts';
import { gatingNoticeText } from '../render/gatingNotices.ts';
import type { GatingStore } from '../store/types.ts';
import type { DashboardSetup } from '../web/dashboard/routes.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import { type OpsChecks, type OpsServers, startOpsServers, startPagesServer } from '../web/listeners.ts';
import type { ReadinessCheck } from '../web/ops.ts';
import type { WebServer } from '../web/server.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { parseIdentity } from '../web3bio/identity.ts';
import { countRoleEdits, measuredGating, recordGatewayPings, scrapeGatingStore } from './botMetrics.ts';
import { type Config, DEFAULT_HTTP_PORT } from './config.ts';
import {
  dashboardSetup,
  type GatingConfig,
  handoffKey,
  openGatingStore,
  signInConfig,
} from './gatingSetup.ts';
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

/** The parts of the gating module that `startBot` starts and stops together. */
interface GatingParts extends BotGating {
  /** None in a shard process: the shard manager serves the pages and hands proofs over (signedProofs.ts). */
  verifyServer: WebServer | null;
  ownsStore: boolean;
}

/** The shards a shard process serves (from the shard manager). */
export interface ShardSlice {
  ids: number[];
  count: number;
  /** Shard processes in all (each takes its share of the bot's REST budget for member lists). */
  processes: number;
}

/** Open the store (unless given), create the service and start the verification server. */
async function startGating(input: {
  config: GatingConfig;
  logger: Logger;
  web3bio: Web3BioClient;
  client: Client;
  store?: GatingStore | undefined;
  /** In a shard process: its shards. No HTTP server; verified signatures arrive through the store. */
  shards: ShardSlice | undefined;
  /**
   * The gateway worker of an INTERACTIONS=http deployment: the web replicas serve the pages; signatures
   * and gating interactions arrive through the store.
   */
  worker: boolean;
  /** INTERACTIONS=http in one process: `POST /interactions` on the pages' server. */
  interactions?: InteractionEndpoint;
  metrics: BotMetrics;
}): Promise<GatingParts> {
  const { config, logger } = input;
  if (!config.PUBLIC_URL) throw new Error('PUBLIC_URL is required when GATING_ENABLED=true');
  const { oauth, key, siwe, farcaster } = signInConfig({ ...config, PUBLIC_URL: config.PUBLIC_URL }, logger);
  const store = input.store ?? (await openGatingStore(config));
  try {
    const service = new GatingService({
      ...(config.LINKED_ROLES_ENABLED && oauth && key ? { linkedRoles: { oauth, key } } : {}),
      ...(input.shards
        ? {
            signedProofInbox: {},
            linkedRoleRechecks: false,
            memberListPagesPerSecond: MEMBER_LIST_PAGES_PER_SECOND / input.shards.processes,
          }
        : {}),
      // The replicas cannot nudge a worker on another machine: it looks often.
      ...(input.worker && !input.shards ? { signedProofInbox: { pollMs: 500 } } : {}),
      // The replicas have no gateway cache: they read each server's owner and roles from the store, and
      // whichever process serves the dashboard reads there which servers the bot is in, and their names.
      ...(input.worker || config.DASHBOARD_ENABLED ? { authoritySnapshots: {} } : {}),
      // Dashboard pages served elsewhere (the shard manager, web replicas) queue their requests for us.
      ...(config.DASHBOARD_ENABLED
        ? {
            dashboardInbox: {
              pollMs: input.worker ? DEFAULT_REQUEST_POLL_MS : 1_000,
              leaseMs: config.GATING_LEASE_SECONDS * 1_000,
            },
          }
        : {}),
      ...measuredGating(config, input.metrics),
      store,
      web3bio: input.web3bio,
      discord: input.client,
      logger: logger.child({ module: 'gating' }),
      siwe,
      farcaster: farcaster !== undefined,
      noticeText: gatingNoticeText,
      recheckIntervalMs: config.GATING_RECHECK_HOURS * 3_600_000,
      dueCheckMs: config.GATING_DUE_CHECK_SECONDS * 1_000,
      confirmMs: config.GATING_CONFIRM_MINUTES * 60_000,
      auditRetentionMs: config.AUDIT_RETENTION_DAYS * 86_400_000,
    });
    const verifyServer =
      input.shards || input.worker
        ? null
        : await startPagesServer(
            config,
            {
              store,
              siwe,
              ...(oauth ? { oauth } : {}),
              ...(service.linkedRolePages ? { linkedRoles: service.linkedRolePages } : {}),
              ...(input.interactions ? { interactions: input.interactions } : {}),
              ...dashboardOf(config, { oauth, key }, store, service, input.client, logger),
              ...(farcaster ? { farcaster } : {}),
              onVerified: (result) => service.verification.completeSignature(result),
              logger: logger.child({ module: 'web' }),
            },
            DEFAULT_HTTP_PORT,
          );
    return {
      service,
      store,
      verifyUrl: verifyServer?.url ?? config.PUBLIC_URL,
      verifyServer,
      ownsStore: input.store === undefined,
    };
  } catch (error) {
    if (input.store === undefined) await store.close().catch(() => undefined);
    throw error;
  }
}

/** The dashboard for this process's pages: its own guilds' requests run here, others' go through the store. */
function dashboardOf(
  config: GatingConfig,
  signIn: { oauth: DiscordOAuthConfig | undefined; key: Buffer | undefined },
  store: GatingStore,
  service: GatingService,
  client: Client,
  logger: Logger,
): { dashboard?: DashboardSetup } {
  const operations = localFirstOperations({
    owns: (guildId) => servesGuild(client, guildId),
    run: (request) => service.dashboard.run(request),
    queue: queuedOperations({ store }),
    logger: logger.child({ module: 'dashboard' }),
  });
  const dashboard = dashboardSetup(config, signIn, store, operations);
  return dashboard ? { dashboard } : {};
}

/**
 * The discord.js client with the fewest intents the enabled features need, caching only what the bot
 * reads (clientCaches.ts); with `shards`, only those.
 */
export function createDiscordClient(
  config: Pick<Config, 'DISCORD_API_URL' | 'GATING_ENABLED'>,
  shards?: ShardSlice,
  caches: CachePolicy = 'lean',
): Client {
  const intents = [GatewayIntentBits.Guilds];
  if (config.GATING_ENABLED) intents.push(GatewayIntentBits.GuildMembers);
  return new Client({
    intents,
    ...(shards ? { shards: shards.ids, shardCount: shards.count } : {}),
    allowedMentions: { parse: [], repliedUser: false },
    rest: config.DISCORD_API_URL ? { api: config.DISCORD_API_URL } : {},
    ...clientCacheOptions(caches),
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
}): Promise<Bot> {
  const { config, logger, web3bio } = options;
  const metrics = options.metrics ?? createMetrics();
  const commands = options.commands ?? commandsFor(config);
  const sharded = options.shards !== undefined;
  const overHttp = config.INTERACTIONS === 'http';
  // INTERACTIONS=http, PROCESS_ROLE=gateway: gating for the web replicas, whose gating interactions arrive through the store.
  const worker = overHttp && config.PROCESS_ROLE === 'gateway';
  const client = createDiscordClient(config, options.shards, options.discordCaches);
  // Interaction answers (callbacks, webhook edits, follow-ups, files) go through this, not client.rest.
  const webhooks = new InteractionWebhooks(config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL);
  // The endpoint is on the pages' server, made before the router it dispatches to.
  let routeInteraction: InteractionEndpoint['dispatch'] = async () => {};
  const interactions: InteractionEndpoint | undefined =
    overHttp && !worker
      ? httpEndpoint(config, webhooks, (interaction, responder) => routeInteraction(interaction, responder))
      : undefined;
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
        })
      : undefined;
  const recentLookups =
    options.recentLookups ??
    createRecentLookups({ redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX });
  const deps: BotDeps = {
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
  const router = interactionRouter(config, deps, metrics, commands);
  routeInteraction = (interaction, responder) => router.handle(interaction, responder);
  countRoleEdits(client, metrics);
  let http: OpsServers = { close: async () => {} };
  try {
    if (!sharded)
      http = await startOpsServers({
        config,
        logger,
        ...botOpsChecks(client, gating, metrics),
        ...(interactions && !gating ? { interactions } : {}),
      });
  } catch (error) {
    await recentLookups.close();
    if (gating) await stopGating(gating, logger);
    await webhooks.close();
    throw error;
  }

  // Interactions are read raw, as Discord sent them: the router works on the same JSON an HTTP POST carries.
  // With an Interactions Endpoint URL set, Discord sends none over the gateway.
  let taking = !overHttp;
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

  // ens-normalize builds its tables on first use, blocking the event loop for about a second; done
  // here, that cost cannot land inside the first interaction's 3 s window, where no deferral timer could fire.
  parseIdentity('vitalik.eth');

  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  try {
    await client.login(config.DISCORD_TOKEN);
    await ready;
  } catch (error) {
    await client.destroy();
    await http.close();
    await recentLookups.close();
    if (gating) await stopGating(gating, logger);
    await webhooks.close();
    throw error;
  }
  gating?.service.start();
  // The dashboard's upstream health: this process's Web3.bio requests, a minute at a time, in the store.
  const upstream =
    gating && config.DASHBOARD_ENABLED
      ? new UpstreamHealthSampler({ metrics, store: gating.store, logger })
      : undefined;
  upstream?.start();
  const inbox =
    worker && gating
      ? new HandoffInbox({
          store: gating.store,
          logger: logger.child({ module: 'handoff' }),
          rest: webhooks,
          run: (interaction, responder) => router.handle(interaction, responder),
          key: handoffKey(config),
          leaseMs: config.GATING_LEASE_SECONDS * 1_000,
          ...(options.shards ? { shards: { ids: options.shards.ids, count: options.shards.count } } : {}),
        })
      : undefined;
  inbox?.start();
  logger.info(
    {
      user: client.user?.tag,
      guilds: client.guilds.cache.size,
      commands: commands.length,
      // A shard process's logger already names its shards (gatewayProcess.ts): only the totals here.
      ...(options.shards ? { shardCount: options.shards.count, processes: options.shards.processes } : {}),
    },
    'bot ready',
  );

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
      taking = false;
      client.ws.off(GatewayDispatchEvents.InteractionCreate, onInteraction);
      const drained = await Promise.race([
        router.drain().then(() => true),
        new Promise<false>((resolve) => setTimeout(resolve, graceMs, false).unref()),
      ]);
      if (!drained) logger.warn({ inFlight: router.inFlight }, 'stopping with interactions still in flight');
      await inbox?.stop();
      await upstream?.stop();
      // Role edits in progress finish (bounded) while the client can still reach Discord.
      if (gating) await stopGating(gating, logger);
      await http.close();
      await recentLookups.close();
      await client.destroy();
      await webhooks.close();
    },
  };
}

/** `/readyz` and the gauges read at each scrape, for one bot process. */
function botOpsChecks(client: Client, gating: GatingParts | undefined, metrics: BotMetrics): OpsChecks {
  const readiness: Record<string, ReadinessCheck> = {
    gateway: () => {
      if (!client.isReady()) throw new Error('gateway not ready');
    },
  };
  if (gating) readiness.store = async () => void (await gating.store.pendingRoleChanges());
  const beforeScrape = async () => {
    recordGatewayPings(client, metrics);
    if (gating) await scrapeGatingStore(gating.store, metrics);
  };
  return { readiness, beforeScrape, registry: metrics.registry, publicPort: !gating };
}

/** Stop the service (in-progress role edits finish, bounded), the verification server, and our store. */
async function stopGating(gating: GatingParts, logger: Logger): Promise<void> {
  const steps: [string, () => Promise<void>][] = [['gating service', () => gating.service.stop()]];
  const { verifyServer } = gating;
  if (verifyServer) steps.push(['verify server', () => verifyServer.close()]);
  if (gating.ownsStore) steps.push(['gating store', () => gating.store.close()]);
  for (const [what, stop] of steps) {
    await stop().catch((error: unknown) => logger.warn({ err: error }, `could not stop the ${what} cleanly`));
  }
}
