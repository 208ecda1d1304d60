/**
 * INTERACTIONS=http. Discord POSTs every interaction to PUBLIC_URL/interactions and the answer goes back
 * in the response, so answering needs no gateway connection. Who runs what (PROCESS_ROLE):
 * - `web`: a stateless replica, any number of them behind a load balancer: the interactions, the signing
 *   and Linked Roles pages. No gateway connection and no bot token on its REST client (it answers through
 *   interaction webhooks). With gating on, gating interactions are deferred and handed to the worker
 *   through the shared store (discord/interactionHandoff.ts).
 * - `gateway`: the one gateway worker (sharded with SHARD_COUNT): member events, re-checks, the role worker,
 *   handed-over interactions and signatures (bot.ts).
 * - `all`: one process does both; without gating it is a web replica, with no gateway connection at all.
 */
import { createRecentLookups } from '../cache/index.ts';
import type { BotDeps, Command } from '../discord/command.ts';
import { handoffQueue } from '../discord/interactionHandoff.ts';
import { DEFAULT_DISCORD_API_URL } from '../discord/oauth.ts';
import type { InteractionRouter } from '../discord/router.ts';
import { InteractionWebhooks } from '../discord/webhookRest.ts';
import { provenIdentitiesOf } from '../gating/provenIdentities.ts';
import type { Logger } from '../ops/log.ts';
import { type BotMetrics, createMetrics } from '../ops/metrics.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { parseIdentity } from '../web3bio/identity.ts';
import type { Config } from './config.ts';
import { handoffKey } from './gatingSetup.ts';
import { httpEndpoint, interactionRouter } from './interactionRouting.ts';
import { startWebTier } from './webTier.ts';

export interface WebReplica {
  router: InteractionRouter;
  /** Where the web app listens (HTTP_HOST:HTTP_PORT). */
  url: string;
  metricsUrl?: string;
  stop(graceMs?: number): Promise<void>;
}

/** Start a web replica: the web app with `POST /interactions`, and no gateway connection. */
export async function startWebReplica(options: {
  config: Config;
  logger: Logger;
  web3bio: Web3BioClient;
  metrics?: BotMetrics;
  commands?: readonly Command[];
}): Promise<WebReplica> {
  const { config, logger, web3bio } = options;
  const metrics = options.metrics ?? createMetrics();
  // Webhook answers carry the interaction's token: this REST client never holds the bot token.
  const rest = new InteractionWebhooks(config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL);
  const recentLookups = createRecentLookups({ redisUrl: config.REDIS_URL, redisPrefix: config.REDIS_PREFIX });
  let router: InteractionRouter | undefined;
  const lone = config.PROCESS_ROLE === 'all';
  try {
    const tier = await startWebTier({
      config,
      logger,
      metrics,
      web3bio,
      pages: true,
      // A lone process with Linked Roles runs their re-check; replicas leave it to the gateway worker.
      linkedRoleRechecks: lone,
      nudge: () => {},
      readiness: {},
      registry: metrics.registry,
      interactions: (store) => {
        const deps: BotDeps = {
          config,
          logger,
          web3bio,
          recentLookups,
          ...(store && config.GATING_ENABLED
            ? { handoff: handoffQueue(store, handoffKey(config)), sharedGating: store }
            : {}),
          ...(store
            ? {
                provenIdentities: (userId: string, guildId: string | null) =>
                  provenIdentitiesOf(store, userId, guildId),
              }
            : {}),
        };
        const made = interactionRouter(config, deps, metrics, options.commands);
        router = made;
        return httpEndpoint(config, rest, (interaction, responder) => made.handle(interaction, responder));
      },
    });
    // See bot.ts: the normaliser's tables are built here, not inside the first interaction's 3 s.
    parseIdentity('vitalik.eth');
    const url = tier.verifyServer?.url ?? tier.ops.url ?? '';
    logger.info(
      { url, role: config.PROCESS_ROLE, handsOverGating: config.GATING_ENABLED },
      'web replica ready',
    );
    const made = router;
    if (!made) throw new Error('the web tier did not set up the interactions endpoint');
    return {
      router: made,
      url,
      ...(tier.ops.metricsUrl ? { metricsUrl: tier.ops.metricsUrl } : {}),
      async stop(graceMs = 10_000) {
        const drained = await Promise.race([
          made.drain().then(() => true),
          new Promise<false>((resolve) => setTimeout(resolve, graceMs, false).unref()),
        ]);
        if (!drained) logger.warn({ inFlight: made.inFlight }, 'stopping with interactions still in flight');
        await tier.close();
        await recentLookups.close();
        await rest.close();
      },
    };
  } catch (error) {
    await recentLookups.close();
    await rest.close();
    throw error;
  }
}
