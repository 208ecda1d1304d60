/**
 * The HTTP side of a process that runs no gating service of its own: the shard manager, and a web replica
 * (INTERACTIONS=http, PROCESS_ROLE=web). With gating or Linked Roles on, it serves the signing and Linked
 * Roles pages (a verified signature goes to the process that runs gating through the store, see
 * gating/proofs/signedProofs.ts) and, when asked, the Linked Roles re-check; else the ops routes on
 * HTTP_PORT. With `interactions`, `POST /interactions` is a route of the same app.
 */
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import type { GatingStore } from '../store/types.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import { type OpsServers, startOpsServers } from '../web/listeners.ts';
import type { MetricsSource, ReadinessCheck } from '../web/ops.ts';
import type { WebServer } from '../web/server.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { recheckCycleScrape, scrapeGatingStore } from './botMetrics.ts';
import type { Config } from './config.ts';
import { openGatingStore } from './gatingSetup.ts';
import { UpstreamHealthSampler } from './upstreamHealth.ts';

export interface WebTier {
  /** Where the pages' server listens, when it runs. */
  verifyServer: WebServer | null;
  ops: OpsServers;
  /** The gating store, when gating or Linked Roles are on. */
  store: GatingStore | null;
  close(): Promise<void>;
}

export async function startWebTier(o: {
  config: Config;
  logger: Logger;
  metrics: BotMetrics;
  web3bio: Web3BioClient;
  /** Serve the signing and Linked Roles pages (gating or Linked Roles on). */
  pages: boolean;
  /** Run the Linked Roles re-check here (the shard manager, a lone replica), not in the gateway process. */
  linkedRoleRechecks: boolean;
  /** Tell the process that runs gating a signed proof is waiting (the store's inbox also polls). */
  nudge: (guildId: string) => void;
  /** Tell the processes that run gating a dashboard request is waiting (their inboxes also poll). */
  nudgeDashboard?: (guildId: string) => void;
  readiness: Record<string, ReadinessCheck>;
  registry: MetricsSource;
  /** `POST /interactions`, made once the store is open. */
  interactions?: (store: GatingStore | null) => InteractionEndpoint;
}): Promise<WebTier> {
  const { config, logger, metrics } = o;
  const gatingOn = config.GATING_ENABLED || config.LINKED_ROLES_ENABLED;
  const pages = o.pages && gatingOn && config.PUBLIC_URL !== undefined;
  const store: GatingStore | null = gatingOn ? await openGatingStore(config) : null;
  const stops: (() => Promise<void> | void)[] = [];
  if (store) stops.push(() => store.close());
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) {
      await Promise.resolve()
        .then(stop)
        .catch((error: unknown) => logger.warn({ err: error }, 'could not stop part of the web tier'));
    }
  };
  try {
    const interactions = o.interactions?.(store);
    let verifyServer: WebServer | null = null;
    if (store && pages && config.PUBLIC_URL) {
      // Loaded only here: a replica without gating never loads the signing code (viem) or discord.js.
      const { startPagesTier } = await import('./pagesTier.ts');
      const tier = await startPagesTier({ ...o, store, publicUrl: config.PUBLIC_URL, interactions });
      verifyServer = tier.server;
      stops.push(...tier.stops);
    }
    if (store && config.DASHBOARD_ENABLED) {
      // The dashboard's upstream health counts this process's Web3.bio requests too.
      const upstream = new UpstreamHealthSampler({ metrics, store, logger });
      upstream.start();
      stops.push(() => upstream.stop());
    }
    const ops = await startOpsServers({
      config,
      logger,
      publicPort: verifyServer === null,
      ...(interactions && verifyServer === null ? { interactions } : {}),
      readiness: {
        ...o.readiness,
        ...(store ? { store: async () => void (await store.pendingRoleChanges()) } : {}),
      },
      beforeScrape: async () => {
        if (store) await scrapeGatingStore(store, metrics, recheckCycleScrape(config, o.web3bio));
      },
      registry: o.registry,
    });
    stops.push(() => ops.close());
    return { verifyServer, ops, store, close };
  } catch (error) {
    await close();
    throw error;
  }
}
