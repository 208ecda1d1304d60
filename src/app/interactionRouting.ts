/** What every process that answers interactions builds the same way: the router, and the HTTP endpoint. */

import { commandsFor } from '../../commands/index.ts';
import type { BotDeps, Command } from '../discord/command.ts';
import { Cooldown } from '../discord/cooldown.ts';
import { createRouter, type InteractionRouter } from '../discord/router.ts';
import type { WebhookRest } from '../discord/webhookRest.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import type { InteractionEndpoint } from '../web/interactions.ts';
import type { Config } from './config.ts';

/** The endpoint for `dispatch` (the router's handle), from config (loadConfig made sure of the key). */
export function httpEndpoint(
  config: Pick<Config, 'DISCORD_PUBLIC_KEY' | 'DISCORD_APPLICATION_ID'>,
  rest: WebhookRest,
  dispatch: InteractionEndpoint['dispatch'],
): InteractionEndpoint {
  if (!config.DISCORD_PUBLIC_KEY) throw new Error('INTERACTIONS=http needs DISCORD_PUBLIC_KEY');
  return {
    publicKey: config.DISCORD_PUBLIC_KEY,
    applicationId: config.DISCORD_APPLICATION_ID,
    rest,
    dispatch,
  };
}

/** The cooldown and router every process that answers interactions builds the same way. */
export function interactionRouter(
  config: Config,
  deps: BotDeps,
  metrics: BotMetrics,
  commands: readonly Command[] = commandsFor(config),
): InteractionRouter {
  const cooldown = new Cooldown({
    limit: config.USER_COOLDOWN_COMMANDS,
    windowMs: config.USER_COOLDOWN_SECONDS * 1_000,
  });
  return createRouter({
    commands,
    deps,
    cooldown,
    onAnswered: ({ name, outcome, ms }) => {
      metrics.interactions.inc({ command: name, outcome });
      metrics.answerSeconds.observe({ command: name }, ms / 1_000);
    },
  });
}
