/**
 * The holdings rule's dry run for docs/screenshots (issue #35): `/gating rule add kind:token` on Base as
 * its preview reads, built from hand-made domain objects like the other gating shots.
 */
import { conditionOfKey } from '../src/gating/rules/roleRules.ts';
import type { GuildNames } from '../src/render/gatingLabels.ts';
import { renderRuleAdd } from '../src/render/gatingRule.ts';
import type { MessagePayload, RenderContext } from '../src/render/types.ts';

const HOLDERS = { id: '1187654321098765520', name: 'USDC Holders' };
const TOKEN = '0x833589fcd6edb6e08f4c7c32d4f71b54bda02913';

export function holdingsDryRun(names: GuildNames, render: RenderContext): MessagePayload {
  const condition = conditionOfKey(`token:base:${TOKEN}:100`);
  if (!condition) throw new Error('the screenshot’s condition does not parse');
  const rule = { roleId: HOLDERS.id, match: 'all' as const, conditions: [condition] };
  const sample = [
    {
      userId: '283746529183746528',
      username: 'vitalik',
      add: [HOLDERS.id],
      remove: [],
      because: [`150 of base:${TOKEN} ≥ 100 (1 signed wallets)`],
    },
    {
      userId: '283746529183746529',
      username: 'alice',
      add: [HOLDERS.id],
      remove: [],
      because: [`120 of base:${TOKEN} ≥ 100 (2 signed wallets)`],
    },
  ];
  return renderRuleAdd(
    {
      kind: 'preview',
      proposal: { roleId: HOLDERS.id, condition, match: null },
      rule,
      preview: { members: 214, addCount: 37, removeCount: 0, unknownCount: 0, sample },
    },
    { apply: 'gating|ruleApply', cancel: 'gating|ruleCancel' },
    { ...names, roles: new Map([...names.roles, [HOLDERS.id, HOLDERS.name]]) },
    render,
  );
}
