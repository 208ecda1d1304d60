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

/** Run `send` once the chain's limiter lets a request go. */
export async function limited<T>(limiter: RequestLimiter, send: () => Promise<T>): Promise<T> {
  const done = await limiter.acquire();
  try {
    return await send();
  } finally {
    done();
  }
}

export function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
