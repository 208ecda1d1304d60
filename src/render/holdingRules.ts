/**
 * Holdings rules (issue #35) in words: their conditions and why one was refused, for `/gating rule` and
 * the dashboard alike. Pure.
 */
import { HOLDING_CHAINS, type HoldingCondition } from '../gating/holdings/holdingValues.ts';
import type { RuleRefusal } from '../gating/ruleGating.ts';
import { assetLabel } from '../gating/rules/holdingOutcomes.ts';
import type { ConditionRefusal } from '../gating/rules/roleRules.ts';
import { t } from '../i18n/index.ts';

/** "at least 100 of base:0x…", "at least 1 NFT of base:0x…/7". */
export function holdingConditionText(c: HoldingCondition, locale: string): string {
  const asset = assetLabel(c);
  return c.kind === 'token'
    ? t(locale, 'gating.rule.condition.token', { min: c.min, asset })
    : t(locale, 'gating.rule.condition.nft', { min: c.min, asset });
}

type HoldingRefusal = Extract<RuleRefusal, { code: 'chain_not_configured' | 'not_a_token' | 'chain_failed' }>;

/** Why a holdings value or contract was refused (nothing stored). */
export function holdingRefusalText(
  refusal: HoldingRefusal | Extract<ConditionRefusal, { code: 'bad_holding' }>,
  locale: string,
): string {
  switch (refusal.code) {
    case 'bad_holding':
      return t(locale, 'gating.rule.badHolding', {
        problem: refusal.problem,
        kind: refusal.kind,
        chains: HOLDING_CHAINS.join(', '),
      });
    case 'chain_not_configured':
      return t(locale, 'gating.rule.chainNotConfigured', { chain: refusal.chain });
    case 'not_a_token':
      return t(locale, 'gating.rule.notAToken', { kind: refusal.kind, chain: refusal.chain });
    case 'chain_failed':
      return t(locale, 'gating.rule.chainFailed', { chain: refusal.chain });
  }
}
