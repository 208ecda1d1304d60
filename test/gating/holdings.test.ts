/**
 * Holdings rules (issue #35): values parsed and refused with their reason, whole units against decimals,
 * the outcome of a condition, and the reader against the stand-in EVM and Solana nodes (one aggregate3
 * per batch, a reverting token sinking nothing else, a failing node answering "unknown", never a throw).
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  USDC_MINT as MINT,
  TEST_MULTI as MULTI,
  TEST_NFT as NFT,
  SOLANA_HOLDER as SOL_OWNER,
  TEST_TOKEN as TOKEN,
} from '../../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../../fakes/chains/evmRpc.ts';
import { type FakeSolanaRpc, startFakeSolanaRpc } from '../../fakes/chains/solanaRpc.ts';
import { EVM_CHAINS } from '../../src/gating/holdings/chains.ts';
import { balanceKey, HoldingsReader } from '../../src/gating/holdings/holdingsReader.ts';
import {
  canonicalMinimum,
  type EvmChain,
  formatUnits,
  minimumUnits,
  nativeSymbol,
  parseNftValue,
  parseTokenValue,
  targetOf,
} from '../../src/gating/holdings/holdingValues.ts';
import { readHoldingFacts, signedWallets } from '../../src/gating/rules/holdingFacts.ts';
import { holdingOutcome } from '../../src/gating/rules/holdingOutcomes.ts';
import { conditionKey, conditionOfKey, parseCondition } from '../../src/gating/rules/roleRules.ts';
import type { LinkRecord } from '../../src/store/types.ts';

const wallet = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;

let evm: FakeEvmRpc | undefined;
let sol: FakeSolanaRpc | undefined;
afterEach(async () => {
  await evm?.close();
  await sol?.close();
  evm = undefined;
  sol = undefined;
});

describe('holdings values', () => {
  it('parses token and nft values into canonical keys that read back the same', () => {
    const token = parseCondition('token', ` base:${TOKEN.toUpperCase().replace('0X', '0x')}:0100.50 `);
    expect(token).toEqual({
      ok: true,
      condition: { kind: 'token', chain: 'base', contract: TOKEN, min: '100.5' },
    });
    const erc1155 = parseCondition('nft', `base:${NFT}/007:2`);
    expect(erc1155.ok && conditionKey(erc1155.condition)).toBe(`nft:base:${NFT}/7:2`);
    expect(conditionOfKey(`nft:base:${NFT}/7:2`)).toEqual({
      kind: 'nft',
      chain: 'base',
      contract: NFT,
      tokenId: '7',
      min: 2,
    });
    expect(conditionOfKey(`nft:base:${NFT}:1`)).toEqual({
      kind: 'nft',
      chain: 'base',
      contract: NFT,
      tokenId: null,
      min: 1,
    });
    expect(parseTokenValue('ethereum:NATIVE:1')).toMatchObject({
      ok: true,
      condition: { contract: 'native' },
    });
    expect(parseTokenValue(`solana:${MINT}:0.5`)).toMatchObject({ ok: true, condition: { contract: MINT } });
  });

  it('refuses each bad value with its reason', () => {
    expect(parseTokenValue(`bitcoin:${TOKEN}:1`)).toEqual({ ok: false, problem: 'unknown_chain' });
    expect(parseTokenValue('base:0x1234:1')).toEqual({ ok: false, problem: 'bad_address' });
    expect(parseTokenValue(`solana:${TOKEN}:1`)).toEqual({ ok: false, problem: 'bad_address' });
    for (const min of ['0', '-1', '1e3', '0x10', 'abc', '0.000', ''])
      expect(parseTokenValue(`base:${TOKEN}:${min}`)).toEqual({ ok: false, problem: 'bad_minimum' });
    expect(parseTokenValue(`base:${TOKEN}`)).toEqual({ ok: false, problem: 'bad_minimum' });
    expect(parseNftValue(`base:${NFT}:0.5`)).toEqual({ ok: false, problem: 'bad_minimum' });
    expect(parseNftValue(`base:${NFT}/x:1`)).toEqual({ ok: false, problem: 'bad_token_id' });
    expect(parseNftValue(`base:${NFT}/${2n ** 256n}`)).toEqual({ ok: false, problem: 'bad_token_id' });
    expect(parseNftValue(`solana:${MINT}`)).toEqual({ ok: false, problem: 'no_nfts' });
    expect(parseCondition('token', 'nonsense')).toMatchObject({
      ok: false,
      refusal: { code: 'bad_holding' },
    });
  });

  it('turns whole units into base units by decimals, never lowering a minimum', () => {
    expect(canonicalMinimum('100')).toBe('100');
    expect(minimumUnits('100', 6)).toBe(100_000_000n);
    expect(minimumUnits('0.5', 6)).toBe(500_000n);
    expect(minimumUnits('0.0000001', 6)).toBe(1n);
    expect(minimumUnits('7', 0)).toBe(7n);
    expect(formatUnits(150_000_000n, 6)).toBe('150');
    expect(formatUnits(1_500_000n, 6)).toBe('1.5');
  });
});

describe('each chain’s own coin', () => {
  it('is named as viem/chains names it, without loading the chain definitions where words are made', () => {
    for (const [chain, definition] of Object.entries(EVM_CHAINS))
      expect(nativeSymbol(chain as EvmChain), chain).toBe(definition.nativeCurrency.symbol);
    expect(nativeSymbol('solana')).toBe('SOL');
  });
});

describe('holdings outcome', () => {
  const c = { kind: 'token' as const, chain: 'base' as const, contract: TOKEN, min: '100' };
  const key = conditionKey(c);
  const fact = (amount: bigint, unknown = false) => ({ key, amount, wallets: 2, unknown, decimals: 6 });
  it('meets at the minimum summed over wallets, misses below it, and is unknown when a read failed', () => {
    expect(holdingOutcome(c, key, [fact(120_000_000n)]).met).toBe(true);
    expect(holdingOutcome(c, key, [fact(100_000_000n)]).met).toBe(true);
    expect(holdingOutcome(c, key, [fact(99_999_999n)]).met).toBe(false);
    expect(holdingOutcome(c, key, [fact(50_000_000n, true)]).met).toBe(null);
    // Enough already, whatever the failed wallet holds.
    expect(holdingOutcome(c, key, [fact(150_000_000n, true)]).met).toBe(true);
    expect(holdingOutcome(c, key, [{ ...fact(0n), decimals: null }]).met).toBe(null);
    expect(holdingOutcome(c, key, []).met).toBe(null);
  });
});

describe('the holdings reader', () => {
  it('reads a page of balances and the decimals in one aggregate3, a reverting token sinking nothing else', async () => {
    evm = await startFakeEvmRpc();
    evm.addToken(TOKEN, 'erc20', 6);
    evm.addToken(NFT, 'erc721');
    evm.addToken(MULTI, 'erc1155');
    for (let i = 1; i <= 300; i += 1) evm.setBalance(TOKEN, wallet(i), BigInt(i) * 1_000_000n);
    evm.setBalance(NFT, wallet(1), 2n);
    evm.setBalance(MULTI, wallet(1), 5n, 7n);
    evm.setNative(wallet(1), 10n ** 18n);
    const reader = new HoldingsReader({ chains: [{ chain: 'base', url: evm.url }], requestsPerSecond: 50 });
    const token = targetOf({ kind: 'token', chain: 'base', contract: TOKEN, min: '1' });
    const queries = Array.from({ length: 300 }, (_, i) => ({ target: token, owner: wallet(i + 1) }));
    const nft = targetOf({ kind: 'nft', chain: 'base', contract: NFT, tokenId: null, min: 1 });
    const multi = targetOf({ kind: 'nft', chain: 'base', contract: MULTI, tokenId: '7', min: 1 });
    const native = targetOf({ kind: 'token', chain: 'base', contract: 'native', min: '1' });
    // A contract that is no token of that kind (no code there): its calls fail alone.
    const broken = targetOf({ kind: 'token', chain: 'base', contract: wallet(999), min: '1' });
    const extra = [nft, multi, native, broken].map((target) => ({ target, owner: wallet(1) }));
    const read = await reader.read([...queries, ...extra], false);
    expect(evm.counts.ethCalls).toBe(1);
    expect(read.balances.get(balanceKey({ target: token, owner: wallet(150) }))).toBe(150_000_000n);
    expect(read.decimals.get(`base:fungible:${TOKEN}`)).toBe(6);
    expect(read.balances.get(balanceKey({ target: nft, owner: wallet(1) }))).toBe(2n);
    expect(read.balances.get(balanceKey({ target: multi, owner: wallet(1) }))).toBe(5n);
    expect(read.balances.get(balanceKey({ target: native, owner: wallet(1) }))).toBe(10n ** 18n);
    expect(read.balances.get(balanceKey({ target: broken, owner: wallet(1) }))).toBe(null);
    // Cached: a second read of the same page asks nothing; fresh asks again.
    await reader.read(queries, false);
    expect(evm.counts.ethCalls).toBe(1);
    await reader.read(queries, true);
    expect(evm.counts.ethCalls).toBe(2);
    expect(reader.health()).toEqual([expect.objectContaining({ chain: 'base', failing: false })]);
  });

  it('reads a balance once per re-check cycle, however many servers ask, after its 30 s; the next cycle reads it again (issue #37)', async () => {
    evm = await startFakeEvmRpc();
    evm.addToken(TOKEN, 'erc20', 6);
    evm.setBalance(TOKEN, wallet(1), 5_000_000n);
    let now = 1_000_000;
    const reader = new HoldingsReader({
      chains: [{ chain: 'base', url: evm.url }],
      requestsPerSecond: 50,
      now: () => now,
    });
    const token = targetOf({ kind: 'token', chain: 'base', contract: TOKEN, min: '1' });
    const query = [{ target: token, owner: wallet(1) }];
    const key = balanceKey({ target: token, owner: wallet(1) });
    const cycle = now - 10;
    await reader.read(query, false, cycle);
    evm.setBalance(TOKEN, wallet(1), 0n);
    // An hour on, another server's pass of the same cycle: the cycle's read, no request.
    now += 3_600_000;
    const again = await reader.read(query, false, cycle);
    expect(again.balances.get(key)).toBe(5_000_000n);
    expect(evm.counts.ethCalls).toBe(1);
    // Outside a cycle (a member's own check), 30 s is as long as a balance is kept; the next cycle reads again.
    expect((await reader.read(query, false)).balances.get(key)).toBe(0n);
    now += 1;
    expect((await reader.read(query, false, now - 1)).balances.get(key)).toBe(0n);
    expect(evm.counts.ethCalls).toBe(2);
    now += 3_600_000;
    await reader.read(query, false, now - 1);
    expect(evm.counts.ethCalls).toBe(3);
  });

  it('answers unknown for every balance of a failing node, names it in health, and never throws', async () => {
    evm = await startFakeEvmRpc();
    evm.addToken(TOKEN, 'erc20', 6);
    const failures: string[] = [];
    const reader = new HoldingsReader({
      chains: [{ chain: 'base', url: evm.url }],
      requestsPerSecond: 50,
      onFailure: (chain, failure) => failures.push(`${chain}:${failure}`),
    });
    const token = targetOf({ kind: 'token', chain: 'base', contract: TOKEN, min: '1' });
    for (const mode of ['unavailable', 'error', 'nonsense'] as const) {
      evm.setMode(mode);
      const read = await reader.read([{ target: token, owner: wallet(1) }], true);
      expect(read.balances.get(balanceKey({ target: token, owner: wallet(1) }))).toBe(null);
    }
    expect(failures).toEqual(['base:unreachable', 'base:unreachable', 'base:nonsense']);
    expect(reader.health()[0]).toMatchObject({ chain: 'base', failing: true, failure: 'nonsense' });
    expect(await reader.probe(token)).toBe('failed');
    evm.setMode('up');
    expect(await reader.probe(token)).toBe('ok');
    expect(reader.health()[0]?.failing).toBe(false);
  });

  it('probes a contract for its kind: decimals for a token, balanceOf (and no decimals) for an NFT', async () => {
    evm = await startFakeEvmRpc();
    evm.addToken(TOKEN, 'erc20', 6);
    evm.addToken(NFT, 'erc721');
    evm.addToken(MULTI, 'erc1155');
    const reader = new HoldingsReader({ chains: [{ chain: 'base', url: evm.url }], requestsPerSecond: 50 });
    const probe = (kind: 'token' | 'nft', contract: string, tokenId: string | null = null) =>
      reader.probe(
        targetOf(
          kind === 'token'
            ? { kind, chain: 'base', contract, min: '1' }
            : { kind, chain: 'base', contract, tokenId, min: 1 },
        ),
      );
    expect(await probe('token', TOKEN)).toBe('ok');
    expect(await probe('token', NFT)).toBe('not_a_token');
    expect(await probe('token', wallet(5))).toBe('not_a_token');
    expect(await probe('nft', NFT)).toBe('ok');
    expect(await probe('nft', TOKEN)).toBe('not_a_token');
    expect(await probe('nft', MULTI, '7')).toBe('ok');
    expect(await probe('nft', NFT, '7')).toBe('not_a_token');
    expect(await reader.probe(targetOf({ kind: 'token', chain: 'polygon', contract: TOKEN, min: '1' }))).toBe(
      'not_configured',
    );
  });

  it('reads Solana balances in one JSON-RPC array, summing a mint’s accounts, and probes mints', async () => {
    sol = await startFakeSolanaRpc();
    sol.addMint(MINT, 6);
    sol.setTokenBalance(SOL_OWNER, MINT, 2_500_000n);
    sol.setLamports(SOL_OWNER, 3_000_000_000n);
    const reader = new HoldingsReader({ chains: [{ chain: 'solana', url: sol.url }], requestsPerSecond: 50 });
    const spl = targetOf({ kind: 'token', chain: 'solana', contract: MINT, min: '1' });
    const native = targetOf({ kind: 'token', chain: 'solana', contract: 'native', min: '1' });
    const other = '4Nd1mBQtrMJVYVfKf2PJy9NZUZdTAsp7D4xWLs4gDB4T';
    const read = await reader.read(
      [spl, native].flatMap((target) => [SOL_OWNER, other].map((owner) => ({ target, owner }))),
      false,
    );
    expect(sol.counts.requests).toBe(1);
    expect(read.balances.get(balanceKey({ target: spl, owner: SOL_OWNER }))).toBe(2_500_000n);
    expect(read.balances.get(balanceKey({ target: spl, owner: other }))).toBe(0n);
    expect(read.balances.get(balanceKey({ target: native, owner: SOL_OWNER }))).toBe(3_000_000_000n);
    expect(read.decimals.get(`solana:fungible:${MINT}`)).toBe(6);
    expect(await reader.probe(spl)).toBe('ok');
    expect(await reader.probe(targetOf({ kind: 'token', chain: 'solana', contract: other, min: '1' }))).toBe(
      'not_a_token',
    );
    sol.setMode('unavailable');
    const failed = await reader.read([{ target: spl, owner: SOL_OWNER }], true);
    expect(failed.balances.get(balanceKey({ target: spl, owner: SOL_OWNER }))).toBe(null);
  });
});

describe('whose wallets count', () => {
  const link = (identity: string, over: Partial<LinkRecord> = {}): LinkRecord => ({
    guildId: 'g',
    userId: 'u',
    identity,
    platform: 'ethereum',
    address: identity,
    proofMethod: 'signature',
    provenAt: 0,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
    ...over,
  });

  it('counts wallets signed for, never the address a record-proven name points at, nor a released link', () => {
    const wallets = signedWallets([
      link(wallet(1)),
      link(wallet(1)),
      link('whale.eth', { proofMethod: 'record', address: wallet(2) }),
      link(wallet(3), { releasedAt: 5 }),
      link('farcaster,#3', { platform: 'farcaster', address: wallet(4) }),
    ]);
    expect(wallets).toEqual([wallet(1), wallet(4)]);
  });

  it('sums the signed wallets on the chain, reads nothing without one, and is unknown on an unconfigured chain', async () => {
    evm = await startFakeEvmRpc();
    evm.addToken(TOKEN, 'erc20', 6);
    evm.setBalance(TOKEN, wallet(1), 60_000_000n);
    evm.setBalance(TOKEN, wallet(2), 60_000_000n);
    evm.setBalance(TOKEN, wallet(9), 1_000_000_000n);
    const reader = new HoldingsReader({ chains: [{ chain: 'base', url: evm.url }], requestsPerSecond: 50 });
    const base = { kind: 'token' as const, chain: 'base' as const, contract: TOKEN, min: '100' };
    const polygon = { ...base, chain: 'polygon' as const };
    const active = [
      link(wallet(1)),
      link(wallet(2)),
      link('whale.eth', { proofMethod: 'record', address: wallet(9) }),
    ];
    const [onBase, onPolygon] = await readHoldingFacts(reader, [base, polygon], active, true, undefined);
    expect(onBase).toEqual({
      key: conditionKey(base),
      amount: 120_000_000n,
      wallets: 2,
      unknown: false,
      decimals: 6,
    });
    expect(onPolygon?.unknown).toBe(true);
    const none = await readHoldingFacts(reader, [base], [active[2] as LinkRecord], true, undefined);
    expect(none).toEqual([{ key: conditionKey(base), amount: 0n, wallets: 0, unknown: false, decimals: 0 }]);
    expect(holdingOutcome(base, conditionKey(base), none).met).toBe(false);
  });
});
