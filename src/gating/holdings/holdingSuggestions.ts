/**
 * What `value:` suggests as a moderator types a `token` or `nft` condition: the configured chains
 * (`base:`), the coin (`base:native:`), and the contracts the server's rules already use on them. Pure.
 */
import type { RoleRule } from '../rules/roleRules.ts';
import type { HoldingChain } from './holdingValues.ts';

const MAX_CHOICES = 25;
/** Discord refuses a whole answer whose choice carries a longer value. */
const CHOICE_VALUE_MAX = 100;

export function holdingValueChoices(
  kind: string,
  typed: string,
  chains: readonly HoldingChain[],
  rules: readonly RoleRule[],
): { name: string; value: string }[] {
  if (kind !== 'token' && kind !== 'nft') return [];
  const contracts = rules.flatMap((r) =>
    r.conditions.flatMap((c) =>
      c.kind === kind && c.contract !== 'native'
        ? [`${c.chain}:${c.contract}${c.kind === 'nft' && c.tokenId !== null ? `/${c.tokenId}` : ''}:`]
        : [],
    ),
  );
  const known = new Set([...chains, ...contracts.map((c) => c.split(':')[0] as HoldingChain)]);
  const starts = [...known].flatMap((chain) =>
    kind === 'token' ? [`${chain}:`, `${chain}:native:`] : chain === 'solana' ? [] : [`${chain}:`],
  );
  const needle = typed.trim().toLowerCase();
  return [...new Set([...contracts, ...starts])]
    .filter((value) => value.length <= CHOICE_VALUE_MAX)
    .filter(
      (value) =>
        value.toLowerCase().startsWith(needle) || (needle !== '' && value.toLowerCase().includes(needle)),
    )
    .slice(0, MAX_CHOICES)
    .map((value) => ({ name: value, value }));
}
