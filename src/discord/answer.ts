/**
 * The router's answers: the handler's outcome as a reply, an edit or a follow-up depending on the state of
 * the interaction, short private answers, and the one error boundary every interaction runs inside.
 */
import { type APIInteraction, InteractionType } from 'discord-api-types/v10';
import { renderError } from '../render/errors.ts';
import type { MessagePayload, RenderContext } from '../render/types.ts';
import type { Outcome } from './answerTiming.ts';
import { localeOf } from './apiInteraction.ts';
import type { Responder } from './responder.ts';
import { type LogFields, type RouterDeps, renderContext } from './routerDeps.ts';

/**
 * How an interaction is acknowledged and answered: a public or a private message, or by updating the
 * message whose component was clicked.
 */
export type AnswerStyle = 'public' | 'private' | 'update';

/** Sends the outcome in `style`, `deferred` or not; an error is always private. */
export async function answer(
  responder: Responder,
  style: AnswerStyle,
  outcome: Outcome,
  deferred: boolean,
  render: RenderContext,
): Promise<void> {
  if (outcome.ok) {
    if (deferred) await responder.editReply(outcome.payload);
    else if (style === 'update') await responder.update(outcome.payload);
    else await responder.reply(outcome.payload, style === 'private');
    return;
  }
  const errorPayload = renderError(outcome.error, render);
  if (!deferred) await responder.reply(errorPayload, true);
  else if (style === 'private') await responder.editReply(errorPayload);
  else if (style === 'update') await responder.followUp(errorPayload, true);
  else {
    // A public "thinking…" cannot turn private: remove it and answer privately.
    await responder.deleteReply();
    await responder.followUp(errorPayload, true);
  }
}

/** A short private answer: the reply, or (handed over already deferred) a private follow-up. */
export async function answerPrivatelyNow(responder: Responder, payload: MessagePayload): Promise<void> {
  if (responder.answered) await responder.followUp(payload, true);
  else await responder.reply(payload, true);
}

/**
 * The one error boundary: runs `dispatch`, and logs what it throws with the interaction's fields, then
 * answers privately that something went wrong where an answer can be sent. Never rejects.
 */
export async function errorBoundary(
  router: RouterDeps,
  interaction: APIInteraction,
  responder: Responder,
  base: LogFields,
  dispatch: () => Promise<void>,
): Promise<void> {
  try {
    await dispatch();
  } catch (error) {
    router.deps.logger.error({ ...base, err: error }, 'interaction boundary caught an error');
    await lastResortReply(router, interaction, responder);
  }
}

async function lastResortReply(
  router: RouterDeps,
  interaction: APIInteraction,
  responder: Responder,
): Promise<void> {
  if (
    interaction.type === InteractionType.Ping ||
    interaction.type === InteractionType.ApplicationCommandAutocomplete
  )
    return;
  const payload = renderError(new Error('internal'), renderContext(router.deps, localeOf(interaction)));
  try {
    await answerPrivatelyNow(responder, payload);
  } catch (error) {
    router.deps.logger.warn({ interactionId: interaction.id, err: error }, 'could not send the error reply');
  }
}
