/** The router's timing and logging of an answer: the deferral window, and one log line per answer. */
import type { Logger } from '../ops/log.ts';
import type { MessagePayload } from '../render/types.ts';
import { isWeb3BioError } from '../web3bio/errors.ts';
import { DeadlineQueue } from './deadlineQueue.ts';
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
  const deadline = deadlinesOf(deferAfterMs).add();
  const first = await Promise.race([guarded, deadline.passed]);
  deadline.cancel();
  if (first) return { outcome: first, deferred: false };
  await defer();
  return { outcome: await guarded, deferred: true };
}

/** A deadline `Deadlines.add` made: `passed` resolves (null) once it passes, unless cancelled first. */
interface Deadline {
  passed: Promise<null>;
  cancel(): void;
}

/** Deadlines of one length on one timer (deadlineQueue.ts): a timer per answer cost several µs of every cached answer. */
class Deadlines {
  readonly #queue: DeadlineQueue;

  constructor(ms: number) {
    this.#queue = new DeadlineQueue(ms);
  }

  add(): Deadline {
    let pass: (value: null) => void = () => {};
    const passed = new Promise<null>((resolve) => {
      pass = resolve;
    });
    const entry = { at: 0, expire: () => pass(null) };
    this.#queue.add(entry);
    return { passed, cancel: () => this.#queue.delete(entry) };
  }
}

const deadlinesByLength = new Map<number, Deadlines>();

function deadlinesOf(ms: number): Deadlines {
  let deadlines = deadlinesByLength.get(ms);
  if (!deadlines) {
    deadlines = new Deadlines(ms);
    deadlinesByLength.set(ms, deadlines);
  }
  return deadlines;
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
