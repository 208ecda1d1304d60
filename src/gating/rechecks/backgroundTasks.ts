/** Background work of the gating module (setup re-checks, follow-up syncs, messages), tracked per guild. */
import type { Logger } from '../../ops/log.ts';
import { delay } from '../roles/discordReads.ts';

/** Work in progress per guild ('' for work of no guild), so `idle` and `stop` can wait for it. */
export class BackgroundTasks {
  readonly #logger: Logger;
  readonly #byGuild = new Map<string, Set<Promise<unknown>>>();
  #stopping = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** True once `stop` was called: no new work is taken. */
  get stopping(): boolean {
    return this.#stopping;
  }

  /** Run `task` without waiting for it; a failure is logged. Ignored once stopping. */
  run(guildId: string, task: () => Promise<unknown>): void {
    if (this.#stopping) return;
    this.track(
      guildId,
      task().catch((error: unknown) =>
        this.#logger.error({ err: error, guildId }, 'background gating task failed'),
      ),
    );
  }

  /** Remember work in progress so `settle` and `stop` can wait for it. */
  track(guildId: string, work: Promise<unknown>): void {
    const set = this.#byGuild.get(guildId) ?? new Set();
    this.#byGuild.set(guildId, set);
    const settled: Promise<unknown> = work
      .catch(() => undefined)
      .finally(() => {
        set.delete(settled);
        if (set.size === 0) this.#byGuild.delete(guildId);
      });
    set.add(settled);
  }

  /** Resolves when no work is left for the guild (and none of no guild), or none at all without one. */
  async settle(guildId?: string): Promise<void> {
    for (;;) {
      const tasks =
        guildId === undefined
          ? [...this.#byGuild.values()].flatMap((set) => [...set])
          : [...(this.#byGuild.get(guildId) ?? []), ...(this.#byGuild.get('') ?? [])];
      if (tasks.length === 0) return;
      await Promise.allSettled(tasks);
    }
  }

  /** Take no new work, and wait for the work in progress at most `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.#stopping = true;
    const running = [...this.#byGuild.values()].flatMap((set) => [...set]);
    await Promise.race([Promise.allSettled(running), delay(graceMs)]);
  }
}
