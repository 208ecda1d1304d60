/**
 * A stand-in OP Mainnet JSON-RPC node answering what Sign In With Farcaster needs read from Farcaster's
 * contracts: `eth_chainId` and `eth_call` to the IdRegistry (`custodyOf`, `idOf`) and the KeyRegistry
 * (`keyDataOf`). The test sets who holds each FID and which auth addresses are registered, and can take
 * the node down. The ABIs here are written from the contracts' Solidity interfaces (farcasterxyz/contracts
 * `IIdRegistry.sol`, `IKeyRegistry.sol`), independently of the bot's copy, so a wrong selector in the bot
 * fails the tests.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  decodeFunctionData,
  encodeAbiParameters,
  encodeFunctionResult,
  getAddress,
  type Hex,
  parseAbi,
  zeroAddress,
} from 'viem';

/** Where the contracts live on OP Mainnet (farcasterxyz/contracts README). */
export const ID_REGISTRY = '0x00000000Fc6c5F01Fc30151999387Bb99A9f489b';
export const KEY_REGISTRY = '0x00000000Fc1237824fb747aBDE0FF18990E59b7e';
export const OP_MAINNET_CHAIN_ID = 10;

const ID_REGISTRY_ABI = parseAbi([
  'function custodyOf(uint256 fid) view returns (address custody)',
  'function idOf(address owner) view returns (uint256 fid)',
]);
const KEY_REGISTRY_ABI = parseAbi([
  'struct KeyData { uint8 state; uint32 keyType; }',
  'function keyDataOf(uint256 fid, bytes key) view returns (KeyData)',
]);

/** KeyRegistry's `KeyState` and the key type of an auth address (keyType 2), as the contracts define them. */
const KEY_STATE = { null: 0, added: 1, removed: 2 } as const;
const AUTH_ADDRESS_KEY_TYPE = 2;

export interface RpcCall {
  method: string;
  to?: string;
  /** The contract function called, when it was one of ours. */
  functionName?: string;
}

export interface FakeOptimism {
  readonly url: string;
  /** Every call, in order. */
  readonly calls: RpcCall[];
  /** `fid` is now held by `custody` (a transfer or recovery: the old address no longer holds it). */
  setCustody(fid: number, custody: string): void;
  /** Registers `address` as an auth address of `fid` (KeyRegistry keyType 2, ADDED). */
  addAuthAddress(fid: number, address: string): void;
  /** The auth address is removed (KeyRegistry state REMOVED). */
  removeAuthAddress(fid: number, address: string): void;
  /** `unavailable`: every request answers 503; `error`: a JSON-RPC error; `up`: answers. */
  setMode(mode: 'up' | 'unavailable' | 'error'): void;
  /** The chain id it reports (10 unless set: another value plays a node of another chain). */
  setChainId(chainId: number): void;
  close(): Promise<void>;
}

/** The 32-byte key the KeyRegistry stores for an auth address: the address ABI-encoded. */
function authKey(address: string): Hex {
  return encodeAbiParameters([{ type: 'address' }], [getAddress(address)]).toLowerCase() as Hex;
}

export async function startFakeOptimism(options: { port?: number } = {}): Promise<FakeOptimism> {
  const custody = new Map<bigint, string>();
  const keys = new Map<string, number>();
  const calls: RpcCall[] = [];
  let mode: 'up' | 'unavailable' | 'error' = 'up';
  let chainId = OP_MAINNET_CHAIN_ID;

  const fidOf = (address: string): bigint => {
    for (const [fid, holder] of custody) if (holder === address.toLowerCase()) return fid;
    return 0n;
  };

  function call(params: { to?: string; data?: Hex }, record: RpcCall): Hex {
    const to = (params.to ?? '').toLowerCase();
    const data = params.data ?? '0x';
    if (to === ID_REGISTRY.toLowerCase()) {
      const decoded = decodeFunctionData({ abi: ID_REGISTRY_ABI, data });
      record.functionName = decoded.functionName;
      if (decoded.functionName === 'custodyOf') {
        const holder = custody.get(decoded.args[0]) ?? zeroAddress;
        return encodeFunctionResult({
          abi: ID_REGISTRY_ABI,
          functionName: 'custodyOf',
          result: getAddress(holder),
        });
      }
      return encodeFunctionResult({
        abi: ID_REGISTRY_ABI,
        functionName: 'idOf',
        result: fidOf(decoded.args[0]),
      });
    }
    if (to === KEY_REGISTRY.toLowerCase()) {
      const decoded = decodeFunctionData({ abi: KEY_REGISTRY_ABI, data });
      record.functionName = decoded.functionName;
      const [fid, key] = decoded.args;
      const state = keys.get(`${fid}:${key.toLowerCase()}`) ?? KEY_STATE.null;
      return encodeFunctionResult({
        abi: KEY_REGISTRY_ABI,
        functionName: 'keyDataOf',
        result: { state, keyType: state === KEY_STATE.null ? 0 : AUTH_ADDRESS_KEY_TYPE },
      });
    }
    // No contract at that address: an eth_call to it returns nothing.
    return '0x';
  }

  function answer(request: { id?: unknown; method?: unknown; params?: unknown }): unknown {
    const id = request.id ?? null;
    const method = typeof request.method === 'string' ? request.method : '';
    const params = Array.isArray(request.params) ? request.params : [];
    const record: RpcCall = { method };
    calls.push(record);
    if (mode === 'error') return { jsonrpc: '2.0', id, error: { code: -32603, message: 'internal error' } };
    try {
      switch (method) {
        case 'eth_chainId':
          return { jsonrpc: '2.0', id, result: `0x${chainId.toString(16)}` };
        case 'eth_blockNumber':
          return { jsonrpc: '2.0', id, result: '0x1' };
        case 'eth_call': {
          const target = (params[0] ?? {}) as { to?: string; data?: Hex };
          if (target.to) record.to = target.to.toLowerCase();
          return { jsonrpc: '2.0', id, result: call(target, record) };
        }
        default:
          return { jsonrpc: '2.0', id, error: { code: -32601, message: `method ${method} not found` } };
      }
    } catch (error) {
      return { jsonrpc: '2.0', id, error: { code: 3, message: `execution reverted: ${String(error)}` } };
    }
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (mode === 'unavailable') {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        return;
      }
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'parse error' } }));
        return;
      }
      const result = Array.isArray(body) ? body.map((r) => answer(r)) : answer(body as never);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(result));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    setCustody(fid, address) {
      custody.set(BigInt(fid), address.toLowerCase());
    },
    addAuthAddress(fid, address) {
      keys.set(`${fid}:${authKey(address)}`, KEY_STATE.added);
    },
    removeAuthAddress(fid, address) {
      keys.set(`${fid}:${authKey(address)}`, KEY_STATE.removed);
    },
    setMode(next) {
      mode = next;
    },
    setChainId(id) {
      chainId = id;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
