/** The router's timing and logging of an answer: the deferral window, and one log line per answer. */
import type { Logger } from '../ops/log.ts';
import type { MessagePayload } from '../render/types.ts';
import { isWeb3BioError } from '../web3bio/errors.ts';
import type { Responder } from './responder.ts';

export type Outcome = { ok: true; payload: MessagePayload } | { ok: false; error: unknown };

/**
 * Run `work`; when it is not done within `deferAfterMs`, `defer` first so Discord's 3 s window is met.
 * An interaction a web replica already deferred is not deferred again.
 */
export async function withinDeferWindow(
  responder: Responder,
  work: Promise<MessagePayload>,
  defer: () => Promise<unknown>,
  deferAfterMs: number,
): Promise<{ outcome: Outcome; deferred: boolean }> {
  const guarded = work.then(
    (payload): Outcome => ({ ok: true, payload }),
    (error: unknown): Outcome => ({ ok: false, error }),
  );
  if (responder.answered) return { outcome: await guarded, deferred: true };
  // A plain timer: aborting a timers/promises delay makes an AbortError (with its stack) every answer.
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<null>((resolve) => {
    timer = setTimeout(resolve, deferAfterMs, null);
  });
  const first = await Promise.race([guarded, late]);
  clearTimeout(timer);
  if (first) return { outcome: first, deferred: false };
  await defer();
  return { outcome: await guarded, deferred: true };
}

/** Logs each answer (level by outcome) and tells `onAnswered` (metrics): the command or `command:handler`. */
export function outcomeLogger(
  logger: Logger,
  onAnswered?: (answer: { name: string; outcome: string; ms: number }) => void,
): (base: Record<string, unknown>, outcome: Outcome, started: number) => void {
  return (base, outcome, started) => {
    const elapsed = performance.now() - started;
    const ms = Math.round(elapsed);
    const name =
      typeof base.command === 'string' ? base.command : String(base.customId).split('|', 2).join(':');
    const kind = outcome.ok ? 'ok' : isWeb3BioError(outcome.error) ? outcome.error.kind : 'error';
    onAnswered?.({ name, outcome: kind, ms: elapsed });
    if (outcome.ok) {
      logger.info({ ...base, ms }, 'interaction answered');
    } else if (isWeb3BioError(outcome.error)) {
      const level =
        outcome.error.kind === 'not_found' || outcome.error.kind === 'invalid_identity' ? 'info' : 'warn';
      logger[level]({ ...base, ms, err: outcome.error.toLog() }, 'interaction answered with an error');
    } else {
      logger.error({ ...base, ms, err: outcome.error }, 'interaction failed');
    }
  };
}
