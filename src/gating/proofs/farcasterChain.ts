/**
 * Who may sign for a Farcaster account, read from Farcaster's registries on OP Mainnet through
 * OPTIMISM_RPC_URL: the FID's custody address (IdRegistry `custodyOf`), or an auth address registered
 * for it (KeyRegistry `keyDataOf`: key type 2, state ADDED), as `@farcaster/auth-client`'s verifier
 * accepts them. A node that does not answer, or is not OP Mainnet, is `unavailable`: nothing is decided.
 * @see https://github.com/farcasterxyz/contracts (README: deployed addresses; src/IdRegistry.sol, src/KeyRegistry.sol)
 */
import { createPublicClient, encodeAbiParameters, getAddress, http, isAddressEqual } from 'viem';

/** The registries' addresses on OP Mainnet (farcasterxyz/contracts README). */
export const ID_REGISTRY_ADDRESS = '0x00000000Fc6c5F01Fc30151999387Bb99A9f489b';
export const KEY_REGISTRY_ADDRESS = '0x00000000Fc1237824fb747aBDE0FF18990E59b7e';
const OP_MAINNET = 10;

const ID_REGISTRY_ABI = [
  {
    type: 'function',
    name: 'custodyOf',
    stateMutability: 'view',
    inputs: [{ name: 'fid', type: 'uint256' }],
    outputs: [{ name: 'custody', type: 'address' }],
  },
] as const;

const KEY_REGISTRY_ABI = [
  {
    type: 'function',
    name: 'keyDataOf',
    stateMutability: 'view',
    inputs: [
      { name: 'fid', type: 'uint256' },
      { name: 'key', type: 'bytes' },
    ],
    outputs: [
      {
        type: 'tuple',
        components: [
          { name: 'state', type: 'uint8' },
          { name: 'keyType', type: 'uint32' },
        ],
      },
    ],
  },
] as const;

/** KeyRegistry: `KeyState.ADDED`, and the key type of an auth address. */
const KEY_ADDED = 1;
const AUTH_ADDRESS_KEY_TYPE = 2;

/** How the signer holds the FID, or that it does not; `unavailable` when the chain could not be read. */
export type SignerStanding = 'custody' | 'authAddress' | 'not_authorized' | 'unavailable';

/** Reads a signer's standing for a FID. */
export interface FarcasterChain {
  standing(fid: number, signer: `0x${string}`): Promise<SignerStanding>;
}

/**
 * The chain through `rpcUrl` (one client for the process, its connections reused). `onWrongChain` is told
 * once when the node is not OP Mainnet (an operator's mistake worth a log line).
 */
export function optimismChain(
  rpcUrl: string,
  onProblem: (
    problem: { kind: 'wrong_chain'; chainId: number } | { kind: 'unreachable'; err: unknown },
  ) => void,
): FarcasterChain {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1, timeout: 10_000 }) });
  let chainChecked = false;
  return {
    async standing(fid, signer) {
      try {
        if (!chainChecked) {
          const chainId = await client.getChainId();
          if (chainId !== OP_MAINNET) {
            onProblem({ kind: 'wrong_chain', chainId });
            return 'unavailable';
          }
          chainChecked = true;
        }
        const custody = await client.readContract({
          address: ID_REGISTRY_ADDRESS,
          abi: ID_REGISTRY_ABI,
          functionName: 'custodyOf',
          args: [BigInt(fid)],
        });
        if (isAddressEqual(custody, signer)) return 'custody';
        const key = await client.readContract({
          address: KEY_REGISTRY_ADDRESS,
          abi: KEY_REGISTRY_ABI,
          functionName: 'keyDataOf',
          args: [BigInt(fid), encodeAbiParameters([{ type: 'address' }], [getAddress(signer)])],
        });
        return key.state === KEY_ADDED && key.keyType === AUTH_ADDRESS_KEY_TYPE
          ? 'authAddress'
          : 'not_authorized';
      } catch (err) {
        onProblem({ kind: 'unreachable', err });
        return 'unavailable';
      }
    },
  };
}
