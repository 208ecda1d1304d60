import { setTimeout as delay } from 'node:timers/promises';
import {
  ApplicationCommandOptionType,
  ApplicationIntegrationType,
  type AutocompleteInteraction,
  type CommandInteractionOption,
  type Interaction,
  type MessageComponentInteraction,
  MessageFlags,
  type ModalSubmitInteraction,
} from 'discord.js';
import {
  renderCooldown,
  renderError,
  renderExpiredControls,
  renderNotYourControls,
} from '../render/errors.ts';
import type { MessagePayload, RenderContext } from '../render/types.ts';
import { isWeb3BioError } from '../web3bio/errors.ts';
import {
  type BotDeps,
  type Command,
  type CommandContext,
  type CommandInteraction,
  type CommandOptions,
  type ComponentHandler,
  identityOptionNames,
} from './command.ts';
import type { Cooldown } from './cooldown.ts';
import { decodeCustomId } from './customId.ts';
import { rememberLookup, suggestIdentities } from './identitySuggestions.ts';
import { toEditOptions, toReplyOptions } from './replyOptions.ts';

type Outcome = { ok: true; payload: MessagePayload } | { ok: false; error: unknown };

export interface InteractionRouter {
  /** Handle one interaction. Never rejects: this is the one error boundary. */
  handle(interaction: Interaction): Promise<void>;
  /** Resolves when every interaction in flight has been answered. */
  drain(): Promise<void>;
  readonly inFlight: number;
}

/**
 * Flatten interaction options into `name -> value`. A subcommand (group) is read as `subcommand`
 * (`group`) and its own options are flattened beside it.
 */
export function readOptions(
  data: readonly CommandInteractionOption[],
): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const option of data) {
    if (option.type === ApplicationCommandOptionType.Subcommand) out.subcommand = option.name;
    else if (option.type === ApplicationCommandOptionType.SubcommandGroup) out.group = option.name;
    else if (option.value !== undefined) out[option.name] = option.value;
    if (option.options) Object.assign(out, readOptions(option.options));
  }
  return out;
}

/**
 * The server whose install of the app this interaction came through, or null: in DMs, and in a server that
 * did not install the app (a user's install reaches it, and the bot has no member there).
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object-authorizing-integration-owners-object
 */
export function installedGuildId(
  interaction: Pick<Interaction, 'guildId' | 'authorizingIntegrationOwners'>,
): string | null {
  const { guildId } = interaction;
  const guildOwner = interaction.authorizingIntegrationOwners[ApplicationIntegrationType.GuildInstall];
  return guildId !== null && guildOwner === guildId ? guildId : null;
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

  type RoutedInteraction = CommandInteraction | MessageComponentInteraction | ModalSubmitInteraction;

  const commandContext = (
    interaction: RoutedInteraction | AutocompleteInteraction,
    render: RenderContext,
  ): CommandContext => ({
    deps,
    render,
    userId: interaction.user.id,
    guildId: installedGuildId(interaction),
    interaction,
  });

  /** Run `work`; when it is not done within DEFER_AFTER_MS, `defer` first so Discord's 3 s window is met. */
  async function answerWithinDeferWindow(
    work: Promise<MessagePayload>,
    defer: () => Promise<unknown>,
    deferAfter = deferAfterMs,
  ): Promise<{ outcome: Outcome; deferred: boolean }> {
    const guarded = work.then(
      (payload): Outcome => ({ ok: true, payload }),
      (error: unknown): Outcome => ({ ok: false, error }),
    );
    const timer = new AbortController();
    const first = await Promise.race([
      guarded,
      delay(deferAfter, null, { signal: timer.signal }).catch(() => null),
    ]);
    timer.abort();
    if (first) return { outcome: first, deferred: false };
    await defer();
    return { outcome: await guarded, deferred: true };
  }

  /** Counts a use of a lookup command or of its components; past the limit, answers "slow down" privately. */
  async function refusedByCooldown(
    command: Command,
    interaction: RoutedInteraction,
    base: Record<string, unknown>,
    render: RenderContext,
  ): Promise<boolean> {
    if (!command.cooldown) return false;
    const waitMs = cooldown.take(interaction.user.id);
    if (waitMs === 0) return false;
    deps.logger.info({ ...base, waitMs }, 'cooldown');
    await interaction.reply(toReplyOptions(renderCooldown(waitMs, render), true));
    return true;
  }

  function logOutcome(base: Record<string, unknown>, outcome: Outcome, started: number): void {
    const elapsed = performance.now() - started;
    const ms = Math.round(elapsed);
    const name =
      typeof base.command === 'string' ? base.command : String(base.customId).split('|', 2).join(':');
    const kind = outcome.ok ? 'ok' : isWeb3BioError(outcome.error) ? outcome.error.kind : 'error';
    options.onAnswered?.({ name, outcome: kind, ms: elapsed });
    if (outcome.ok) {
      deps.logger.info({ ...base, ms }, 'interaction answered');
    } else if (isWeb3BioError(outcome.error)) {
      const level =
        outcome.error.kind === 'not_found' || outcome.error.kind === 'invalid_identity' ? 'info' : 'warn';
      deps.logger[level]({ ...base, ms, err: outcome.error.toLog() }, 'interaction answered with an error');
    } else {
      deps.logger.error({ ...base, ms, err: outcome.error }, 'interaction failed');
    }
  }

  async function handleCommand(
    interaction: CommandInteraction,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(interaction.locale);
    const command = byName.get(interaction.commandName);
    if (!command) {
      await interaction.reply(toReplyOptions(renderError(new Error('unknown command'), render), true));
      return;
    }
    if (await refusedByCooldown(command, interaction, base, render)) return;
    const options = readOptions(interaction.options.data);
    const ephemeral = command.ephemeral === true || options.private === true;
    const ctx = commandContext(interaction, render);
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(
      command.answer(options as CommandOptions, ctx),
      () => interaction.deferReply(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
      command.defersAtOnce?.(options as CommandOptions) ? 0 : deferAfterMs,
    );
    logOutcome(base, outcome, started);
    if (outcome.ok) {
      if (deferred) await interaction.editReply(toEditOptions(outcome.payload));
      else await interaction.reply(toReplyOptions(outcome.payload, ephemeral));
      // After the answer, so the write (a Redis round trip with REDIS_URL) never delays it.
      rememberLookup(deps, command, options, { userId: interaction.user.id, guildId: interaction.guildId });
      return;
    }
    const errorPayload = renderError(outcome.error, render);
    if (!deferred) await interaction.reply(toReplyOptions(errorPayload, true));
    else if (ephemeral) await interaction.editReply(toEditOptions(errorPayload));
    else {
      // A public "thinking…" cannot turn private: remove it and answer privately.
      await interaction.deleteReply();
      await interaction.followUp(toReplyOptions(errorPayload, true));
    }
  }

  /** The command and handler a custom id names, or null after answering "unknown" / "expired" privately. */
  async function routed<T>(
    interaction: MessageComponentInteraction | ModalSubmitInteraction,
    base: Record<string, unknown>,
    render: RenderContext,
    pick: (command: Command, handler: string) => T | undefined,
  ): Promise<{ command: Command; handler: T; args: string[] } | null> {
    const parsed = decodeCustomId(interaction.customId);
    const command = parsed ? byName.get(parsed.command) : undefined;
    const handler = parsed && command ? pick(command, parsed.handler) : undefined;
    if (!parsed || !command || handler === undefined) {
      await interaction.reply(toReplyOptions(renderError(new Error('unknown component'), render), true));
      return null;
    }
    if (parsed.expired) {
      deps.logger.info(base, 'component state expired');
      await interaction.reply(toReplyOptions(renderExpiredControls(command.data.name, render.locale), true));
      return null;
    }
    return { command, handler, args: parsed.args };
  }

  /** Answer privately (a panel's click, a modal's submit), deferring privately when slow. */
  async function answerPrivately(
    interaction: MessageComponentInteraction | ModalSubmitInteraction,
    work: Promise<MessagePayload>,
    base: Record<string, unknown>,
    render: RenderContext,
  ): Promise<void> {
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(work, () =>
      interaction.deferReply({ flags: MessageFlags.Ephemeral }),
    );
    logOutcome(base, outcome, started);
    const payload = outcome.ok ? outcome.payload : renderError(outcome.error, render);
    if (deferred) await interaction.editReply(toEditOptions(payload));
    else await interaction.reply(toReplyOptions(payload, true));
  }

  async function handleComponent(
    interaction: MessageComponentInteraction,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(interaction.locale);
    const found = await routed(interaction, base, render, (command, name) => {
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
      await interaction.showModal(route.opener(args, ctx));
      deps.logger.info(base, 'modal shown');
      return;
    }
    if (await refusedByCooldown(command, interaction, base, render)) return;
    const values = interaction.isStringSelectMenu() ? interaction.values : [];
    if (route.kind === 'private') {
      await answerPrivately(interaction, route.handler(args, values, ctx), base, render);
      return;
    }
    const ownerId = interaction.message.interactionMetadata?.user.id;
    if (command.componentsOwnerOnly && ownerId && ownerId !== interaction.user.id) {
      await interaction.reply(toReplyOptions(renderNotYourControls(command.data.name, render.locale), true));
      return;
    }
    await updateMessage(interaction, route.handler, args, values, ctx, base);
  }

  async function updateMessage(
    interaction: MessageComponentInteraction,
    handler: ComponentHandler,
    args: string[],
    values: string[],
    ctx: CommandContext,
    base: Record<string, unknown>,
  ): Promise<void> {
    const started = performance.now();
    const { outcome, deferred } = await answerWithinDeferWindow(handler(args, values, ctx), () =>
      interaction.deferUpdate(),
    );
    logOutcome(base, outcome, started);
    if (outcome.ok) {
      if (deferred) await interaction.editReply(toEditOptions(outcome.payload));
      else await interaction.update(toEditOptions(outcome.payload));
      return;
    }
    const errorPayload = toReplyOptions(renderError(outcome.error, ctx.render), true);
    if (deferred) await interaction.followUp(errorPayload);
    else await interaction.reply(errorPayload);
  }

  async function handleModalSubmit(
    interaction: ModalSubmitInteraction,
    base: Record<string, unknown>,
  ): Promise<void> {
    const render = renderContext(interaction.locale);
    const found = await routed(interaction, base, render, (command, name) => command.modals?.[name]);
    if (!found) return;
    if (await refusedByCooldown(found.command, interaction, base, render)) return;
    const fields: Record<string, string> = {};
    for (const [id, field] of interaction.fields.fields) {
      if ('value' in field && typeof field.value === 'string') fields[id] = field.value;
    }
    const ctx = commandContext(interaction, render);
    await answerPrivately(interaction, found.handler(found.args, fields, ctx), base, render);
  }

  /** Suggestions for the identity option being typed: answered at once (autocomplete cannot be deferred). */
  async function handleAutocomplete(interaction: AutocompleteInteraction): Promise<void> {
    const started = performance.now();
    const command = byName.get(interaction.commandName);
    const focused = interaction.options.getFocused(true);
    const suggest = command?.suggest?.[focused.name];
    const typedSoFar = readOptions(interaction.options.data);
    const choices = suggest
      ? await suggest(
          String(focused.value),
          typedSoFar,
          commandContext(interaction, renderContext(interaction.locale)),
        )
      : command && identityOptionNames(command).includes(focused.name) && typeof focused.value === 'string'
        ? await suggestIdentities(
            deps,
            { userId: interaction.user.id, guildId: interaction.guildId },
            focused.value,
          )
        : [];
    await interaction.respond(choices);
    const name = `${interaction.commandName}:autocomplete`;
    options.onAnswered?.({ name, outcome: 'ok', ms: performance.now() - started });
  }

  async function handle(interaction: Interaction): Promise<void> {
    const base = {
      interactionId: interaction.id,
      userId: interaction.user.id,
      guildId: interaction.guildId,
      context: interaction.context,
      // The gateway shard it came through (DMs come through shard 0).
      shard: interaction.guild?.shardId ?? 0,
      command: interaction.isCommand() ? interaction.commandName : undefined,
      customId:
        interaction.isMessageComponent() || interaction.isModalSubmit() ? interaction.customId : undefined,
    };
    try {
      if (
        interaction.isChatInputCommand() ||
        interaction.isUserContextMenuCommand() ||
        interaction.isMessageContextMenuCommand()
      )
        await handleCommand(interaction, base);
      else if (interaction.isMessageComponent()) await handleComponent(interaction, base);
      else if (interaction.isModalSubmit()) await handleModalSubmit(interaction, base);
      else if (interaction.isAutocomplete()) await handleAutocomplete(interaction);
    } catch (error) {
      deps.logger.error({ ...base, err: error }, 'interaction boundary caught an error');
      await lastResortReply(interaction);
    }
  }

  async function lastResortReply(interaction: Interaction): Promise<void> {
    if (!interaction.isRepliable()) return;
    const payload = toReplyOptions(
      renderError(new Error('internal'), renderContext(interaction.locale)),
      true,
    );
    try {
      if (interaction.replied || interaction.deferred) await interaction.followUp(payload);
      else await interaction.reply(payload);
    } catch (error) {
      deps.logger.warn({ interactionId: interaction.id, err: error }, 'could not send the error reply');
    }
  }

  return {
    handle(interaction) {
      const task = handle(interaction);
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
