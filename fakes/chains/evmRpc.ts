/**
 * A stand-in EVM JSON-RPC node for holdings rules: `eth_chainId`, `eth_getBalance`, `eth_blockNumber` and
 * `eth_call` to ERC-20 / ERC-721 `balanceOf(address)` and `decimals()`, ERC-1155 `balanceOf(address,
 * uint256)` and Multicall3 (`aggregate3` with per-call `allowFailure`, `getEthBalance`), alone or in
 * JSON-RPC batch arrays. A call to an address with no contract succeeds with no data, as a node answers a
 * call to a wallet. Selectors are written here from the standards (EIP-20, EIP-721, EIP-1155) and the
 * Multicall3 source, apart from the bot's, so a wrong selector in the bot fails the tests. Counts every
 * request and `eth_call`; `setMode` plays a node that errors, is down, or answers nonsense.
 */

import { decodeAbiParameters, encodeAbiParameters, encodeFunctionResult, type Hex, parseAbi } from 'viem';
import { type JsonRpcRequest, startJsonRpcServer } from './jsonRpcServer.ts';

export const MULTICALL3_ADDRESS = '0xca11bde05977b3631167028862be2a173976ca11';
const SELECTORS = {
  decimals: '0x313ce567',
  balanceOf: '0x70a08231',
  balanceOf1155: '0x00fdd58e',
  aggregate3: '0x82ad56cb',
  getEthBalance: '0x4d2301cc',
} as const;
const AGGREGATE3 = parseAbi([
  'struct Result { bool success; bytes returnData; }',
  'function aggregate3((address target, bool allowFailure, bytes callData)[] calls) payable returns (Result[] returnData)',
]);
const CALLS = [
  { type: 'tuple[]', components: [{ type: 'address' }, { type: 'bool' }, { type: 'bytes' }] },
] as const;

export type TokenKind = 'erc20' | 'erc721' | 'erc1155';
export type EvmMode = 'up' | 'unavailable' | 'error' | 'nonsense';

export interface FakeEvmRpc {
  readonly url: string;
  /** Requests received (a batch array counts once) and `eth_call`s among them (each item of a batch). */
  readonly counts: { requests: number; ethCalls: number; calls: number };
  /** A contract of `kind` (ERC-20 with `decimals`). */
  addToken(contract: string, kind: TokenKind, decimals?: number): void;
  /** `owner`'s balance in base units (`tokenId` for ERC-1155). */
  setBalance(contract: string, owner: string, amount: bigint, tokenId?: bigint): void;
  setNative(owner: string, amount: bigint): void;
  setMode(mode: EvmMode): void;
  resetCounts(): void;
  close(): Promise<void>;
}

const word = (value: bigint): Hex => encodeAbiParameters([{ type: 'uint256' }], [value]);
const addressAt = (data: string, offset: number) => `0x${data.slice(offset + 24, offset + 64)}`.toLowerCase();

export async function startFakeEvmRpc(chainId = 8453, port = 0): Promise<FakeEvmRpc> {
  const tokens = new Map<string, { kind: TokenKind; decimals: number }>();
  const balances = new Map<string, bigint>();
  const counts = { requests: 0, ethCalls: 0, calls: 0 };

  /** One call: a uint's bytes, `null` for a revert, `0x` for an address with no code. */
  function call(to: string, data: string): Hex | null {
    counts.calls += 1;
    const target = to.toLowerCase();
    const selector = data.slice(0, 10);
    const args = data.slice(10);
    if (target === MULTICALL3_ADDRESS) {
      if (selector === SELECTORS.getEthBalance)
        return word(balances.get(`native@${addressAt(args, 0)}`) ?? 0n);
      return null;
    }
    const token = tokens.get(target);
    if (!token) return '0x';
    if (selector === SELECTORS.decimals) return token.kind === 'erc20' ? word(BigInt(token.decimals)) : null;
    if (selector === SELECTORS.balanceOf && token.kind !== 'erc1155')
      return word(balances.get(`${target}@${addressAt(args, 0)}`) ?? 0n);
    if (selector === SELECTORS.balanceOf1155 && token.kind === 'erc1155') {
      const id = BigInt(`0x${args.slice(64, 128)}`);
      return word(balances.get(`${target}/${id}@${addressAt(args, 0)}`) ?? 0n);
    }
    return null;
  }

  function aggregate3(data: string): Hex {
    const [calls] = decodeAbiParameters(CALLS, `0x${data.slice(10)}`) as unknown as [
      [string, boolean, Hex][],
    ];
    const results = calls.map(([target, , callData]) => {
      const answer = call(target, callData);
      return { success: answer !== null, returnData: answer ?? ('0x' as Hex) };
    });
    return encodeFunctionResult({ abi: AGGREGATE3, functionName: 'aggregate3', result: results });
  }

  function answer(request: JsonRpcRequest, mode: EvmMode): object {
    const id = request.id ?? null;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    if (mode === 'error') return { jsonrpc: '2.0', id, error: { code: -32000, message: 'header not found' } };
    switch (request.method) {
      case 'eth_chainId':
        return ok(`0x${chainId.toString(16)}`);
      case 'eth_blockNumber':
        return ok('0x1234');
      case 'eth_getBalance':
        return ok(
          `0x${(balances.get(`native@${String(request.params?.[0]).toLowerCase()}`) ?? 0n).toString(16)}`,
        );
      case 'eth_call': {
        counts.ethCalls += 1;
        if (mode === 'nonsense') return ok('0x1234');
        const tx = (request.params?.[0] ?? {}) as { to?: string; data?: string; input?: string };
        const data = tx.data ?? tx.input ?? '0x';
        const to = (tx.to ?? '').toLowerCase();
        if (to === MULTICALL3_ADDRESS && data.startsWith(SELECTORS.aggregate3)) return ok(aggregate3(data));
        const result = call(to, data);
        return result === null
          ? { jsonrpc: '2.0', id, error: { code: 3, message: 'execution reverted', data: '0x' } }
          : ok(result);
      }
      default:
        return { jsonrpc: '2.0', id, error: { code: -32601, message: 'method not found' } };
    }
  }

  const server = await startJsonRpcServer<EvmMode>({ port, mode: 'up', answer, counts });
  return {
    ...server,
    counts,
    addToken: (contract, kind, decimals = 0) => tokens.set(contract.toLowerCase(), { kind, decimals }),
    setBalance: (contract, owner, amount, tokenId) =>
      balances.set(
        `${contract.toLowerCase()}${tokenId === undefined ? '' : `/${tokenId}`}@${owner.toLowerCase()}`,
        amount,
      ),
    setNative: (owner, amount) => balances.set(`native@${owner.toLowerCase()}`, amount),
    resetCounts: () => Object.assign(counts, { requests: 0, ethCalls: 0, calls: 0 }),
  };
}
