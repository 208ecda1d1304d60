/**
 * Holdings conditions (issue #35) decided from what the member's signed wallets hold: the balances of all
 * of them on the condition's chain, summed. A wallet whose balance could not be read makes the outcome
 * unknown unless the others already reach the minimum (then it is met): unknown keeps the role. Pure.
 */
import { formatUnits, type HoldingCondition, minimumUnits, nativeSymbol } from '../holdings/holdingValues.ts';
import type { DecisionWhy } from './rules.ts';

/** What the member's signed wallets hold of one condition's asset. */
export interface HoldingFact {
  /** The condition's key (`token:base:0x…:100`). */
  key: string;
  /** Base units summed over the wallets read. */
  amount: bigint;
  /** The wallets on that chain the member signed for. */
  wallets: number;
  /** A wallet's balance or the token's decimals could not be read (the chain failed, or is not configured). */
  unknown: boolean;
  /** null when unknown. */
  decimals: number | null;
}

/** The asset in words for reasons and lists: `base:0xabc…`, `base:0xabc…/7`, `ethereum:ETH`. */
export function assetLabel(c: HoldingCondition): string {
  if (c.contract === 'native') return `${c.chain}:${nativeSymbol(c.chain)}`;
  const id = c.kind === 'nft' && c.tokenId !== null ? `/${c.tokenId}` : '';
  return `${c.chain}:${c.contract}${id}`;
}

export function holdingOutcome(
  c: HoldingCondition,
  key: string,
  facts: readonly HoldingFact[],
): { met: boolean | null; text: string; why: DecisionWhy } {
  const fact = facts.find((f) => f.key === key);
  const asset = assetLabel(c);
  const code = c.kind === 'token' ? 'ruleToken' : 'ruleNft';
  const min = String(c.min);
  if (!fact || fact.decimals === null) {
    return {
      met: null,
      text: `the ${c.chain} node did not answer for ${asset}`,
      why: { code: 'holdingsFailed', values: { chain: c.chain } },
    };
  }
  const needed = c.kind === 'token' ? minimumUnits(c.min, fact.decimals) : BigInt(c.min);
  const amount = formatUnits(fact.amount, fact.decimals);
  const values = { amount, min, asset, wallets: fact.wallets };
  if (fact.amount >= needed) {
    return {
      met: true,
      text: `${amount} of ${asset} ≥ ${min} (${fact.wallets} signed wallets)`,
      why: { code, values: { met: 'yes', ...values } },
    };
  }
  if (fact.unknown) {
    return {
      met: null,
      text: `the ${c.chain} node did not answer for ${asset}`,
      why: { code: 'holdingsFailed', values: { chain: c.chain } },
    };
  }
  return {
    met: false,
    text: `${amount} of ${asset} < ${min} (${fact.wallets} signed wallets)`,
    why: { code, values: { met: 'no', ...values } },
  };
}
