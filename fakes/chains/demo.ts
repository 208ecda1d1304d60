/**
 * The chain stand-ins for trying holdings rules offline (`npm run fake-api`): one EVM node for every EVM
 * chain and a Solana node, seeded with a 6-decimal token, an ERC-721 and an ERC-1155 collection and an SPL
 * mint, held by a demo wallet whose key anyone can derive (demo only) and by the demo Farcaster account.
 */
import { keccak256, toBytes } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { closeInTurn } from '../closeInTurn.ts';
import { demoAccounts } from '../farcaster/demo.ts';
import { SOLANA_HOLDER, TEST_MULTI, TEST_NFT, USDC_MINT } from './contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from './evmRpc.ts';
import { type FakeSolanaRpc, startFakeSolanaRpc } from './solanaRpc.ts';

export const DEMO_TOKEN = '0x0000000000000000000000000000000000005dc0';

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
  evm.addToken(TEST_NFT, 'erc721');
  evm.addToken(TEST_MULTI, 'erc1155');
  for (const holder of [demoHolder().address, ...demoAccounts().map((a) => a.account.address)]) {
    evm.setBalance(DEMO_TOKEN, holder, 150_000_000n);
    evm.setBalance(TEST_NFT, holder, 1n);
    evm.setBalance(TEST_MULTI, holder, 2n, 7n);
    evm.setNative(holder, 10n ** 18n);
  }
  solana.addMint(USDC_MINT, 6);
  solana.setTokenBalance(SOLANA_HOLDER, USDC_MINT, 5_000_000n);
  solana.setLamports(SOLANA_HOLDER, 2_000_000_000n);
  return {
    evm,
    solana,
    close: closeInTurn(evm, solana),
  };
}
