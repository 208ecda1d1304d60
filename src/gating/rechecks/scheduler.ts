/**
 * When the periodic re-check runs. A small interface, so a distributed queue (one runner per cluster)
 * can take over from the in-process timer later.
 */
import type { Logger } from '../../ops/log.ts';

export interface RecheckScheduler {
  /** Run `task` periodically until `stop`; a run never overlaps the previous one. */
  start(task: () => Promise<void>): void;
  stop(): void;
}

export interface IntervalSchedulerOptions {
  intervalMs: number;
  /** Each wait is the interval ± this fraction, so many bots (or guilds) do not fire in step. Default 0.1. */
  jitterRatio?: number;
  logger?: Logger;
  /** Uniform in [0, 1); injectable for tests. */
  random?: () => number;
}

export const DEFAULT_JITTER_RATIO = 0.1;

/**
 * How often the scheduler looks for due guilds: each guild is due at its own time (see dueAfter), so the
 * timer ticks many times per interval (at most every 15 minutes) and the passes spread over it.
 */
export function schedulerTickMs(recheckIntervalMs: number): number {
  return Math.max(1_000, Math.min(recheckIntervalMs / 24, 15 * 60_000));
}
/** setTimeout fires at once for longer delays (a 32-bit limit), so longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** `intervalMs` scaled by a uniform factor in [1 - ratio, 1 + ratio]; never negative. */
export function jitteredDelay(
  intervalMs: number,
  jitterRatio: number,
  random: () => number = Math.random,
): number {
  const ratio = Math.min(Math.max(jitterRatio, 0), 1);
  const factor = 1 + ratio * (2 * random() - 1);
  return Math.max(0, Math.round(intervalMs * factor));
}

/** An in-process timer: the first run one jittered interval after `start`, the next one after each run ends. */
export class IntervalScheduler implements RecheckScheduler {
  readonly #intervalMs: number;
  readonly #jitterRatio: number;
  readonly #logger: Logger | undefined;
  readonly #random: () => number;
  #timer: NodeJS.Timeout | null = null;
  #running = false;

  constructor(opts: IntervalSchedulerOptions) {
    if (!Number.isFinite(opts.intervalMs) || opts.intervalMs <= 0) {
      throw new RangeError('intervalMs must be a positive number');
    }
    this.#intervalMs = opts.intervalMs;
    this.#jitterRatio = opts.jitterRatio ?? DEFAULT_JITTER_RATIO;
    this.#logger = opts.logger;
    this.#random = opts.random ?? Math.random;
  }

  start(task: () => Promise<void>): void {
    if (this.#running) return;
    this.#running = true;
    this.#schedule(task);
  }

  stop(): void {
    this.#running = false;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #schedule(task: () => Promise<void>): void {
    if (!this.#running) return;
    const due = Date.now() + jitteredDelay(this.#intervalMs, this.#jitterRatio, this.#random);
    this.#waitUntil(due, () => {
      task()
        .catch((error: unknown) => this.#logger?.error({ err: error }, 'periodic re-check failed'))
        .finally(() => this.#schedule(task));
    });
  }

  #waitUntil(due: number, then: () => void): void {
    const left = due - Date.now();
    this.#timer = setTimeout(
      () => {
        this.#timer = null;
        if (!this.#running) return;
        if (left > MAX_TIMER_MS) this.#waitUntil(due, then);
        else then();
      },
      Math.min(Math.max(left, 0), MAX_TIMER_MS),
    );
    // A pending re-check must never keep the process alive on shutdown.
    this.#timer.unref();
  }
}
