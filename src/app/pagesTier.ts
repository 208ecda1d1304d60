/**
 * The signing and Linked Roles pages for a process that runs no gating service (the shard manager, a web
 * replica): a verified signature is handed to the process that runs gating through the store. Loaded by
 * webTier.ts only when the pages are on.
 */
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import { queuedOperations } from '../gating/dashboard/requests.ts';
import { createLinkedRoles, linkedRoleRechecks } from '../gating/linkedRoleParts.ts';
import { handOffSignedProof } from '../gating/proofs/signedProofs.ts';
import { IntervalScheduler } from '../gating/rechecks/scheduler.ts';
import { Evaluator } from '../gating/rules/evaluation.ts';
import type { Logger } from '../ops/log.ts';
import type { GatingStore } from '../store/types.ts';
import type { DashboardSetup } from '../web/dashboard/routes.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import { startPagesServer } from '../web/listeners.ts';
import type { WebServer } from '../web/server.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { type Config, DEFAULT_HTTP_PORT } from './config.ts';
import { dashboardSetup, signInConfig } from './gatingSetup.ts';

export async function startPagesTier(o: {
  config: Config;
  logger: Logger;
  web3bio: Web3BioClient;
  store: GatingStore;
  publicUrl: string;
  linkedRoleRechecks: boolean;
  nudge: (guildId: string) => void;
  nudgeDashboard?: ((guildId: string) => void) | undefined;
  interactions: InteractionEndpoint | undefined;
}): Promise<{ server: WebServer; stops: (() => Promise<void> | void)[] }> {
  const { config, logger, store, interactions } = o;
  const stops: (() => Promise<void> | void)[] = [];
  const { oauth, key, siwe, farcaster } = signInConfig({ ...config, PUBLIC_URL: o.publicUrl }, logger);
  const evaluator = new Evaluator({ web3bio: o.web3bio, store, logger, now: Date.now });
  const linked =
    config.LINKED_ROLES_ENABLED && oauth && key
      ? createLinkedRoles({
          store,
          evaluator,
          logger,
          now: Date.now,
          oauth,
          key,
          confirmMs: config.GATING_CONFIRM_MINUTES * 60_000,
        })
      : null;
  if (linked && o.linkedRoleRechecks) {
    const scheduler = new IntervalScheduler({ intervalMs: config.GATING_RECHECK_HOURS * 3_600_000, logger });
    const timer = linkedRoleRechecks(linked.service, scheduler, logger);
    timer.start();
    stops.push(() => timer.stop());
  }
  try {
    const server = await startPagesServer(
      config,
      {
        store,
        siwe,
        ...(oauth ? { oauth } : {}),
        ...(linked ? { linkedRoles: linked.pages } : {}),
        ...(interactions ? { interactions } : {}),
        ...dashboardPages(config, { oauth, key }, store, o.nudgeDashboard),
        ...(farcaster ? { farcaster } : {}),
        onVerified: (proof) => handOffSignedProof(store, proof, { nudge: o.nudge }),
        logger: logger.child({ module: 'web' }),
      },
      DEFAULT_HTTP_PORT,
    );
    stops.push(() => server.close());
    return { server, stops };
  } catch (error) {
    for (const stop of stops) await stop();
    throw error;
  }
}

/** The dashboard's pages here: no gateway state in this process, so every request goes through the store. */
function dashboardPages(
  config: Config,
  signIn: { oauth: DiscordOAuthConfig | undefined; key: Buffer | undefined },
  store: GatingStore,
  nudge: ((guildId: string) => void) | undefined,
): { dashboard?: DashboardSetup } {
  const operations = queuedOperations({ store, ...(nudge ? { nudge } : {}) });
  const dashboard = dashboardSetup(config, signIn, store, operations);
  return dashboard ? { dashboard } : {};
}
