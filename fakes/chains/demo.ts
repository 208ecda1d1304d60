/**
 * The chain stand-ins for trying holdings rules offline (`npm run fake-api`): one EVM node for every EVM
 * chain and a Solana node, seeded with a 6-decimal token, an ERC-721 and an ERC-1155 collection and an SPL
 * mint, held by a demo wallet whose key anyone can derive (demo only) and by the demo Farcaster account.
 */
import { keccak256, toBytes } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { closeInTurn } from '../closeInTurn.ts';
import { demoAccounts } from '../farcaster/demo.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from './evmRpc.ts';
import { type FakeSolanaRpc, startFakeSolanaRpc } from './solanaRpc.ts';

export const DEMO_TOKEN = '0x0000000000000000000000000000000000005dc0';
export const DEMO_NFT = '0x0000000000000000000000000000000000000721';
export const DEMO_MULTI = '0x0000000000000000000000000000000000001155';
export const DEMO_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const DEMO_SOLANA_HOLDER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';

/** The demo holder: a wallet whose key is derived from a public label (never hold anything real with it). */
export function demoHolder() {
  return privateKeyToAccount(keccak256(toBytes('web3bio-discord-bot offline demo: holder')));
}

export async function startChainStandIns(ports: { evm?: number; solana?: number } = {}): Promise<{
  evm: FakeEvmRpc;
  solana: FakeSolanaRpc;
  close(): Promise<void>;
}> {
  const evm = await startFakeEvmRpc(8453, ports.evm ?? 0);
  const solana = await startFakeSolanaRpc(ports.solana ?? 0);
  evm.addToken(DEMO_TOKEN, 'erc20', 6);
  evm.addToken(DEMO_NFT, 'erc721');
  evm.addToken(DEMO_MULTI, 'erc1155');
  for (const holder of [demoHolder().address, ...demoAccounts().map((a) => a.account.address)]) {
    evm.setBalance(DEMO_TOKEN, holder, 150_000_000n);
    evm.setBalance(DEMO_NFT, holder, 1n);
    evm.setBalance(DEMO_MULTI, holder, 2n, 7n);
    evm.setNative(holder, 10n ** 18n);
  }
  solana.addMint(DEMO_MINT, 6);
  solana.setTokenBalance(DEMO_SOLANA_HOLDER, DEMO_MINT, 5_000_000n);
  solana.setLamports(DEMO_SOLANA_HOLDER, 2_000_000_000n);
  return {
    evm,
    solana,
    close: closeInTurn(evm, solana),
  };
}
