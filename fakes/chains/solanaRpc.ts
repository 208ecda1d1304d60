/**
 * A stand-in Solana JSON-RPC node for holdings rules: `getBalance`, `getTokenAccountsByOwner` (mint filter,
 * jsonParsed) and `getAccountInfo` of a mint (jsonParsed), alone or in batch arrays, shaped as the Solana
 * RPC documents them. An unknown mint in a mint filter answers -32602, as nodes do. Counts requests;
 * `setMode` plays a node that is down or errors.
 */

import { type JsonRpcRequest, startJsonRpcServer } from './jsonRpcServer.ts';

export const TOKEN_PROGRAM = 'TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA';
export type SolanaMode = 'up' | 'unavailable' | 'error';

export interface FakeSolanaRpc {
  readonly url: string;
  readonly counts: { requests: number; calls: number };
  addMint(mint: string, decimals: number): void;
  setTokenBalance(owner: string, mint: string, amount: bigint): void;
  setLamports(owner: string, lamports: bigint): void;
  setMode(mode: SolanaMode): void;
  close(): Promise<void>;
}

export async function startFakeSolanaRpc(port = 0): Promise<FakeSolanaRpc> {
  const mints = new Map<string, number>();
  const tokens = new Map<string, bigint>();
  const lamports = new Map<string, bigint>();
  const counts = { requests: 0, calls: 0 };
  const context = { slot: 300_000_000 };

  function answer(request: JsonRpcRequest, mode: SolanaMode): object {
    counts.calls += 1;
    const id = request.id ?? null;
    const ok = (result: unknown) => ({ jsonrpc: '2.0', id, result });
    const fail = (code: number, message: string) => ({ jsonrpc: '2.0', id, error: { code, message } });
    if (mode === 'error') return fail(-32005, 'Node is behind');
    const [first, second] = request.params ?? [];
    switch (request.method) {
      case 'getBalance':
        return ok({ context, value: Number(lamports.get(String(first)) ?? 0n) });
      case 'getAccountInfo': {
        const decimals = mints.get(String(first));
        if (decimals === undefined) return ok({ context, value: null });
        const parsed = { type: 'mint', info: { decimals, isInitialized: true, supply: '1000000000000' } };
        return ok({
          context,
          value: {
            owner: TOKEN_PROGRAM,
            lamports: 1,
            executable: false,
            data: { program: 'spl-token', parsed, space: 82 },
          },
        });
      }
      case 'getTokenAccountsByOwner': {
        const mint = String((second as { mint?: string } | undefined)?.mint);
        const decimals = mints.get(mint);
        if (decimals === undefined) return fail(-32602, 'Invalid param: could not find mint');
        const amount = tokens.get(`${first}|${mint}`);
        if (amount === undefined) return ok({ context, value: [] });
        const tokenAmount = { amount: amount.toString(), decimals, uiAmountString: amount.toString() };
        const info = { mint, owner: first, isNative: false, state: 'initialized', tokenAmount };
        return ok({
          context,
          value: [
            {
              pubkey: `${mint.slice(0, 20)}Account`,
              account: {
                owner: TOKEN_PROGRAM,
                lamports: 2_039_280,
                data: { program: 'spl-token', parsed: { type: 'account', info }, space: 165 },
              },
            },
          ],
        });
      }
      default:
        return fail(-32601, 'Method not found');
    }
  }

  const server = await startJsonRpcServer<SolanaMode>({ port, mode: 'up', answer, counts });
  return {
    ...server,
    counts,
    addMint: (mint, decimals) => mints.set(mint, decimals),
    setTokenBalance: (owner, mint, amount) => tokens.set(`${owner}|${mint}`, amount),
    setLamports: (owner, amount) => lamports.set(owner, amount),
  };
}
