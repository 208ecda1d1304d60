/**
 * Issue #35: a full re-check's holdings reads. 10,000 members, each with one wallet signed for, against 3
 * holdings rules on one chain (an ERC-20 minimum, an ERC-721, the chain's coin), read from the stand-in EVM
 * node over loopback HTTP (fakes/chains/evmRpc.ts). The re-check is played as the guild walk plays it:
 * pages of 500 links, each page's balances read in one batch (`holdingsBatch`), then every member's rule
 * decisions (`roleRuleDecisions`, as `Evaluator.evaluate` calls it). Beside it, the same walk with 3 score
 * rules and no holdings rule (credentials in hand: the Web3.bio side is measured by the gating suite).
 * Counted: `eth_call` requests (target ≤ 1 per 500 wallet×rule reads), wall time, the heap grown over the
 * walk (garbage included) and kept after a full collection (the balance cache), and RSS grown.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { TEST_NFT as NFT, TEST_TOKEN as TOKEN } from '../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../fakes/chains/evmRpc.ts';
import { HoldingsReader } from '../src/gating/holdings/holdingsReader.ts';
import { holdingsBatch } from '../src/gating/rules/holdingFacts.ts';
import { conditionOfKey, type RoleRule } from '../src/gating/rules/roleRules.ts';
import { roleRuleDecisions } from '../src/gating/rules/ruleReads.ts';
import type { IdentityEvidence } from '../src/gating/rules/rules.ts';
import type { Logger } from '../src/ops/log.ts';
import type { LinkRecord } from '../src/store/types.ts';
import type { Web3BioClient } from '../src/web3bio/client.ts';
import { type BenchTable, formatNumber, verdict } from './stats.ts';

const PAGE = 500;
const MIB = 1024 * 1024;
/** A full collection, without starting node with --expose-gc. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** At most one eth_call per this many wallet×rule reads. */
const READS_PER_CALL_TARGET = 500;

export interface HoldingsBenchOptions {
  quick?: boolean;
  wallets?: number;
  progress?: (line: string) => void;
}

interface WalkRun {
  rules: string;
  wallets: number;
  reads: number;
  ethCalls: number;
  granted: number;
  wallMs: number;
  heapMiB: number;
  keptMiB: number;
  rssMiB: number;
}

function rulesOf(keys: string[]): RoleRule[] {
  return keys.map((key, i) => {
    const condition = conditionOfKey(key);
    if (!condition) throw new Error(`bad condition ${key}`);
    return { roleId: `role${i}`, match: 'all', conditions: [condition] };
  });
}

function linkOf(i: number): LinkRecord {
  const address = `0x${(0x100000 + i).toString(16).padStart(40, '0')}`;
  return {
    guildId: 'g',
    userId: `u${i}`,
    identity: address,
    platform: 'ethereum',
    address,
    proofMethod: 'signature',
    provenAt: 0,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
  };
}

function evidenceOf(link: LinkRecord, i: number): IdentityEvidence[] {
  const score = {
    id: `ethereum,${link.identity}`,
    category: 'isHuman',
    platform: 'humanpassport',
    source: 'human-passport',
    type: 'score',
    value: String(i % 60),
    label: 'Passport',
  };
  return [{ identity: link.identity, credentials: { isHuman: [score as never], isRisky: [], isSpam: [] } }];
}

async function walk(
  evm: FakeEvmRpc,
  reader: HoldingsReader | undefined,
  rules: RoleRule[],
  links: LinkRecord[],
): Promise<Omit<WalkRun, 'rules' | 'wallets' | 'reads'>> {
  const deps = { web3bio: {} as Web3BioClient, logger: { warn() {} } as unknown as Logger, holdings: reader };
  evm.resetCounts();
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  const rssBefore = process.memoryUsage().rss;
  let granted = 0;
  const started = performance.now();
  for (let start = 0; start < links.length; start += PAGE) {
    const page = links.slice(start, start + PAGE);
    const batch = holdingsBatch(reader, rules, page, true);
    await Promise.all(
      page.map(async (link, i) => {
        const { decisions } = await roleRuleDecisions({ ...deps, holdingsBatch: batch }, rules, {
          active: [link],
          evidence: evidenceOf(link, start + i),
          fresh: true,
          nowSec: 1_800_000_000,
        });
        granted += decisions.filter((d) => d.want === true).length;
      }),
    );
  }
  const wallMs = performance.now() - started;
  const memory = process.memoryUsage();
  collectGarbage();
  return {
    ethCalls: evm.counts.ethCalls,
    granted,
    wallMs,
    heapMiB: (memory.heapUsed - heapBefore) / MIB,
    keptMiB: (process.memoryUsage().heapUsed - heapBefore) / MIB,
    rssMiB: (memory.rss - rssBefore) / MIB,
  };
}

export async function runHoldingsBench(options: HoldingsBenchOptions = {}): Promise<BenchTable[]> {
  const wallets = options.wallets ?? (options.quick ? 2_000 : 10_000);
  const evm = await startFakeEvmRpc(8453);
  try {
    evm.addToken(TOKEN, 'erc20', 6);
    evm.addToken(NFT, 'erc721');
    const links = Array.from({ length: wallets }, (_, i) => linkOf(i));
    links.forEach((link, i) => {
      evm.setBalance(TOKEN, link.identity, BigInt(i % 300) * 1_000_000n);
      if (i % 3 === 0) evm.setBalance(NFT, link.identity, 1n);
      evm.setNative(link.identity, BigInt(i % 5) * 10n ** 17n);
    });
    const holdings = rulesOf([`token:base:${TOKEN}:100`, `nft:base:${NFT}:1`, 'token:base:native:0.2']);
    const scores = rulesOf(['score:20', 'score:30', 'score:40']);
    const reader = new HoldingsReader({
      chains: [{ chain: 'base', url: evm.url }],
      requestsPerSecond: 1_000,
    });
    options.progress?.(`holdings: ${wallets} wallets × 3 holdings rules`);
    const withHoldings = await walk(evm, reader, holdings, links);
    options.progress?.(`holdings: ${wallets} wallets × 3 score rules`);
    const without = await walk(evm, undefined, scores, links);
    const runs: WalkRun[] = [
      { rules: '3 holdings rules on base', wallets, reads: wallets * 3, ...withHoldings },
      { rules: '3 score rules, no holdings', wallets, reads: 0, ...without },
    ];
    const target = Math.ceil((wallets * 3) / READS_PER_CALL_TARGET);
    return [
      {
        suite:
          'Holdings re-check: 3 rules on one chain against the stand-in EVM node (issue #35, bench/holdings.ts)',
        method: `one walk of ${formatNumber(wallets)} members (1 signed wallet each) in pages of ${PAGE}, fresh reads; heap grown over the walk (garbage included) and kept after a full collection; RSS grown`,
        targets: [`eth_call ≤ 1 per ${READS_PER_CALL_TARGET} wallet×rule reads (≤ ${target})`],
        columns: [
          'Rules',
          'Wallets',
          'Reads',
          'eth_call',
          'Reads per eth_call',
          'Roles granted',
          'Wall (ms)',
          'Heap grown +MiB',
          'Heap kept +MiB',
          'RSS +MiB',
          'Result',
        ],
        rows: runs.map((r) => [
          r.rules,
          formatNumber(r.wallets),
          formatNumber(r.reads),
          formatNumber(r.ethCalls),
          r.ethCalls === 0 ? '—' : formatNumber(r.reads / r.ethCalls),
          formatNumber(r.granted),
          formatNumber(r.wallMs),
          formatNumber(r.heapMiB, 1),
          formatNumber(r.keptMiB, 1),
          formatNumber(r.rssMiB, 1),
          r.reads === 0 ? '—' : verdict(r.ethCalls <= target),
        ]),
        notes: [
          'Each eth_call is one Multicall3 aggregate3 of up to 1,000 reads; the ERC-20’s decimals ride along in the first page and are then kept.',
          'The walk without holdings has its credentials in hand: it is the floor of the same evaluation, not a Web3.bio re-check.',
          'The stand-in node runs in this process: its decoding and encoding of each aggregate3 are in the wall time and the heap, and so are the 30 s balance cache’s entries.',
        ],
      },
    ];
  } finally {
    await evm.close();
  }
}
