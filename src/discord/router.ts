import {
  type APIChatInputApplicationCommandInteractionData,
  type APIInteraction,
  type APIMessageComponentInteraction,
  type APIModalSubmitInteraction,
  ComponentType,
  InteractionType,
} from 'discord-api-types/v10';
import {
  renderCooldown,
  renderError,
  renderExpiredControls,
  renderNotYourControls,
} from '../render/errors.ts';
import type { MessagePayload, RenderContext } from '../render/types.ts';
import { outcomeLogger, withinDeferWindow } from './answerTiming.ts';
import {
  actingUser,
  carriesCustomId,
  focusedOption,
  installedGuildId,
  interactionName,
  localeOf,
  modalFields,
  readOptions,
} from './apiInteraction.ts';
import {
  type BotDeps,
  type Command,
  type CommandContext,
  type CommandOptions,
  type ComponentHandler,
  identityOptionNames,
} from './command.ts';
import type { Cooldown } from './cooldown.ts';
import { decodeCustomId } from './customId.ts';
import { rememberLookup, suggestIdentities } from './identitySuggestions.ts';
import type { Responder } from './responder.ts';

type CommandInteraction = Extract<APIInteraction, { type: InteractionType.ApplicationCommand }>;
type AutocompleteInteraction = Extract<
  APIInteraction,
  { type: InteractionType.ApplicationCommandAutocomplete }
>;
type RoutedInteraction = CommandInteraction | APIMessageComponentInteraction | APIModalSubmitInteraction;

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

export function createRouter(options: {
  commands: readonly Command[];
  deps: BotDeps;
  cooldown: Cooldown;
  /** Told of every answer (metrics): the command, or `command:handler` for a component; `ok` or the error kind. */
  onAnswered?: (answer: { name: string; outcome: string; ms: number }) => void;
}): InteractionRouter {
  const { deps, cooldown } = options;
  const byName = new Map(options.commands.map((c) => [c.data.name, c]));
  const inFlight = new Set<Promise<void>>();
  const deferAfterMs = deps.config.DEFER_AFTER_MS;

  const renderContext = (locale: string): RenderContext => ({
    locale,
    nowSec: Math.floor(Date.now() / 1_000),
    ipfsGateway: deps.config.IPFS_GATEWAY,
  });

  const userIdOf = (interaction: APIInteraction): string => actingUser(interaction)?.id ?? '';

  const commandContext = (
    interaction: RoutedInteraction | AutocompleteInteraction,
    render: RenderContext,
  ): CommandContext => ({
    deps,
    render,
    userId: userIdOf(interaction),
    guildId: installedGuildId(interaction),
    interaction,
  });

  const answerWithinDeferWindow = (
    responder: Responder,
    work: Promise<MessagePayload>,
    defer: () => Promise<unknown>,
    deferAfter = deferAfterMs,
  ) => withinDeferWindow(responder, work, defer, deferAfter);

  /** Counts a use of a lookup command or of its components; past the limit, answers "slow down" privately. */
  async function refusedByCooldown(
    command: Command,
    interaction: RoutedInteraction,
    responder: Responder,
    base: Record<string, unknown>,
    render: RenderContext,
  ): Promise<boolean> {
    // Handed over by a web replica: the replica counted it.
    if (!command.cooldown || responder.answered) return false;
    const waitMs = cooldown.take(userIdOf(interaction));
    if (waitMs === 0) return false;
    deps.logger.info({ ...base, waitMs }, 'cooldown');
    await responder.reply(renderCooldown(waitMs, render), true);
    return true;
  }

  const logOutcome = outcomeLogger(deps.logger, options.onAnswered);

  async function handleCommand(
    interaction: CommandInteraction,
    responder: Responder,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(localeOf(interaction));
    const command = byName.get(interaction.data.name);
    if (!command) {
      await responder.reply(renderError(new Error('unknown command'), render), true);
      return;
    }
    if (await refusedByCooldown(command, interaction, responder, base, render)) return;
    const options = readOptions((interaction.data as APIChatInputApplicationCommandInteractionData).options);
    const ephemeral = command.ephemeral === true || options.private === true;
    if (handsOver(command, responder)) {
      await handOver(interaction, responder, () => responder.defer(ephemeral), base, render);
      return;
    }
    const ctx = commandContext(interaction, render);
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(
      responder,
      command.answer(options as CommandOptions, ctx),
      () => responder.defer(ephemeral),
      command.defersAtOnce?.(options as CommandOptions) ? 0 : deferAfterMs,
    );
    logOutcome(base, outcome, started);
    if (outcome.ok) {
      if (deferred) await responder.editReply(outcome.payload);
      else await responder.reply(outcome.payload, ephemeral);
      // After the answer, so the write (a Redis round trip with REDIS_URL) never delays it.
      rememberLookup(deps, command, options, { userId: ctx.userId, guildId: ctx.guildId });
      return;
    }
    const errorPayload = renderError(outcome.error, render);
    if (!deferred) await responder.reply(errorPayload, true);
    else if (ephemeral) await responder.editReply(errorPayload);
    else {
      // A public "thinking…" cannot turn private: remove it and answer privately.
      await responder.deleteReply();
      await responder.followUp(errorPayload, true);
    }
  }

  /** The command and handler a custom id names, or null after answering "unknown" / "expired" privately. */
  async function routed<T>(
    interaction: APIMessageComponentInteraction | APIModalSubmitInteraction,
    responder: Responder,
    base: Record<string, unknown>,
    render: RenderContext,
    pick: (command: Command, handler: string) => T | undefined,
  ): Promise<{ command: Command; handler: T; args: string[] } | null> {
    const parsed = decodeCustomId(interaction.data.custom_id);
    const command = parsed ? byName.get(parsed.command) : undefined;
    const handler = parsed && command ? pick(command, parsed.handler) : undefined;
    if (!parsed || !command || handler === undefined) {
      await answerPrivatelyNow(responder, renderError(new Error('unknown component'), render));
      return null;
    }
    if (parsed.expired) {
      deps.logger.info(base, 'component state expired');
      await answerPrivatelyNow(responder, renderExpiredControls(command.data.name, render.locale));
      return null;
    }
    return { command, handler, args: parsed.args };
  }

  /** Whether this process hands the command to the gateway worker (a web replica, for a gating command). */
  function handsOver(command: Command, responder: Responder): boolean {
    return (
      command.handedToGateway === true && !deps.gating && deps.handoff !== undefined && !responder.answered
    );
  }

  /** Defer (Discord's 3 s window), then queue the interaction for the gateway worker, which answers it. */
  async function handOver(
    interaction: RoutedInteraction,
    responder: Responder,
    defer: () => Promise<void>,
    base: Record<string, unknown>,
    render: RenderContext,
  ): Promise<void> {
    await defer();
    const started = performance.now();
    try {
      const handed = await deps.handoff?.handOver(interaction);
      const ms = Math.round(performance.now() - started);
      // The store holds one hand-off per interaction: the same one again is a replay, and acts no more.
      if (handed === 'replayed')
        deps.logger.warn(
          { ...base, ms },
          'interaction already handed to the gateway worker: replay not queued',
        );
      else deps.logger.info({ ...base, ms }, 'interaction handed to the gateway worker');
    } catch (error) {
      logOutcome(base, { ok: false, error }, started);
      await responder.followUp(renderError(error, render), true);
    }
  }

  /** A short private answer: the reply, or (handed over already deferred) a private follow-up. */
  async function answerPrivatelyNow(responder: Responder, payload: MessagePayload): Promise<void> {
    if (responder.answered) await responder.followUp(payload, true);
    else await responder.reply(payload, true);
  }

  /** Answer privately (a panel's click, a modal's submit), deferring privately when slow. */
  async function answerPrivately(
    responder: Responder,
    work: Promise<MessagePayload>,
    base: Record<string, unknown>,
    render: RenderContext,
  ): Promise<void> {
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(responder, work, () => responder.defer(true));
    logOutcome(base, outcome, started);
    const payload = outcome.ok ? outcome.payload : renderError(outcome.error, render);
    if (deferred) await responder.editReply(payload);
    else await responder.reply(payload, true);
  }

  async function handleComponent(
    interaction: APIMessageComponentInteraction,
    responder: Responder,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(localeOf(interaction));
    // A click names a component of the clicked message, or it is a crafted one: it runs nothing.
    if (!carriesCustomId(interaction.message, interaction.data.custom_id)) {
      deps.logger.warn(base, 'click on a component the message does not carry');
      await answerPrivatelyNow(responder, renderError(new Error('unknown component'), render));
      return;
    }
    const found = await routed(interaction, responder, base, render, (command, name) => {
      const opener = command.modalOpeners?.[name];
      if (opener) return { kind: 'modal' as const, opener };
      const privately = command.privateComponents?.[name];
      if (privately) return { kind: 'private' as const, handler: privately };
      const update = command.components?.[name];
      return update && { kind: 'update' as const, handler: update };
    });
    if (!found) return;
    const { command, handler: route, args } = found;
    const ctx = commandContext(interaction, render);
    if (route.kind === 'modal') {
      await responder.showModal(route.opener(args, ctx));
      deps.logger.info(base, 'modal shown');
      return;
    }
    if (await refusedByCooldown(command, interaction, responder, base, render)) return;
    const values =
      interaction.data.component_type === ComponentType.StringSelect ? interaction.data.values : [];
    // Only the response to the clicker's own interaction is theirs to replace: never a message the bot
    // posted for everyone (a panel has no interaction_metadata), nor someone else's.
    const own = interaction.message.interaction_metadata?.user.id === ctx.userId;
    if (route.kind === 'update' && !own && command.componentsOwnerOnly) {
      await answerPrivatelyNow(responder, renderNotYourControls(command.data.name, render.locale));
      return;
    }
    if (route.kind === 'private' || !own) {
      if (handsOver(command, responder))
        await handOver(interaction, responder, () => responder.defer(true), base, render);
      else await answerPrivately(responder, route.handler(args, values, ctx), base, render);
      return;
    }
    if (handsOver(command, responder)) {
      await handOver(interaction, responder, () => responder.deferUpdate(), base, render);
      return;
    }
    await updateMessage(responder, route.handler, args, values, ctx, base);
  }

  async function updateMessage(
    responder: Responder,
    handler: ComponentHandler,
    args: string[],
    values: string[],
    ctx: CommandContext,
    base: Record<string, unknown>,
  ): Promise<void> {
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(responder, handler(args, values, ctx), () =>
      responder.deferUpdate(),
    );
    logOutcome(base, outcome, started);
    if (outcome.ok) {
      if (deferred) await responder.editReply(outcome.payload);
      else await responder.update(outcome.payload);
      return;
    }
    const errorPayload = renderError(outcome.error, ctx.render);
    if (deferred) await responder.followUp(errorPayload, true);
    else await responder.reply(errorPayload, true);
  }

  async function handleModalSubmit(
    interaction: APIModalSubmitInteraction,
    responder: Responder,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(localeOf(interaction));
    const found = await routed(
      interaction,
      responder,
      base,
      render,
      (command, name) => command.modals?.[name],
    );
    if (!found) return;
    if (await refusedByCooldown(found.command, interaction, responder, base, render)) return;
    if (handsOver(found.command, responder)) {
      await handOver(interaction, responder, () => responder.defer(true), base, render);
      return;
    }
    const fields = modalFields(interaction.data.components);
    const ctx = commandContext(interaction, render);
    await answerPrivately(responder, found.handler(found.args, fields, ctx), base, render);
  }

  /** Suggestions for the identity option being typed: answered at once (autocomplete cannot be deferred). */
  async function handleAutocomplete(
    interaction: AutocompleteInteraction,
    responder: Responder,
  ): Promise<void> {
    const started = performance.now();
    const command = byName.get(interaction.data.name);
    const focused = focusedOption(interaction.data.options);
    const suggest = focused ? command?.suggest?.[focused.name] : undefined;
    const choices = !focused
      ? []
      : suggest
        ? await suggest(
            focused.value,
            readOptions(interaction.data.options),
            commandContext(interaction, renderContext(localeOf(interaction))),
          )
        : command && identityOptionNames(command).includes(focused.name)
          ? await suggestIdentities(
              deps,
              { userId: userIdOf(interaction), guildId: installedGuildId(interaction) },
              focused.value,
            )
          : [];
    await responder.suggest(choices);
    const name = `${interaction.data.name}:autocomplete`;
    options.onAnswered?.({ name, outcome: 'ok', ms: performance.now() - started });
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
    try {
      switch (interaction.type) {
        case InteractionType.ApplicationCommand:
          await handleCommand(interaction, responder, base);
          break;
        case InteractionType.MessageComponent:
          await handleComponent(interaction, responder, base);
          break;
        case InteractionType.ModalSubmit:
          await handleModalSubmit(interaction, responder, base);
          break;
        case InteractionType.ApplicationCommandAutocomplete:
          await handleAutocomplete(interaction, responder);
          break;
        default:
          break;
      }
    } catch (error) {
      deps.logger.error({ ...base, err: error }, 'interaction boundary caught an error');
      await lastResortReply(interaction, responder);
    }
  }

  async function lastResortReply(interaction: APIInteraction, responder: Responder): Promise<void> {
    if (
      interaction.type === InteractionType.Ping ||
      interaction.type === InteractionType.ApplicationCommandAutocomplete
    )
      return;
    const payload = renderError(new Error('internal'), renderContext(localeOf(interaction)));
    try {
      await answerPrivatelyNow(responder, payload);
    } catch (error) {
      deps.logger.warn({ interactionId: interaction.id, err: error }, 'could not send the error reply');
    }
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
