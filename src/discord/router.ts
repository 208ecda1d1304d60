import { type APIInteraction, InteractionType } from 'discord-api-types/v10';
import { acknowledge } from './acknowledge.ts';
import { answer, errorBoundary } from './answer.ts';
import { outcomeLogger } from './answerTiming.ts';
import { interactionName } from './apiInteraction.ts';
import { authorise } from './authorise.ts';
import { autocomplete } from './autocomplete.ts';
import type { BotDeps, Command } from './command.ts';
import type { Cooldown } from './cooldown.ts';
import { handOver, handsOver } from './handOver.ts';
import { resolve } from './resolve.ts';
import type { Responder } from './responder.ts';
import { type LogFields, type RouterDeps, userIdOf } from './routerDeps.ts';

export interface InteractionRouter {
  /**
   * Handle one interaction (Discord's JSON), answering through `responder`. Never rejects: this is the one
   * error boundary. `shard`: the gateway shard it came through, for logs.
   */
  handle(interaction: APIInteraction, responder: Responder, meta?: { shard?: number }): Promise<void>;
  /** Resolves when every interaction in flight has been answered. */
  drain(): Promise<void>;
  readonly inFlight: number;
}

/** The router: builds what its steps share, and runs each interaction through them. */
export function createRouter(options: {
  commands: readonly Command[];
  deps: BotDeps;
  cooldown: Cooldown;
  /** Told of every answer (metrics): the command, or `command:handler` for a component; `ok` or the error kind. */
  onAnswered?: (answer: { name: string; outcome: string; ms: number }) => void;
}): InteractionRouter {
  const { deps, cooldown, onAnswered } = options;
  const router: RouterDeps = {
    deps,
    byName: new Map(options.commands.map((c) => [c.data.name, c])),
    cooldown,
    deferAfterMs: deps.config.DEFER_AFTER_MS,
    logOutcome: outcomeLogger(deps.logger, onAnswered),
    onAnswered,
  };
  const inFlight = new Set<Promise<void>>();

  /**
   * The steps, in order: what it names (resolve), may it run (authorise), then hand it to the gateway
   * worker, or run the handler, deferring when it is slow (acknowledge), and answer by state.
   */
  async function dispatch(interaction: APIInteraction, responder: Responder, base: LogFields): Promise<void> {
    if (interaction.type === InteractionType.ApplicationCommandAutocomplete)
      return autocomplete(router, interaction, responder);
    const routed = await resolve(router, interaction, responder, base);
    if (!routed || !(await authorise(router, routed, responder, base))) return;
    if (handsOver(router, routed.command, responder)) return handOver(router, routed, responder, base);
    const started = performance.now();
    const { outcome, deferred } = await acknowledge(router, routed, responder, routed.run());
    router.logOutcome(base, outcome, started);
    await answer(responder, routed.style, outcome, deferred, routed.render);
    if (outcome.ok) routed.afterAnswer?.();
  }

  async function handle(interaction: APIInteraction, responder: Responder, shard: number): Promise<void> {
    const base = {
      interactionId: interaction.id,
      userId: userIdOf(interaction),
      guildId: interaction.guild_id ?? null,
      context: interaction.context,
      shard,
      ...interactionName(interaction),
    };
    await errorBoundary(router, interaction, responder, base, () => dispatch(interaction, responder, base));
  }

  return {
    handle(interaction, responder, meta) {
      const task = handle(interaction, responder, meta?.shard ?? 0);
      inFlight.add(task);
      return task.finally(() => inFlight.delete(task));
    },
    async drain() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
    get inFlight() {
      return inFlight.size;
    },
  };
}
