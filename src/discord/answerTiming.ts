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

/**
 * Deadlines of one length, with one timer between them: they pass in the order they were made, so the
 * timer waits for the oldest. A timer per answer (made and cleared on every interaction) cost several
 * µs of every cached answer; this costs a push.
 */
class Deadlines {
  readonly #ms: number;
  readonly #queue: { at: number; pass: ((value: null) => void) | null }[] = [];
  #head = 0;
  #timer: NodeJS.Timeout | undefined;

  constructor(ms: number) {
    this.#ms = ms;
  }

  add(): Deadline {
    const entry: { at: number; pass: ((value: null) => void) | null } = {
      at: performance.now() + this.#ms,
      pass: null,
    };
    const passed = new Promise<null>((resolve) => {
      entry.pass = resolve;
    });
    this.#queue.push(entry);
    if (this.#timer === undefined) this.#arm(this.#ms);
    return {
      passed,
      cancel: () => {
        entry.pass = null;
      },
    };
  }

  #arm(ms: number): void {
    // Unref: an answer in progress keeps the process alive by itself; a passed deadline alone should not.
    this.#timer = setTimeout(() => this.#tick(), Math.max(0, Math.ceil(ms))).unref();
  }

  #tick(): void {
    this.#timer = undefined;
    const now = performance.now();
    let entry = this.#queue[this.#head];
    for (; entry && (entry.pass === null || entry.at <= now); entry = this.#queue[++this.#head])
      entry.pass?.(null);
    if (this.#head > 1_024 && this.#head > this.#queue.length / 2) {
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
    if (entry) this.#arm(entry.at - now);
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
