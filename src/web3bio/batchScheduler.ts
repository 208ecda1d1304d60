import { NotFoundError } from './errors.ts';
import type { NsProfile } from './types.ts';

/**
 * Collects ids asked for in one turn of the event loop and sends them as batch requests of at most
 * `size` ids (the server's batch limit), so concurrent batch calls share requests and every id goes through the cache alone.
 */
export class BatchScheduler {
  readonly #size: number;
  readonly #fetch: (ids: readonly string[]) => Promise<Map<string, NsProfile>>;
  #pending = new Map<string, { resolve: (p: NsProfile) => void; reject: (e: unknown) => void }[]>();
  #scheduled = false;

  constructor(size: number, fetch: (ids: readonly string[]) => Promise<Map<string, NsProfile>>) {
    this.#size = size;
    this.#fetch = fetch;
  }

  load(id: string): Promise<NsProfile> {
    return new Promise((resolve, reject) => {
      const waiters = this.#pending.get(id);
      if (waiters) waiters.push({ resolve, reject });
      else this.#pending.set(id, [{ resolve, reject }]);
      if (!this.#scheduled) {
        this.#scheduled = true;
        // setImmediate runs after the microtasks in which the cache calls every loader of a batch call.
        setImmediate(() => this.#flush());
      }
    });
  }

  #flush(): void {
    this.#scheduled = false;
    const pending = this.#pending;
    this.#pending = new Map();
    const ids = [...pending.keys()];
    for (let start = 0; start < ids.length; start += this.#size) {
      const chunk = ids.slice(start, start + this.#size);
      this.#fetch(chunk).then(
        (found) => {
          for (const id of chunk) {
            const item = found.get(id);
            for (const waiter of pending.get(id) ?? []) {
              if (item) waiter.resolve(item);
              else waiter.reject(new NotFoundError(id, 200, '', ''));
            }
          }
        },
        (error: unknown) => {
          for (const id of chunk) for (const waiter of pending.get(id) ?? []) waiter.reject(error);
        },
      );
    }
  }
}
