/**
 * Holdings rules (issue #35) through the real bot against the stand-in Discord, Web3.bio and chain nodes
 * (fakes/chains/): each attack beside its honest control. A wallet signed for earns the role and loses it
 * when its balance falls; a name proven by its record earns nothing of the whale its record points at;
 * two signed wallets add up; ERC-721, ERC-1155 and the chain's coin on Base; an SPL token on Solana; a
 * failing node keeps every role and is named in the status; bad values are refused with their reason; a
 * whole-server re-check reads a page of balances in one eth_call.
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import {
  USDC_MINT as MINT,
  TEST_MULTI as MULTI,
  TEST_NFT as NFT,
  TEST_TOKEN as TOKEN,
} from '../../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../../fakes/chains/evmRpc.ts';
import { type FakeSolanaRpc, startFakeSolanaRpc } from '../../fakes/chains/solanaRpc.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  logChannelMessages,
  seen,
  setup,
  signFromReply,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';
import { addOptions, addRule, recheckTwice, ruleCommand } from './ruleShortcuts.ts';

const USDC = (whole: number) => BigInt(whole) * 1_000_000n;

let evm: FakeEvmRpc | undefined;
let sol: FakeSolanaRpc | undefined;
afterEach(async () => {
  await closeGating();
  await evm?.close();
  await sol?.close();
  evm = undefined;
  sol = undefined;
});

async function startHoldings(): Promise<{ g: GatingHarness; evm: FakeEvmRpc; sol: FakeSolanaRpc }> {
  evm = await startFakeEvmRpc(8453);
  sol = await startFakeSolanaRpc();
  evm.addToken(TOKEN, 'erc20', 6);
  evm.addToken(NFT, 'erc721');
  evm.addToken(MULTI, 'erc1155');
  sol.addMint(MINT, 6);
  const g = await startGating({
    env: {
      GATING_CONFIRM_MINUTES: '0',
      BASE_RPC_URL: evm.url,
      SOLANA_RPC_URL: sol.url,
    },
  });
  await setup(g);
  return { g, evm, sol };
}

/** `userId` proves a new wallet by signature (SIWE through the signing page); returns its address. */
async function proveWallet(g: GatingHarness, userId: string): Promise<string> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const address = wallet.address.toLowerCase();
  g.h.upstream.world.setCredentials(address, gatingCredentials(address, {}));
  const reply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId }));
  expect(await signFromReply(g, reply, wallet)).toMatchObject({ status: 200, body: { ok: true } });
  await g.gating.service.idle(g.guildId);
  return address;
}

/** A link proven by signature, written as the signing page writes it (for members in bulk). */
async function signedLink(g: GatingHarness, userId: string, address: string, platform = 'ethereum') {
  await g.gating.store.saveLink(
    {
      guildId: g.guildId,
      userId,
      identity: address,
      platform,
      address,
      proofMethod: 'signature',
      provenAt: Date.now(),
    },
    'verified by signature',
  );
}

const auditReason = (g: GatingHarness, roleId: string, action: 'member_role_add' | 'member_role_remove') =>
  g.h.discord.state.auditLog.find((e) => e.action === action && e.roleIds.includes(roleId))?.reason ?? '';

/** What `value:` suggests while `kind:` holds `kind`. */
async function valueChoices(g: GatingHarness, kind: string, typed: string) {
  const { Subcommand, SubcommandGroup, String: Text } = ApplicationCommandOptionType;
  const result = await g.h.discord.typeInOption({
    name: 'gating',
    focused: 'value',
    value: typed,
    userId: g.ownerId,
    options: [
      {
        type: SubcommandGroup,
        name: 'rule',
        options: [{ type: Subcommand, name: 'add', options: [{ type: Text, name: 'kind', value: kind }] }],
      } as never,
    ],
  });
  return (result.callbacks[0]?.data?.choices ?? []) as { name: string; value: string }[];
}

describe('holdings rules', () => {
  it('a signed wallet earns 150 against :100 and loses it at 50; a record-proven name holding 1,000 earns nothing', async () => {
    const { g, evm } = await startHoldings();
    const holders = await addGuildRole(g, 'Holders', 1);
    const alice = await proveWallet(g, ALICE);
    evm.setBalance(TOKEN, alice, USDC(150));
    // Bob proves bob.eth by its record, which points at a whale's wallet.
    const bob = await addMember(g, 'bob');
    const whale = '0x00000000000000000000000000000000000fa1e5';
    addIdentity(g, 'bob.eth', { discordHandle: 'bob', address: whale });
    evm.setBalance(TOKEN, whale, USDC(1_000));
    await verifyByRecord(g, 'bob.eth', bob);

    const added = await addRule(g, holders, 'token', `base:${TOKEN}:100`);
    expect(added.preview).toContain('1 would gain the role');
    expect(added.applied).toContain(`at least 100 of base:${TOKEN}`);
    await waitFor(() => hasRole(g, ALICE, holders), 'the holders role');
    expect(hasRole(g, bob, holders)).toBe(false);
    expect(auditReason(g, holders, 'member_role_add')).toContain(
      `150 of base:${TOKEN} ≥ 100 (1 signed wallets)`,
    );

    evm.setBalance(TOKEN, alice, USDC(50));
    // A loss is confirmed like any other: seen once, the role stays; seen again, it goes.
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, holders)).toBe(true);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, holders)).toBe(false);
    expect(auditReason(g, holders, 'member_role_remove')).toContain(`50 of base:${TOKEN} < 100`);
    await waitFor(
      () => logChannelMessages(g).some((m) => m.content.includes(`50 of base:${TOKEN} < 100`)),
      'the log line of the drop',
    );
    expect(hasRole(g, bob, holders)).toBe(false);
  });

  it('two signed wallets of 60 add up to :100 (one of 60 does not); ERC-721, ERC-1155 and ETH on Base', async () => {
    const { g, evm } = await startHoldings();
    const holders = await addGuildRole(g, 'Holders', 1);
    const punks = await addGuildRole(g, 'Punks', 1);
    const badges = await addGuildRole(g, 'Badges', 1);
    const eth = await addGuildRole(g, 'ETH', 1);
    const first = await proveWallet(g, ALICE);
    const second = await proveWallet(g, ALICE);
    evm.setBalance(TOKEN, first, USDC(60));
    evm.setBalance(TOKEN, second, USDC(60));
    evm.setBalance(NFT, first, 1n);
    evm.setBalance(MULTI, second, 2n, 7n);
    evm.setNative(second, 2n * 10n ** 18n);
    const carol = await addMember(g, 'carol');
    const single = await proveWallet(g, carol);
    evm.setBalance(TOKEN, single, USDC(60));
    evm.setBalance(MULTI, single, 1n, 7n);
    evm.setNative(single, 10n ** 17n);

    await addRule(g, holders, 'token', `base:${TOKEN}:100`);
    await addRule(g, punks, 'nft', `base:${NFT}`);
    await addRule(g, badges, 'nft', `base:${MULTI}/7:2`);
    await addRule(g, eth, 'token', 'base:native:1');
    await waitFor(
      () => [holders, punks, badges, eth].every((r) => hasRole(g, ALICE, r)),
      'every holdings role',
    );
    expect(auditReason(g, holders, 'member_role_add')).toContain('120 of');
    for (const role of [holders, punks, badges, eth]) expect(hasRole(g, carol, role)).toBe(false);
  });

  it('an SPL token on Solana counts for a signed Solana wallet, not for the same wallet proven by record', async () => {
    const { g, sol } = await startHoldings();
    const spl = await addGuildRole(g, 'SPL', 1);
    const owner = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
    sol.addMint(MINT, 6);
    sol.setTokenBalance(owner, MINT, USDC(5));
    await signedLink(g, ALICE, owner, 'solana');
    const bob = await addMember(g, 'bob');
    const other = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
    sol.setTokenBalance(other, MINT, USDC(5));
    await g.gating.store.saveLink(
      {
        guildId: g.guildId,
        userId: bob,
        identity: 'bob.sol',
        platform: 'solana',
        address: other,
        proofMethod: 'record',
        provenAt: Date.now(),
      },
      'verified by record',
    );
    await addRule(g, spl, 'token', `solana:${MINT}:2.5`);
    await waitFor(() => hasRole(g, ALICE, spl), 'the SPL role');
    expect(auditReason(g, spl, 'member_role_add')).toContain(`5 of solana:${MINT} ≥ 2.5`);
    expect(hasRole(g, bob, spl)).toBe(false);
  });

  it('a node failing during a re-check keeps every role and is named in /gating status; back up, the drop counts', async () => {
    const { g, evm } = await startHoldings();
    const holders = await addGuildRole(g, 'Holders', 1);
    const alice = await proveWallet(g, ALICE);
    evm.setBalance(TOKEN, alice, USDC(150));
    await addRule(g, holders, 'token', `base:${TOKEN}:100`);
    await waitFor(() => hasRole(g, ALICE, holders), 'the holders role');

    evm.setBalance(TOKEN, alice, 0n);
    for (const mode of ['unavailable', 'error', 'nonsense'] as const) {
      evm.setMode(mode);
      await recheckTwice(g);
      expect(hasRole(g, ALICE, holders)).toBe(true);
    }
    const status = seen(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status).toContain('Chain nodes failing: base.');
    const metrics = () => g.h.bot.metrics.registry.metrics();
    const scraped = await metrics();
    expect(scraped).toContain('holdings_rpc_failing{chain="base"} 1');
    expect(scraped).toMatch(/holdings_rpc_failures_total\{chain="base",failure="nonsense"\} [1-9]/);
    expect(await g.gating.store.listRuleConditions(g.guildId)).toHaveLength(1);

    evm.setMode('up');
    await recheckTwice(g);
    expect(hasRole(g, ALICE, holders)).toBe(false);
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status')))).not.toContain('Chain nodes failing');
    expect(await metrics()).toContain('holdings_rpc_failing{chain="base"} 0');
  });

  it('refuses each bad value with its reason and stores nothing', async () => {
    const { g, evm } = await startHoldings();
    const role = await addGuildRole(g, 'Holders', 1);
    const refused = async (kind: string, value: string) =>
      seen(visibleMessage(await ruleCommand(g, 'add', addOptions(role, kind, value))));
    expect(await refused('token', `bitcoin:${TOKEN}:1`)).toContain(
      'Unknown chain. Use one of: ethereum, optimism',
    );
    expect(await refused('token', `polygon:${TOKEN}:1`)).toContain('The polygon chain is not configured');
    expect(await refused('token', 'base:0x12345:1')).toContain('not a contract address');
    expect(await refused('token', `base:${TOKEN}:0`)).toContain('The minimum must be a positive number');
    expect(await refused('token', `base:${TOKEN}:-5`)).toContain('The minimum must be a positive number');
    expect(await refused('nft', `base:${NFT}/abc`)).toContain('ERC-1155 token id must be a whole number');
    expect(await refused('token', `base:${NFT}:1`)).toContain('That contract is not a token on base');
    expect(await refused('nft', `base:${TOKEN}`)).toContain('not an NFT collection on base');
    expect(await refused('token', 'base:0x00000000000000000000000000000000000000e0:1')).toContain(
      'not a token on base',
    );
    const kinds = await g.h.discord.typeInOption({
      name: 'gating',
      focused: 'kind',
      value: '',
      userId: g.ownerId,
      options: [{ type: 2, name: 'rule', options: [{ type: 1, name: 'add', options: [] }] } as never],
    });
    const kindChoices = (kinds.callbacks[0]?.data?.choices ?? []) as { value: string }[];
    expect(kindChoices.map((c) => c.value)).toContain('token');
    // `value:` suggests the configured chains, never one without its RPC URL.
    expect((await valueChoices(g, 'token', '')).map((c) => c.value)).toEqual(
      expect.arrayContaining(['base:', 'base:native:', 'solana:', 'solana:native:']),
    );
    expect((await valueChoices(g, 'token', '')).map((c) => c.value)).not.toContain('polygon:');
    evm.setMode('unavailable');
    expect(await refused('token', `base:${TOKEN}:1`)).toContain('The base node did not answer');
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual([]);
  });

  it('a whole-server /gating recheck of 30 members with two holdings rules on one chain makes at most 4 eth_calls', async () => {
    const { g, evm } = await startHoldings();
    const small = await addGuildRole(g, 'Small', 1);
    const large = await addGuildRole(g, 'Large', 1);
    const members: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      const userId = await addMember(g, `holder${i}`);
      const address = `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`;
      await signedLink(g, userId, address);
      evm.setBalance(TOKEN, address, USDC(i * 10));
      members.push(userId);
    }
    await addRule(g, small, 'token', `base:${TOKEN}:50`);
    await addRule(g, large, 'token', `base:${TOKEN}:200`);
    evm.resetCounts();
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(evm.counts.ethCalls).toBeGreaterThan(0);
    expect(evm.counts.ethCalls).toBeLessThanOrEqual(4);
    expect(members.filter((m) => hasRole(g, m, small))).toHaveLength(25);
    expect(members.filter((m) => hasRole(g, m, large))).toHaveLength(10);
  });
});
