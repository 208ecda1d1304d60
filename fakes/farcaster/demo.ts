/**
 * The Farcaster stand-ins for running the bot offline (`npm run fake-api`): the relay and the OP Mainnet
 * node, with demo accounts the stand-in Web3.bio knows (FID 3, `dwr.farcaster`) whose custody keys are
 * fixed demo keys. The approval link the bot's page shows opens the relay's page, whose "Approve" button
 * plays the member's Farcaster app.
 */
import { keccak256, toBytes } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { closeInTurn } from '../closeInTurn.ts';
import { type FakeOptimism, startFakeOptimism } from './optimism.ts';
import { type DemoAccount, type FakeRelay, startFakeRelay } from './relay.ts';

/** Demo accounts: the seeded Web3.bio world's Farcaster profiles, with keys anyone can derive (demo only). */
export function demoAccounts(): DemoAccount[] {
  const key = (label: string) => keccak256(toBytes(`web3bio-discord-bot offline demo: ${label}`));
  return [{ account: privateKeyToAccount(key('dwr')), fid: 3, username: 'dwr' }];
}

export async function startFarcasterStandIns(ports: { relay?: number; node?: number } = {}): Promise<{
  relay: FakeRelay;
  node: FakeOptimism;
  close(): Promise<void>;
}> {
  const relay = await startFakeRelay({ port: ports.relay ?? 0 });
  const node = await startFakeOptimism({ port: ports.node ?? 0 });
  const accounts = demoAccounts();
  relay.setDemoAccounts(accounts);
  for (const demo of accounts) node.setCustody(demo.fid, demo.account.address);
  return {
    relay,
    node,
    close: closeInTurn(relay, node),
  };
}
