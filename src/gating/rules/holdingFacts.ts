/**
 * What the member's wallets hold, for holdings conditions. Only wallets the member proved by signature
 * count (Sign-In with Ethereum or Solana, and the signer of a Sign in with Farcaster proof): a name
 * proven by its record points at a wallet anyone could name, so it earns no holdings. The balances of a
 * page of members are read in one batch per chain (`holdingsBatch`); a member's own check reads its own.
 */
import type { LinkRecord } from '../../store/types.ts';
import type { HoldingsReader } from '../holdings/holdingsReader.ts';
import {
  balanceKey,
  type HoldingCondition,
  type HoldingQuery,
  type HoldingsBatch,
  holdsOn,
  targetKey,
  targetOf,
} from '../holdings/holdingValues.ts';
import type { HoldingFact } from './holdingOutcomes.ts';
import { conditionKey, type RoleRule, rulesNeed } from './roleRules.ts';

/** The addresses the member signed for: the wallets whose holdings count. */
export function signedWallets(active: readonly LinkRecord[]): string[] {
  const wallets = active.flatMap((l) =>
    l.releasedAt === null && l.proofMethod === 'signature' && l.address ? [l.address] : [],
  );
  return [...new Set(wallets)];
}

function queriesOf(conditions: readonly HoldingCondition[], wallets: readonly string[]): HoldingQuery[] {
  return conditions.flatMap((c) => {
    const target = targetOf(c);
    return wallets.filter((w) => holdsOn(w, c.chain)).map((owner) => ({ target, owner }));
  });
}

/**
 * Every balance a page of links needs for the rules, in one read per chain (in a periodic re-check
 * cycle, a balance this process read since it began is not read again); undefined when no rule asks
 * holdings (nothing to read).
 */
export function holdingsBatch(
  reader: HoldingsReader | undefined,
  rules: readonly RoleRule[] | undefined,
  links: readonly LinkRecord[],
  fresh: boolean,
  cycleStartedAt?: number,
): Promise<HoldingsBatch> | undefined {
  const conditions = rulesNeed(rules ?? []).holdings;
  if (!reader || conditions.length === 0) return undefined;
  return reader.read(queriesOf(conditions, signedWallets(links)), fresh, cycleStartedAt);
}

/** The chains the rules read whose node's last read failed. */
export function failingChains(reader: HoldingsReader | undefined, rules: readonly RoleRule[]): string[] {
  const used = new Set(rulesNeed(rules).holdings.map((c) => c.chain));
  return (reader?.health() ?? []).filter((h) => h.failing && used.has(h.chain)).map((h) => h.chain);
}

/** One fact per holdings condition of the rules, from the page's batch or (missing there) read now. */
export async function readHoldingFacts(
  reader: HoldingsReader | undefined,
  conditions: readonly HoldingCondition[],
  active: readonly LinkRecord[],
  fresh: boolean,
  batch: Promise<HoldingsBatch> | undefined,
): Promise<HoldingFact[]> {
  if (conditions.length === 0) return [];
  const wallets = signedWallets(active);
  const queries = queriesOf(conditions, wallets);
  const page = batch ? await batch.catch(() => undefined) : undefined;
  const complete = (b: HoldingsBatch | undefined) => b && queries.every((q) => b.balances.has(balanceKey(q)));
  const read = complete(page) ? page : reader ? await reader.read(queries, fresh) : undefined;
  return conditions.map((c): HoldingFact => {
    const target = targetOf(c);
    const mine = wallets.filter((w) => holdsOn(w, c.chain)).map((owner) => balanceKey({ target, owner }));
    const key = conditionKey(c);
    // No wallet on that chain: nothing to read, nothing held.
    if (mine.length === 0) return { key, amount: 0n, wallets: 0, unknown: false, decimals: 0 };
    let amount = 0n;
    let unknown = !reader?.chains.includes(c.chain);
    for (const balance of mine) {
      const value = read?.balances.get(balance) ?? null;
      if (value === null) unknown = true;
      else amount += value;
    }
    const decimals = read?.decimals.get(targetKey(target)) ?? null;
    return { key, amount, wallets: mine.length, unknown, decimals };
  });
}
