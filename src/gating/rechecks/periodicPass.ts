/**
 * A pass run every `intervalMs` as a background task (BackgroundTasks: stopped and drained with the
 * gating module), once at start, and never two at once: a `run` while one is running joins it.
 */
import type { BackgroundTasks } from './backgroundTasks.ts';

export abstract class PeriodicPass {
  readonly #tasks: BackgroundTasks;
  readonly #intervalMs: number;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<number> | null = null;

  constructor(tasks: BackgroundTasks, intervalMs: number) {
    this.#tasks = tasks;
    this.#intervalMs = intervalMs;
  }

  start(): void {
    this.#tasks.run('', () => this.run());
    this.#timer = setInterval(() => this.#tasks.run('', () => this.run()), this.#intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  /** One pass (never two at once): what it counts. */
  run(): Promise<number> {
    this.#running ??= this.pass().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  protected abstract pass(): Promise<number>;
}
