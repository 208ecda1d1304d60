/**
 * The router's first step: the command and handler an interaction names, with what the later steps need
 * (how it is answered, its work), or an answer at once when it names none (unknown, expired, crafted) or
 * asks only for a modal.
 */
import {
  type APIChatInputApplicationCommandInteractionData,
  type APIInteraction,
  type APIMessageComponentInteraction,
  type APIModalSubmitInteraction,
  ComponentType,
  InteractionType,
} from 'discord-api-types/v10';
import { renderError, renderExpiredControls } from '../render/errors.ts';
import type { MessagePayload, RenderContext } from '../render/types.ts';
import { type AnswerStyle, answerPrivatelyNow } from './answer.ts';
import { carriesCustomId, localeOf, modalFields, readOptions } from './apiInteraction.ts';
import { type Command, type CommandOptions, isPrivate } from './command.ts';
import { decodeCustomId } from './customId.ts';
import { rememberLookup } from './identitySuggestions.ts';
import type { Responder } from './responder.ts';
import { commandContext, type LogFields, type RouterDeps, renderContext } from './routerDeps.ts';

type CommandInteraction = Extract<APIInteraction, { type: InteractionType.ApplicationCommand }>;
export type RoutedInteraction =
  | CommandInteraction
  | APIMessageComponentInteraction
  | APIModalSubmitInteraction;

/** An interaction resolved to the command and handler it names. */
export interface Routed {
  interaction: RoutedInteraction;
  command: Command;
  render: RenderContext;
  /** How it is acknowledged (deferred) and answered. */
  style: AnswerStyle;
  /** Deferred at once (work known to be slow), not after DEFER_AFTER_MS. */
  defersAtOnce: boolean;
  /** A click on controls of an answer that is not the clicker's own, which would replace it. */
  othersAnswer: boolean;
  /** Starts the handler's work. */
  run: () => Promise<MessagePayload>;
  /** After a successful answer is sent (so it never delays the answer). */
  afterAnswer?: () => void;
}

/** What `interaction` names, or null once it is answered (nothing to route, or a modal shown). */
export function resolve(
  router: RouterDeps,
  interaction: APIInteraction,
  responder: Responder,
  base: LogFields,
): Promise<Routed | null> {
  switch (interaction.type) {
    case InteractionType.ApplicationCommand:
      return resolveCommand(router, interaction, responder);
    case InteractionType.MessageComponent:
      return resolveClick(router, interaction, responder, base);
    case InteractionType.ModalSubmit:
      return resolveSubmit(router, interaction, responder, base);
    default:
      return Promise.resolve(null);
  }
}

async function resolveCommand(
  router: RouterDeps,
  interaction: CommandInteraction,
  responder: Responder,
): Promise<Routed | null> {
  const render = renderContext(router.deps, localeOf(interaction));
  const command = router.byName.get(interaction.data.name);
  if (!command) {
    await responder.reply(renderError(new Error('unknown command'), render), true);
    return null;
  }
  const options = readOptions((interaction.data as APIChatInputApplicationCommandInteractionData).options);
  const ctx = commandContext(router.deps, interaction, render);
  return {
    interaction,
    command,
    render,
    style: command.ephemeral === true || isPrivate(options) ? 'private' : 'public',
    defersAtOnce: command.defersAtOnce?.(options as CommandOptions) === true,
    othersAnswer: false,
    run: () => command.answer(options as CommandOptions, ctx),
    // After the answer, so the write (a Redis round trip with REDIS_URL) never delays it.
    afterAnswer: () =>
      rememberLookup(router.deps, command, options, { userId: ctx.userId, guildId: ctx.guildId }),
  };
}

async function resolveClick(
  router: RouterDeps,
  interaction: APIMessageComponentInteraction,
  responder: Responder,
  base: LogFields,
): Promise<Routed | null> {
  const render = renderContext(router.deps, localeOf(interaction));
  // A click names a component of the clicked message, or it is a crafted one: it runs nothing.
  if (!carriesCustomId(interaction.message, interaction.data.custom_id)) {
    router.deps.logger.warn(base, 'click on a component the message does not carry');
    await answerPrivatelyNow(responder, renderError(new Error('unknown component'), render));
    return null;
  }
  const found = await byCustomId(router, interaction, responder, base, render, clickRoute);
  if (!found) return null;
  const { command, handler: route, args } = found;
  const ctx = commandContext(router.deps, interaction, render);
  if (route.kind === 'modal') {
    await responder.showModal(route.opener(args, ctx));
    router.deps.logger.info(base, 'modal shown');
    return null;
  }
  const values =
    interaction.data.component_type === ComponentType.StringSelect ? interaction.data.values : [];
  // Only the response to the clicker's own interaction is theirs to replace: never a message the bot
  // posted for everyone (a panel has no interaction_metadata), nor someone else's.
  const own = interaction.message.interaction_metadata?.user.id === ctx.userId;
  return {
    interaction,
    command,
    render,
    style: route.kind === 'private' || !own ? 'private' : 'update',
    defersAtOnce: false,
    othersAnswer: route.kind === 'update' && !own,
    run: () => route.handler(args, values, ctx),
  };
}

/** What a click's handler name opens: a modal, a private answer, or an update of the clicked message. */
function clickRoute(command: Command, name: string) {
  const opener = command.modalOpeners?.[name];
  if (opener) return { kind: 'modal' as const, opener };
  const privately = command.privateComponents?.[name];
  if (privately) return { kind: 'private' as const, handler: privately };
  const update = command.components?.[name];
  return update && { kind: 'update' as const, handler: update };
}

async function resolveSubmit(
  router: RouterDeps,
  interaction: APIModalSubmitInteraction,
  responder: Responder,
  base: LogFields,
): Promise<Routed | null> {
  const render = renderContext(router.deps, localeOf(interaction));
  const found = await byCustomId(
    router,
    interaction,
    responder,
    base,
    render,
    (command, name) => command.modals?.[name],
  );
  if (!found) return null;
  const { command, handler, args } = found;
  const fields = modalFields(interaction.data.components);
  const ctx = commandContext(router.deps, interaction, render);
  return {
    interaction,
    command,
    render,
    style: 'private',
    defersAtOnce: false,
    othersAnswer: false,
    run: () => handler(args, fields, ctx),
  };
}

/** The command and handler a custom id names, or null after answering "unknown" / "expired" privately. */
async function byCustomId<T>(
  router: RouterDeps,
  interaction: APIMessageComponentInteraction | APIModalSubmitInteraction,
  responder: Responder,
  base: LogFields,
  render: RenderContext,
  pick: (command: Command, handler: string) => T | undefined,
): Promise<{ command: Command; handler: T; args: string[] } | null> {
  const parsed = decodeCustomId(interaction.data.custom_id);
  const command = parsed ? router.byName.get(parsed.command) : undefined;
  const handler = parsed && command ? pick(command, parsed.handler) : undefined;
  if (!parsed || !command || handler === undefined) {
    await answerPrivatelyNow(responder, renderError(new Error('unknown component'), render));
    return null;
  }
  if (parsed.expired) {
    router.deps.logger.info(base, 'component state expired');
    await answerPrivatelyNow(responder, renderExpiredControls(command.data.name, render.locale));
    return null;
  }
  return { command, handler, args: parsed.args };
}
