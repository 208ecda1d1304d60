/** The router's rights step: whether this user may run what the interaction names now, as the router checks it. */
import { renderCooldown, renderNotYourControls } from '../render/errors.ts';
import { answerPrivatelyNow } from './answer.ts';
import type { Routed } from './resolve.ts';
import type { Responder } from './responder.ts';
import { type LogFields, type RouterDeps, userIdOf } from './routerDeps.ts';

/**
 * Whether `routed` may run: not past the user's cooldown, and not someone else's controls of a command
 * whose controls only its user may use. False after answering the refusal privately.
 */
export async function authorise(
  router: RouterDeps,
  routed: Routed,
  responder: Responder,
  base: LogFields,
): Promise<boolean> {
  if (await refusedByCooldown(router, routed, responder, base)) return false;
  if (routed.othersAnswer && routed.command.componentsOwnerOnly) {
    await answerPrivatelyNow(
      responder,
      renderNotYourControls(routed.command.data.name, routed.render.locale),
    );
    return false;
  }
  return true;
}

/** Counts a use of a lookup command or of its components; past the limit, answers "slow down" privately. */
async function refusedByCooldown(
  router: RouterDeps,
  { command, interaction, render }: Routed,
  responder: Responder,
  base: LogFields,
): Promise<boolean> {
  // Handed over by a web replica: the replica counted it.
  if (!command.cooldown || responder.answered) return false;
  const waitMs = router.cooldown.take(userIdOf(interaction));
  if (waitMs === 0) return false;
  router.deps.logger.info({ ...base, waitMs }, 'cooldown');
  await responder.reply(renderCooldown(waitMs, render), true);
  return true;
}
