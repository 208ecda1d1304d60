import { describe, expect, it } from 'vitest';
import { evaluateRoleRules, type RuleFacts } from '../../src/gating/rules/roleRuleDecisions.ts';
import {
  conditionKey,
  conditionOfKey,
  parseCondition,
  type RoleRule,
  type RuleCondition,
  rulesNeed,
  rulesOfRows,
  withCondition,
} from '../../src/gating/rules/roleRules.ts';
import type { IdentityEvidence } from '../../src/gating/rules/rules.ts';
import { decisionReason as escapedReason } from '../../src/render/gatingLabels.ts';
import type { Credential } from '../../src/web3bio/types.ts';

const NOW = 1_700_000_000;
/** The reason as a member reads it (render escapes markdown). */
const decisionReason = (d: Parameters<typeof escapedReason>[0], locale: string) =>
  escapedReason(d, locale).replace(/\\/g, '');
const DAY = 86_400;

function humanScore(value: string, over: Partial<Credential> = {}): Credential {
  return {
    id: null,
    platform: 'humanpassport',
    category: 'isHuman',
    source: 'human-passport',
    type: 'score',
    value,
    label: 'Passport',
    description: '',
    link: null,
    updatedAt: NOW - 100,
    expiredAt: null,
    ...over,
  };
}

const withScores = (identity: string, ...scores: Credential[]): IdentityEvidence => ({
  identity,
  credentials: { isHuman: scores, isRisky: [], isSpam: [] },
});

function facts(over: Partial<RuleFacts> = {}): RuleFacts {
  return {
    proven: [{ identity: 'alice.eth', platform: 'ens' }],
    evidence: [withScores('alice.eth')],
    names: [],
    followers: [],
    ...over,
  };
}

const rule = (match: 'all' | 'any', ...conditions: RuleCondition[]): RoleRule => ({
  roleId: 'r1',
  match,
  conditions,
});

function want(r: RoleRule, f: RuleFacts): boolean | null | undefined {
  return evaluateRoleRules([r], f, NOW)[0]?.want;
}

describe('parsing what a moderator typed', () => {
  it('reads each kind and gives its canonical key', () => {
    const cases: [string, string, string][] = [
      ['score', '30', 'score:30'],
      ['Score', ' 20.5 ', 'score:20.5'],
      ['platform', 'ENS', 'platform:ens'],
      ['name-age', '365', 'name-age:365'],
      ['name-expiry', '30', 'name-expiry:30'],
      ['followers', 'farcaster:1000', 'followers:farcaster:1000'],
      ['followers', 'Lens 50', 'followers:lens:50'],
    ];
    for (const [kind, value, key] of cases) {
      const parsed = parseCondition(kind, value);
      expect(parsed.ok && conditionKey(parsed.condition), `${kind} ${value}`).toBe(key);
      expect(parsed.ok && conditionOfKey(key)).toEqual(parsed.ok && parsed.condition);
    }
  });

  it('refuses unknown kinds and values that do not fit, hostile text included', () => {
    expect(parseCondition('karma', '3')).toEqual({ ok: false, refusal: { code: 'unknown_kind' } });
    const bad: [string, string][] = [
      ['score', '-1'],
      ['score', '1e3'],
      ['score', '0x10'],
      ['score', ''],
      ['score', '2000000'],
      ['platform', 'twitter'],
      ['platform', 'ens; DROP TABLE'],
      ['name-age', '0'],
      ['name-age', '3.5'],
      ['name-expiry', '99999'],
      ['followers', '1000'],
      ['followers', 'twitter:10'],
      ['followers', 'farcaster:'],
      ['followers', 'farcaster:-5'],
    ];
    for (const [kind, value] of bad) {
      expect(parseCondition(kind, value), `${kind} ${value}`).toEqual({
        ok: false,
        refusal: { code: 'bad_value', kind },
      });
    }
    expect(conditionOfKey('score:030')).toBeNull();
    expect(conditionOfKey('nonsense')).toBeNull();
  });

  it('builds rules from stored rows, one per role, and adds conditions without duplicates', () => {
    const rules = rulesOfRows([
      { roleId: 'a', condition: 'score:20', match: 'all' },
      { roleId: 'b', condition: 'platform:lens', match: 'any' },
      { roleId: 'a', condition: 'bogus', match: 'all' },
      { roleId: 'b', condition: 'followers:lens:10', match: 'any' },
    ]);
    expect(rules.map((r) => [r.roleId, r.match, r.conditions.map(conditionKey)])).toEqual([
      ['a', 'all', ['score:20']],
      ['b', 'any', ['platform:lens', 'followers:lens:10']],
    ]);
    const added = withCondition(rules, 'a', { kind: 'score', min: 20 }, 'any');
    expect(added[0]).toEqual({ roleId: 'a', match: 'any', conditions: [{ kind: 'score', min: 20 }] });
    const created = withCondition(rules, 'c', { kind: 'name-age', days: 10 }, null);
    expect(created[2]).toEqual({ roleId: 'c', match: 'all', conditions: [{ kind: 'name-age', days: 10 }] });
    expect(rulesNeed(rules)).toEqual({ names: false, followers: new Set(['lens']), holdings: [] });
    expect(rulesNeed(created).names).toBe(true);
  });
});

describe('score tiers', () => {
  const tier20 = { roleId: 't20', match: 'all' as const, conditions: [{ kind: 'score' as const, min: 20 }] };
  const tier30 = { roleId: 't30', match: 'all' as const, conditions: [{ kind: 'score' as const, min: 30 }] };

  it('gives each tier its own role by the highest unexpired counted score', () => {
    const f = facts({
      evidence: [withScores('alice.eth', humanScore('25'), humanScore('40', { expiredAt: NOW - 1 }))],
    });
    const [a, b] = evaluateRoleRules([tier20, tier30], f, NOW);
    expect(a).toMatchObject({ roleId: 't20', want: true, because: 'humanity score 25 ≥ 20 (alice.eth)' });
    expect(b).toMatchObject({ roleId: 't30', want: false });
    expect(decisionReason(b ?? { because: '' }, 'de')).toContain('Menschlichkeits-Score');
  });

  it('keeps the role when a credential lookup failed and nothing else reaches the tier', () => {
    const f = facts({
      evidence: [withScores('alice.eth', humanScore('10')), { identity: 'bob.eth', credentials: null }],
    });
    expect(want(tier20, f)).toBeNull();
    const high = facts({
      evidence: [withScores('alice.eth', humanScore('31')), { identity: 'x.eth', credentials: null }],
    });
    expect(want(tier30, high)).toBe(true);
  });

  it('without a proven identity every rule role is unwanted, as a fact of the store', () => {
    const [d] = evaluateRoleRules([tier20], facts({ proven: [], evidence: [] }), NOW);
    expect(d).toMatchObject({ want: false, unproven: true, why: { code: 'noProvenIdentity' } });
  });
});

describe('platform, names and followers', () => {
  it('platform: only an identity proven on that platform', () => {
    expect(want(rule('all', { kind: 'platform', platform: 'ens' }), facts())).toBe(true);
    expect(want(rule('all', { kind: 'platform', platform: 'farcaster' }), facts())).toBe(false);
    const solana = facts({ proven: [{ identity: 'HKKp', platform: 'solana' }] });
    expect(want(rule('all', { kind: 'platform', platform: 'solana' }), solana)).toBe(true);
  });

  it('name age and expiry read the proven names; a failed read keeps, a missing date does not count', () => {
    const age = rule('all', { kind: 'name-age', days: 365 });
    const expiry = rule('all', { kind: 'name-expiry', days: 30 });
    const old = facts({
      names: [{ identity: 'alice.eth', domain: { createdAt: NOW - 400 * DAY, expiredAt: NOW + 10 * DAY } }],
    });
    expect(want(age, old)).toBe(true);
    expect(want(expiry, old)).toBe(false);
    const young = facts({
      names: [{ identity: 'alice.eth', domain: { createdAt: NOW - 30 * DAY, expiredAt: NOW + 90 * DAY } }],
    });
    expect(want(age, young)).toBe(false);
    expect(want(expiry, young)).toBe(true);
    const undated = facts({
      names: [{ identity: 'alice.eth', domain: { createdAt: null, expiredAt: null } }],
    });
    expect(want(age, undated)).toBe(false);
    expect(want(expiry, undated)).toBe(false);
    expect(want(age, facts({ names: [{ identity: 'alice.eth', domain: null }] }))).toBeNull();
    expect(want(age, facts({ names: [] }))).toBe(false);
  });

  it('followers: a proven profile of that platform at or above the threshold', () => {
    const r = rule('all', { kind: 'followers', platform: 'farcaster', min: 1000 });
    const f = (followers: number | null, platform: 'farcaster' | 'lens' = 'farcaster') =>
      facts({ followers: [{ identity: 'alice.farcaster', platform, followers }] });
    expect(want(r, f(1000))).toBe(true);
    expect(want(r, f(999))).toBe(false);
    expect(want(r, f(5000, 'lens'))).toBe(false);
    expect(want(r, f(null))).toBeNull();
    expect(evaluateRoleRules([r], f(1200), NOW)[0]?.because).toBe(
      '1200 farcaster followers ≥ 1000 (alice.farcaster)',
    );
  });
});

describe('all of / any of', () => {
  const ens = { kind: 'platform', platform: 'ens' } as const;
  const lens = { kind: 'platform', platform: 'lens' } as const;
  const name = { kind: 'name-age', days: 10 } as const;
  const failedName = facts({ names: [{ identity: 'alice.eth', domain: null }] });

  it('all of: one unmet condition denies, an unknown one keeps, every one met grants', () => {
    expect(want(rule('all', ens, lens), facts())).toBe(false);
    expect(want(rule('all', ens, name), failedName)).toBeNull();
    expect(want(rule('all', lens, name), failedName)).toBe(false);
    const met = facts({
      names: [{ identity: 'alice.eth', domain: { createdAt: NOW - 20 * DAY, expiredAt: null } }],
    });
    const [d] = evaluateRoleRules([rule('all', ens, name)], met, NOW);
    expect(d?.want).toBe(true);
    expect(d?.because).toBe(
      'all of: proven ens identity (alice.eth); alice.eth registered 20 days ago (≥ 10)',
    );
    expect(decisionReason(d ?? { because: '' }, 'en-US')).toBe(
      'all of: proven ens identity (alice.eth); alice.eth registered 20 days ago (at least 10)',
    );
  });

  it('any of: one met condition grants, an unknown one keeps, none met denies', () => {
    expect(want(rule('any', lens, ens), facts())).toBe(true);
    expect(want(rule('any', lens, name), failedName)).toBeNull();
    const [d] = evaluateRoleRules([rule('any', lens, { kind: 'platform', platform: 'linea' })], facts(), NOW);
    expect(d?.want).toBe(false);
    expect(decisionReason(d ?? { because: '' }, 'fr')).toBe(
      'au moins une : aucune identité lens prouvée; aucune identité linea prouvée',
    );
  });
});
