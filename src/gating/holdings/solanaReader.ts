/**
 * Solana balances by plain JSON-RPC (`getBalance`, `getTokenAccountsByOwner` with a mint filter, and
 * `getAccountInfo` of a mint for its decimals), batched as JSON-RPC arrays of up to
 * CALLS_PER_SOLANA_BATCH requests. Plain requests rather than `@solana/kit`: three read-only methods
 * need no signing, transactions or codecs, and a dependency of its own would add megabytes to the
 * bundle for a few lines of fetch and a schema.
 *
 * @see https://solana.com/docs/rpc/http/gettokenaccountsbyowner
 */
import { z } from 'zod';
import type { RequestLimiter } from '../../web3bio/rateLimiter.ts';
import { type ChainQuery, type ChainRead, ChunkedReader, type ItemRead } from './chainReads.ts';

/** Requests per JSON-RPC array: public nodes take 100 or more; fewer keeps one answer small. */
export const CALLS_PER_SOLANA_BATCH = 100;
const RPC_TIMEOUT_MS = 10_000;

const RawAnswer = z.object({
  id: z.number(),
  result: z.unknown().optional(),
  error: z.unknown().optional(),
});
const RawBalance = z.object({ value: z.number().int().nonnegative() });
const RawTokenAccounts = z.object({
  value: z.array(
    z.object({
      account: z.object({
        data: z.object({
          parsed: z.object({
            info: z.object({ tokenAmount: z.object({ amount: z.string().regex(/^\d+$/) }) }),
          }),
        }),
      }),
    }),
  ),
});
const RawMint = z.object({
  value: z
    .object({
      data: z.object({
        parsed: z.object({
          type: z.literal('mint'),
          info: z.object({ decimals: z.number().int().min(0).max(255) }),
        }),
      }),
    })
    .nullable(),
});

function requestOf(q: ChainQuery, id: number): object {
  const commitment = { commitment: 'confirmed' };
  if (q.owner === null) {
    return {
      jsonrpc: '2.0',
      id,
      method: 'getAccountInfo',
      params: [q.target.contract, { encoding: 'jsonParsed', ...commitment }],
    };
  }
  if (q.target.standard === 'native') {
    return { jsonrpc: '2.0', id, method: 'getBalance', params: [q.owner, commitment] };
  }
  return {
    jsonrpc: '2.0',
    id,
    method: 'getTokenAccountsByOwner',
    params: [q.owner, { mint: q.target.contract }, { encoding: 'jsonParsed', ...commitment }],
  };
}

/** One answer as a number; null for an error or a shape that is not the method's. */
function itemOf(q: ChainQuery, result: unknown): ItemRead {
  if (q.owner === null) {
    const mint = RawMint.safeParse(result);
    return mint.success && mint.data.value ? BigInt(mint.data.value.data.parsed.info.decimals) : null;
  }
  if (q.target.standard === 'native') {
    const balance = RawBalance.safeParse(result);
    return balance.success ? BigInt(balance.data.value) : null;
  }
  const accounts = RawTokenAccounts.safeParse(result);
  if (!accounts.success) return null;
  return accounts.data.value.reduce(
    (sum, a) => sum + BigInt(a.account.data.parsed.info.tokenAmount.amount),
    0n,
  );
}

export class SolanaReader extends ChunkedReader {
  readonly #url: string;

  constructor(url: string, limiter: RequestLimiter) {
    super(limiter, CALLS_PER_SOLANA_BATCH);
    this.#url = url;
  }

  protected async readChunk(queries: readonly ChainQuery[]): Promise<ChainRead> {
    let raw: unknown;
    try {
      const response = await fetch(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(queries.map((q, id) => requestOf(q, id))),
        signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
      });
      if (!response.ok) return { ok: false, failure: 'unreachable' };
      raw = await response.json();
    } catch {
      return { ok: false, failure: 'unreachable' };
    }
    const parsed = z.array(RawAnswer).safeParse(raw);
    if (!parsed.success) return { ok: false, failure: 'nonsense' };
    const byId = new Map(parsed.data.map((a) => [a.id, a]));
    const values: ItemRead[] = [];
    for (const [id, q] of queries.entries()) {
      const answer = byId.get(id);
      if (!answer) return { ok: false, failure: 'nonsense' };
      values.push(answer.error === undefined ? itemOf(q, answer.result) : null);
    }
    return { ok: true, values };
  }
}
