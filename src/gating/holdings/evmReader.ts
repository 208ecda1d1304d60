/**
 * EVM balances through Multicall3's `aggregate3` (the contract viem's `multicall` calls), with
 * `allowFailure` on every call: a token that reverts answers `null` for itself and sinks nothing else.
 * One `eth_call` carries up to CALLS_PER_EVM_BATCH reads; the chain's own coin is read in the same
 * batch through Multicall3's `getEthBalance`. A failed or unreadable `eth_call` fails the whole read.
 *
 * @see https://github.com/mds1/multicall3
 */
import {
  createPublicClient,
  decodeFunctionResult,
  encodeFunctionData,
  erc20Abi,
  erc1155Abi,
  type Hex,
  http,
  multicall3Abi,
  type PublicClient,
} from 'viem';
import type { RequestLimiter } from '../../web3bio/rateLimiter.ts';
import { type ChainQuery, type ChainRead, ChunkedReader, type ItemRead } from './chainReads.ts';
import { EVM_CHAINS, MULTICALL3 } from './chains.ts';
import type { EvmChain } from './holdingValues.ts';

/** Reads per `eth_call`: about 36 bytes of calldata and under 30k gas each, far inside any node's caps. */
export const CALLS_PER_EVM_BATCH = 1_000;
const RPC_TIMEOUT_MS = 10_000;

type Call = { target: Hex; allowFailure: true; callData: Hex };

function callOf(q: ChainQuery): Call {
  const { target, owner } = q;
  const address = target.contract as Hex;
  if (owner === null) {
    return {
      target: address,
      allowFailure: true,
      callData: encodeFunctionData({ abi: erc20Abi, functionName: 'decimals' }),
    };
  }
  if (target.standard === 'native') {
    const callData = encodeFunctionData({
      abi: multicall3Abi,
      functionName: 'getEthBalance',
      args: [owner as Hex],
    });
    return { target: MULTICALL3, allowFailure: true, callData };
  }
  const callData =
    target.standard === 'erc1155'
      ? encodeFunctionData({
          abi: erc1155Abi,
          functionName: 'balanceOf',
          args: [owner as Hex, BigInt(target.tokenId ?? '0')],
        })
      : encodeFunctionData({ abi: erc20Abi, functionName: 'balanceOf', args: [owner as Hex] });
  return { target: address, allowFailure: true, callData };
}

/** A call's answer: a uint (a balance, or decimals), or null when it reverted or is no uint. */
function itemOf(result: { success: boolean; returnData: Hex }, decimals: boolean): ItemRead {
  if (!result.success || result.returnData.length !== 66) return null;
  const value = BigInt(result.returnData);
  return decimals && value > 255n ? null : value;
}

export class EvmReader extends ChunkedReader {
  readonly #client: PublicClient;

  constructor(chain: EvmChain, url: string, limiter: RequestLimiter) {
    super(limiter, CALLS_PER_EVM_BATCH);
    this.#client = createPublicClient({
      chain: EVM_CHAINS[chain],
      transport: http(url, { retryCount: 0, timeout: RPC_TIMEOUT_MS }),
    });
  }

  protected async readChunk(queries: readonly ChainQuery[]): Promise<ChainRead> {
    const calls = queries.map(callOf);
    const data = encodeFunctionData({ abi: multicall3Abi, functionName: 'aggregate3', args: [calls] });
    let returned: Hex | undefined;
    try {
      returned = (await this.#client.call({ to: MULTICALL3, data })).data;
    } catch {
      return { ok: false, failure: 'unreachable' };
    }
    try {
      if (returned === undefined) return { ok: false, failure: 'nonsense' };
      const results = decodeFunctionResult({
        abi: multicall3Abi,
        functionName: 'aggregate3',
        data: returned,
      });
      if (results.length !== calls.length) return { ok: false, failure: 'nonsense' };
      return { ok: true, values: results.map((r, i) => itemOf(r, queries[i]?.owner === null)) };
    } catch {
      return { ok: false, failure: 'nonsense' };
    }
  }
}
