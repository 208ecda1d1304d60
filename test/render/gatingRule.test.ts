import { describe, expect, it } from 'vitest';
import type { RoleRule } from '../../src/gating/rules/roleRules.ts';
import { RULE_KINDS } from '../../src/gating/rules/roleRules.ts';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import type { GuildNames } from '../../src/render/gatingLabels.ts';
import {
  renderRuleAdd,
  renderRuleList,
  ruleChoiceName,
  ruleKindChoice,
} from '../../src/render/gatingRule.ts';
import type { RenderContext } from '../../src/render/types.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const HOSTILE = '@everyone **bold** <@&123> [x](javascript:alert(1)) \u202e'.repeat(8);
const ctx = (locale = 'en-US'): RenderContext => ({
  locale,
  nowSec: 1_700_000_000,
  ipfsGateway: 'https://ipfs.io',
});

/** The most a guild may hold: 25 conditions over 25 roles with hostile names. */
const RULES: RoleRule[] = Array.from({ length: 25 }, (_, i) => ({
  roleId: String(1_000 + i),
  match: i % 2 ? 'any' : 'all',
  conditions: [
    [{ kind: 'score', min: 1_000_000 }],
    [{ kind: 'followers', platform: 'farcaster', min: 1_000_000_000 }],
    [{ kind: 'name-expiry', days: 36_500 }],
  ][i % 3] as RoleRule['conditions'],
}));
const NAMES: GuildNames = {
  roles: new Map(RULES.map((r) => [r.roleId, HOSTILE])),
  channels: new Map(),
  users: new Map(),
  usernames: new Map(),
};

describe('/gating rule answers', () => {
  it('a full list with hostile role names stays within Discord limits and pings nobody, in every locale', () => {
    for (const locale of SHIPPED_LOCALES) {
      const payload = renderRuleList(RULES, NAMES, ctx(locale));
      assertWithinDiscordLimits(payload);
      expect(payload.allowed_mentions).toEqual({ parse: [] });
    }
  });

  it('the preview carries Apply and Cancel and says how many would gain and lose', () => {
    const payload = renderRuleAdd(
      {
        kind: 'preview',
        proposal: { roleId: '1000', condition: { kind: 'score', min: 30 }, match: null },
        rule: { roleId: '1000', match: 'all', conditions: [{ kind: 'score', min: 30 }] },
        preview: { members: 1_200, addCount: 40, removeCount: 3, unknownCount: 2, sample: [] },
      },
      { apply: 'gating|ruleApply|1000|score:30|-', cancel: 'gating|ruleCancel' },
      { ...NAMES, roles: new Map([['1000', 'Tier 30']]) },
      ctx(),
    );
    assertWithinDiscordLimits(payload);
    expect(visibleText(payload)).toContain('1,200 members with proven identities');
    expect(visibleText(payload)).toContain('40 would gain the role, 3 would lose it, 2 could not be checked');
    expect(JSON.stringify(payload.components)).toContain('gating|ruleApply|1000|score:30|-');
  });

  it('suggestion names fit Discord’s 100 characters in every locale', () => {
    for (const locale of SHIPPED_LOCALES) {
      for (const kind of RULE_KINDS)
        expect(ruleKindChoice(kind, locale).name.length).toBeLessThanOrEqual(100);
      const name = ruleChoiceName(
        '1000',
        { kind: 'followers', platform: 'lens', min: 1_000_000_000 },
        NAMES,
        locale,
      );
      expect(name.length).toBeLessThanOrEqual(100);
    }
  });
});
