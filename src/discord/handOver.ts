/** A web replica's step for gating commands: acknowledge, then queue the interaction for the gateway worker. */
import { renderError } from '../render/errors.ts';
import { deferral } from './acknowledge.ts';
import type { Command } from './command.ts';
import type { Routed } from './resolve.ts';
import type { Responder } from './responder.ts';
import type { LogFields, RouterDeps } from './routerDeps.ts';

/** Whether this process hands the command to the gateway worker (a web replica, for a gating command). */
export function handsOver(router: RouterDeps, command: Command, responder: Responder): boolean {
  const { deps } = router;
  return (
    command.handedToGateway === true && !deps.gating && deps.handoff !== undefined && !responder.answered
  );
}

/** Defer (Discord's 3 s window), then queue the interaction for the gateway worker, which answers it. */
export async function handOver(
  router: RouterDeps,
  { interaction, style, render }: Routed,
  responder: Responder,
  base: LogFields,
): Promise<void> {
  const { deps } = router;
  await deferral(responder, style)();
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
    router.logOutcome(base, { ok: false, error }, started);
    await responder.followUp(renderError(error, render), true);
  }
}
