/**
 * The chains holdings rules may read: only those whose RPC URL is set. EVM chains take their definitions
 * (id, native coin) from `viem/chains`; Solana is read by plain JSON-RPC (solanaReader.ts).
 */
import type { Chain } from 'viem';
import { arbitrum, base, linea, mainnet, optimism, polygon } from 'viem/chains';
import type { EvmChain, HoldingChain } from './holdingValues.ts';

/** The setting that names each chain's node. */
export const CHAIN_RPC_SETTINGS = {
  ethereum: 'RPC_URL',
  optimism: 'OPTIMISM_RPC_URL',
  base: 'BASE_RPC_URL',
  arbitrum: 'ARBITRUM_RPC_URL',
  polygon: 'POLYGON_RPC_URL',
  linea: 'LINEA_RPC_URL',
  solana: 'SOLANA_RPC_URL',
} as const satisfies Record<HoldingChain, string>;
export type ChainRpcSetting = (typeof CHAIN_RPC_SETTINGS)[HoldingChain];

export const EVM_CHAINS: Readonly<Record<EvmChain, Chain>> = {
  ethereum: mainnet,
  optimism,
  base,
  arbitrum,
  polygon,
  linea,
};

/** Multicall3, deployed at this address on every chain above (viem's `multicall` uses it too). */
export const MULTICALL3 = '0xcA11bde05977b3631167028862bE2a173976CA11';

/** The decimals of each chain's own coin (SOL: 9; every EVM coin here: 18). */
export function nativeDecimals(chain: HoldingChain): number {
  return chain === 'solana' ? 9 : EVM_CHAINS[chain].nativeCurrency.decimals;
}

export interface ChainEndpoint {
  chain: HoldingChain;
  url: string;
}

/** The chains whose RPC URL is set, from the validated config. */
export function configuredChains(
  config: Partial<Record<ChainRpcSetting, string | undefined>>,
): ChainEndpoint[] {
  return (Object.entries(CHAIN_RPC_SETTINGS) as [HoldingChain, ChainRpcSetting][]).flatMap(
    ([chain, setting]) => {
      const url = config[setting];
      return url ? [{ chain, url }] : [];
    },
  );
}
