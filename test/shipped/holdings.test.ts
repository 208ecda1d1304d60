/**
 * Holdings rules in the built bot (issue #35): `npm start` with BASE_RPC_URL reads the stand-in EVM node
 * through the bundle's viem (Multicall3 `aggregate3`): `/gating rule add kind:token` checks the contract's
 * decimals and dry-runs; a contract with no decimals is refused; a chain without its URL is "not
 * configured". The node's URL is never printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_NFT as NFT, TEST_TOKEN as TOKEN } from '../../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../../fakes/chains/evmRpc.ts';
import { visibleMessage } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { gatingSetup, type Stage, seedGuild, startStage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

describe('npm start with BASE_RPC_URL: holdings rules read the chain through the bundle', () => {
  let stage: Stage;
  let evm: FakeEvmRpc;
  let bot: ShippedProcess;
  let seeded: ReturnType<typeof seedGuild>;

  beforeAll(async () => {
    stage = await startStage('holdings');
    evm = await startFakeEvmRpc(8453);
    evm.addToken(TOKEN, 'erc20', 6);
    evm.addToken(NFT, 'erc721');
    seeded = seedGuild(stage.discord);
    const port = await freePort();
    bot = await startShipped(
      { ...stage.env, HTTP_PORT: String(port), BASE_RPC_URL: `${evm.url}/v2/secret-node-key` },
      READY.bot,
    );
  }, 90_000);

  afterAll(async () => {
    await bot?.stop();
    await evm?.close();
    await stage?.close();
  });

  it('checks the contract on the node, dry-runs, refuses a non-token and an unconfigured chain', async () => {
    const { guild, humanRoleId, ruleRoleId } = seeded;
    const gating = (sub: string, options: object[]) =>
      stage.discord.runCommand({
        name: 'gating',
        guildId: guild.id,
        userId: guild.ownerId,
        options: [{ type: 2, name: 'rule', options: [{ type: 1, name: sub, options }] }] as never,
        timeoutMs: 20_000,
      });
    await gatingSetup(stage.discord, guild, humanRoleId);
    const add = (kind: string, value: string) =>
      gating('add', [
        { type: 8, name: 'role', value: ruleRoleId },
        { type: 3, name: 'kind', value: kind },
        { type: 3, name: 'value', value },
      ]);
    const text = (m: ReturnType<typeof visibleMessage>) => JSON.stringify(m.embeds ?? m.content);
    const preview = text(visibleMessage(await add('token', `base:${TOKEN}:100`)));
    expect(preview).toContain('0 would gain the role');
    expect(evm.counts.ethCalls).toBeGreaterThanOrEqual(1);
    expect(text(visibleMessage(await add('token', `base:${NFT}:1`)))).toContain('not a token on base');
    expect(text(visibleMessage(await add('token', `polygon:${TOKEN}:1`)))).toContain('not configured');
    const { stdout, stderr } = bot.output();
    expect(stdout + stderr).not.toContain('secret-node-key');
  });
});
