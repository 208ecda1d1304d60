/**
 * Holdings reads for rules: balances of proven wallets, batched per chain (a page of members in a few
 * requests), each cached for BALANCE_TTL_MS, and for a periodic re-check cycle read once in it whatever
 * the servers asking (issue #37: in this process; kept as long as the cache has room); a token's decimals read once and kept (they do not change);
 * each chain's node asked at most `requestsPerSecond` times a second. A chain that fails answers `null`
 * for everything asked of it (the rules keep every role as it is) and is named in `health()`.
 */
import { growingLru } from '../../cache/growingLru.ts';
import { SlidingWindowLimiter } from '../../web3bio/rateLimiter.ts';
import type { ChainFailure, ChainQuery, ChainReader } from './chainReads.ts';
import { type ChainEndpoint, nativeDecimals } from './chains.ts';
import { EvmReader } from './evmReader.ts';
import {
  balanceKey,
  type HoldingChain,
  type HoldingQuery,
  type HoldingsBatch,
  type HoldingTarget,
  targetKey,
} from './holdingValues.ts';

export { balanceKey, type HoldingQuery, type HoldingsBatch };

import { SolanaReader } from './solanaReader.ts';

/** A balance read this recently is used again (a re-check, its dry run and the member's own check). */
export const BALANCE_TTL_MS = 30_000;
const MAX_CACHED_BALANCES = 100_000;
const MAX_KEPT_DECIMALS = 10_000;
/** An owner no one controls: the probe of an NFT contract asks its balance. */
const PROBE_OWNER = '0x000000000000000000000000000000000000dead';

export type ProbeVerdict = 'ok' | 'not_configured' | 'not_a_token' | 'failed';

export interface ChainHealth {
  chain: HoldingChain;
  /** The last read failed. */
  failing: boolean;
  failure: ChainFailure | null;
  /** When the last read failed / worked (ms), or null. */
  failedAt: number | null;
  okAt: number | null;
}

export interface HoldingsReaderOptions {
  chains: readonly ChainEndpoint[];
  /** Requests a second to each chain's node (its own rate limit). */
  requestsPerSecond: number;
  now?: () => number;
  /** Told of each failed read (metrics). */
  onFailure?: (chain: HoldingChain, failure: ChainFailure) => void;
}

export class HoldingsReader {
  readonly #readers = new Map<HoldingChain, ChainReader>();
  readonly #health = new Map<HoldingChain, ChainHealth>();
  /** Balances as read, and when: reused for BALANCE_TTL_MS, or by a cycle that began before `at`. */
  readonly #balances = growingLru<string, { value: bigint; at: number }>({ maxEntries: MAX_CACHED_BALANCES });
  readonly #decimals = growingLru<string, { value: number | null }>({ maxEntries: MAX_KEPT_DECIMALS });
  readonly #now: () => number;
  readonly #onFailure: HoldingsReaderOptions['onFailure'];

  constructor(o: HoldingsReaderOptions) {
    this.#now = o.now ?? Date.now;
    this.#onFailure = o.onFailure;
    for (const { chain, url } of o.chains) {
      const limiter = new SlidingWindowLimiter({ requests: o.requestsPerSecond, intervalMs: 1_000 });
      this.#readers.set(
        chain,
        chain === 'solana' ? new SolanaReader(url, limiter) : new EvmReader(chain, url, limiter),
      );
      this.#health.set(chain, { chain, failing: false, failure: null, failedAt: null, okAt: null });
    }
  }

  /** The chains whose RPC URL is set. */
  get chains(): HoldingChain[] {
    return [...this.#readers.keys()];
  }

  /** Requests sent to a chain's node so far. */
  requests(chain: HoldingChain): number {
    return this.#readers.get(chain)?.requests ?? 0;
  }

  health(): ChainHealth[] {
    return [...this.#health.values()].map((h) => ({ ...h }));
  }

  /**
   * Balances and decimals for the queries: cached ones (unless `fresh`; with `cycleStartedAt`, any read
   * since the cycle began) and, per chain, the rest in one batched read (decimals not yet kept ride along).
   */
  async read(
    queries: readonly HoldingQuery[],
    fresh: boolean,
    cycleStartedAt?: number,
  ): Promise<HoldingsBatch> {
    const balances = new Map<string, bigint | null>();
    const decimals = new Map<string, number | null>();
    const missing = new Map<HoldingChain, ChainQuery[]>();
    const ask = (chain: HoldingChain, q: ChainQuery) => {
      const list = missing.get(chain);
      if (list) list.push(q);
      else missing.set(chain, [q]);
    };
    for (const q of queries) {
      const key = balanceKey(q);
      if (balances.has(key)) continue;
      const cached = fresh ? undefined : this.#keptBalance(key, cycleStartedAt);
      balances.set(key, cached?.value ?? null);
      if (!cached) ask(q.target.chain, q);
      const tKey = targetKey(q.target);
      if (decimals.has(tKey)) continue;
      const known = this.#knownDecimals(q.target);
      decimals.set(tKey, known ?? null);
      if (known === undefined) ask(q.target.chain, { target: q.target, owner: null });
    }
    await Promise.all(
      [...missing].map(async ([chain, asked]) => {
        const values = await this.#read(chain, asked);
        asked.forEach((q, i) => {
          const value = values?.[i] ?? null;
          if (q.owner === null) {
            const d = value === null ? null : Number(value);
            if (values) this.#decimals.set(targetKey(q.target), { value: d });
            decimals.set(targetKey(q.target), d);
            return;
          }
          const key = balanceKey({ target: q.target, owner: q.owner });
          if (value !== null) this.#balances.set(key, { value, at: this.#now() });
          balances.set(key, value);
        });
      }),
    );
    return { balances, decimals };
  }

  #keptBalance(key: string, cycleStartedAt: number | undefined): { value: bigint } | undefined {
    const kept = this.#balances.get(key);
    if (!kept) return undefined;
    const recent = this.#now() - kept.at < BALANCE_TTL_MS;
    return recent || (cycleStartedAt !== undefined && kept.at >= cycleStartedAt) ? kept : undefined;
  }

  /** Whether a rule's target can be read: its chain configured, its contract a token of that kind. */
  async probe(target: HoldingTarget): Promise<ProbeVerdict> {
    if (!this.#readers.has(target.chain)) return 'not_configured';
    if (target.standard === 'native') return 'ok';
    const asks: ChainQuery[] =
      target.standard === 'fungible'
        ? [{ target, owner: null }]
        : [
            { target, owner: PROBE_OWNER },
            // An ERC-721 has no decimals: a contract that answers them is a fungible token.
            ...(target.standard === 'erc721' ? [{ target, owner: null }] : []),
          ];
    const values = await this.#read(target.chain, asks);
    if (!values) return 'failed';
    if (target.standard === 'fungible') {
      const d = values[0] ?? null;
      this.#decimals.set(targetKey(target), { value: d === null ? null : Number(d) });
      return d === null ? 'not_a_token' : 'ok';
    }
    const isNft = values[0] !== null && (target.standard === 'erc1155' || values[1] === null);
    return isNft ? 'ok' : 'not_a_token';
  }

  /** Decimals without a read: the coin's, an NFT's (0), or kept; undefined when they must be read. */
  #knownDecimals(target: HoldingTarget): number | null | undefined {
    if (target.standard === 'native') return nativeDecimals(target.chain);
    if (target.standard !== 'fungible') return 0;
    return this.#decimals.get(targetKey(target))?.value;
  }

  async #read(chain: HoldingChain, queries: ChainQuery[]): Promise<(bigint | null)[] | null> {
    const reader = this.#readers.get(chain);
    const health = this.#health.get(chain);
    if (!reader || !health) return null;
    const answer = await reader.read(queries);
    if (answer.ok) {
      Object.assign(health, { failing: false, failure: null, okAt: this.#now() });
      return answer.values;
    }
    Object.assign(health, { failing: true, failure: answer.failure, failedAt: this.#now() });
    this.#onFailure?.(chain, answer.failure);
    return null;
  }
}
