/**
 * What a chain read returns: every failure is a value, never a throw, so that a node that errors, times
 * out or answers nonsense leaves each holdings role as it is (evaluation reads `null` as "unknown").
 */
import type { RequestLimiter } from '../../web3bio/rateLimiter.ts';
import type { HoldingTarget } from './holdingValues.ts';

/** Why a whole chain read failed: no answer (error, timeout, 429) or an answer that makes no sense. */
export type ChainFailure = 'unreachable' | 'nonsense';

/** One read of a batch: a number, or `null` when that one call reverted or returned nothing readable. */
export type ItemRead = bigint | null;

export type ChainRead = { ok: true; values: ItemRead[] } | { ok: false; failure: ChainFailure };

/** A balance of `owner`, or (`owner` null) the target's decimals. */
export interface ChainQuery {
  target: HoldingTarget;
  owner: string | null;
}

/** One chain's reader: a batch of queries in as few requests as the node allows. */
export interface ChainReader {
  read(queries: readonly ChainQuery[]): Promise<ChainRead>;
  /** Requests sent so far (the benchmark's and the tests' counter). */
  readonly requests: number;
}

/**
 * A reader that sends queries `chunkSize` at a time, one request each, each once the chain's limiter lets
 * it go; the first failed request fails the read.
 */
export abstract class ChunkedReader implements ChainReader {
  readonly #limiter: RequestLimiter;
  readonly #chunkSize: number;
  #requests = 0;

  constructor(limiter: RequestLimiter, chunkSize: number) {
    this.#limiter = limiter;
    this.#chunkSize = chunkSize;
  }

  get requests(): number {
    return this.#requests;
  }

  /** One request's worth of queries, answered in order. */
  protected abstract readChunk(queries: readonly ChainQuery[]): Promise<ChainRead>;

  async read(queries: readonly ChainQuery[]): Promise<ChainRead> {
    const values: ItemRead[] = [];
    for (let i = 0; i < queries.length; i += this.#chunkSize) {
      const done = await this.#limiter.acquire();
      this.#requests += 1;
      let answer: ChainRead;
      try {
        answer = await this.readChunk(queries.slice(i, i + this.#chunkSize));
      } finally {
        done();
      }
      if (!answer.ok) return answer;
      values.push(...answer.values);
    }
    return { ok: true, values };
  }
}
