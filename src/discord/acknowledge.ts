/** The router's acknowledgement: Discord's 3 s window is met by deferring, in the style the answer will take. */
import type { MessagePayload } from '../render/types.ts';
import type { AnswerStyle } from './answer.ts';
import { type Outcome, withinDeferWindow } from './answerTiming.ts';
import type { Routed } from './resolve.ts';
import type { Responder } from './responder.ts';
import type { RouterDeps } from './routerDeps.ts';

/**
 * Runs `work` and defers first when it is not done within DEFER_AFTER_MS (at once for work known to be
 * slow): `deferred` says which, for the answer.
 */
export function acknowledge(
  router: RouterDeps,
  routed: Routed,
  responder: Responder,
  work: Promise<MessagePayload>,
): Promise<{ outcome: Outcome; deferred: boolean }> {
  const deferAfterMs = routed.defersAtOnce ? 0 : router.deferAfterMs;
  return withinDeferWindow(responder, work, deferral(responder, routed.style), deferAfterMs);
}

/** The deferral for an answer in `style`: a private or public "thinking…", or an update to come. */
export function deferral(responder: Responder, style: AnswerStyle): () => Promise<void> {
  if (style === 'update') return () => responder.deferUpdate();
  return () => responder.defer(style === 'private');
}
