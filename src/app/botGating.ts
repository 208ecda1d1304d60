/** The gating module in a bot process: its service, store and verification server, started and stopped together. */
import type { Client } from 'discord.js';
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import {
  DEFAULT_REQUEST_POLL_MS,
  localFirstOperations,
  queuedOperations,
} from '../gating/dashboard/requests.ts';
import { MEMBER_LIST_PAGES_PER_SECOND, servesGuild } from '../gating/roles/discordReads.ts';
import { GatingService } from '../gating/service.ts';
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import { gatingNoticeText } from '../render/gatingNotices.ts';
import type { GatingStore } from '../store/types.ts';
import type { DashboardSetup } from '../web/dashboard/routes.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import { startPagesServer } from '../web/listeners.ts';
import type { WebServer } from '../web/server.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { DEFAULT_HTTP_PORT } from './config.ts';
import { dashboardSetup, type GatingConfig, openGatingStore, signInConfig } from './gatingSetup.ts';
import { measuredGating } from './holdingsSetup.ts';

/** The parts of the gating module that `startBot` starts and stops together. */
export interface GatingParts {
  service: GatingService;
  store: GatingStore;
  /** Where the verification server listens (not PUBLIC_URL), e.g. http://127.0.0.1:8080 */
  verifyUrl: string;
  /** None in a shard process: the shard manager serves the pages and hands proofs over (signedProofs.ts). */
  verifyServer: WebServer | null;
  ownsStore: boolean;
}

/** Open the store (unless given), create the service and start the verification server. */
export async function startGating(input: {
  config: GatingConfig;
  logger: Logger;
  web3bio: Web3BioClient;
  client: Client;
  store?: GatingStore | undefined;
  /** In a shard process: its shards. No HTTP server; verified signatures arrive through the store. */
  shards: { processes: number } | undefined;
  /**
   * The gateway worker of an INTERACTIONS=http deployment: the web replicas serve the pages; signatures
   * and gating interactions arrive through the store.
   */
  worker: boolean;
  /** INTERACTIONS=http in one process: `POST /interactions` on the pages' server. */
  interactions?: InteractionEndpoint;
  metrics: BotMetrics;
  /** How often a watched Farcaster sign-in's channel is read (StartBotOptions). */
  farcasterPollMs?: number | undefined;
}): Promise<GatingParts> {
  const { config, logger } = input;
  if (!config.PUBLIC_URL) throw new Error('PUBLIC_URL is required when GATING_ENABLED=true');
  const signIn = signInConfig({ ...config, PUBLIC_URL: config.PUBLIC_URL }, logger);
  const { oauth, key, siwe } = signIn;
  const farcaster =
    signIn.farcaster && input.farcasterPollMs
      ? { ...signIn.farcaster, pollMs: input.farcasterPollMs }
      : signIn.farcaster;
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
      sharingPickUpMs: config.GATING_SHARING_PICKUP_SECONDS * 1_000,
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

/** Stop the service (in-progress role edits finish, bounded), the verification server, and our store. */
export async function stopGating(gating: GatingParts, logger: Logger): Promise<void> {
  const steps: [string, () => Promise<void>][] = [['gating service', () => gating.service.stop()]];
  const { verifyServer } = gating;
  if (verifyServer) steps.push(['verify server', () => verifyServer.close()]);
  if (gating.ownsStore) steps.push(['gating store', () => gating.store.close()]);
  for (const [what, stop] of steps) {
    await stop().catch((error: unknown) => logger.warn({ err: error }, `could not stop the ${what} cleanly`));
  }
}
