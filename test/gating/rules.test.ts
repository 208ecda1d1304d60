import { describe, expect, it } from 'vitest';
import {
  carriesFlag,
  diffRoles,
  evaluateRules,
  type GatingRules,
  type IdentityEvidence,
  type RoleDecision,
} from '../../src/gating/rules/rules.ts';
import type { Credential, CredentialCategory, CredentialSet } from '../../src/web3bio/types.ts';

const NOW = 1_700_000_000;

const RULES: GatingRules = {
  humanRoleId: 'human',
  spamRoleId: 'spam',
  riskyRoleId: 'risky',
  minScore: 20,
  spamRemovesHuman: true,
};

function cred(category: CredentialCategory, over: Partial<Credential> = {}): Credential {
  return {
    id: null,
    platform: 'test',
    category,
    source: 'test-source',
    type: 'boolean',
    value: 'true',
    label: category === 'isHuman' ? 'Dentity' : 'Flag',
    description: '',
    link: null,
    updatedAt: NOW - 100,
    expiredAt: null,
    ...over,
  };
}

const score = (category: CredentialCategory, value: string, over: Partial<Credential> = {}) =>
  cred(category, { type: 'score', value, label: category === 'isHuman' ? 'Passport' : 'Spam', ...over });

function set(...credentials: Credential[]): CredentialSet {
  return {
    isHuman: credentials.filter((c) => c.category === 'isHuman'),
    isRisky: credentials.filter((c) => c.category === 'isRisky'),
    isSpam: credentials.filter((c) => c.category === 'isSpam'),
  };
}

const ok = (identity: string, ...credentials: Credential[]): IdentityEvidence => ({
  identity,
  credentials: set(...credentials),
});
const failed = (identity: string): IdentityEvidence => ({ identity, credentials: null });

/** Wants per role, in the order human, spam, risky. */
function wants(rules: GatingRules, evidence: IdentityEvidence[]): Record<string, boolean | null> {
  return Object.fromEntries(evaluateRules(rules, evidence, NOW).map((d) => [d.roleId, d.want]));
}

describe('evaluateRules: the human role', () => {
  it.each<[string, Credential[], boolean, Partial<GatingRules>?]>([
    ['a true boolean', [cred('isHuman')], true],
    ['a true boolean in other case and spacing', [cred('isHuman', { value: ' TRUE ' })], true],
    ['a false boolean', [cred('isHuman', { value: 'false' })], false],
    ['a score above the minimum', [score('isHuman', '32.1')], true],
    ['a score exactly at the minimum', [score('isHuman', '20')], true],
    ['a score just below the minimum', [score('isHuman', '19.99')], false],
    ['a score with no minimum set', [score('isHuman', '99')], false, { minScore: null }],
    ['a score that is not a number', [score('isHuman', 'high')], false],
    ['a boolean expired at this second', [cred('isHuman', { expiredAt: NOW })], false],
    ['a boolean expiring a second later', [cred('isHuman', { expiredAt: NOW + 1 })], true],
    ['an expired score', [score('isHuman', '50', { expiredAt: NOW - 1 })], false],
    [
      'an expired true beside a fresh passing score',
      [cred('isHuman', { expiredAt: 1 }), score('isHuman', '25')],
      true,
    ],
    ['no credentials', [], false],
    ['only spam-neutral risky data', [cred('isRisky', { value: 'false' })], false],
  ])('%s → %s', (_name, credentials, expected, over = {}) => {
    expect(wants({ ...RULES, ...over }, [ok('a.eth', ...credentials)]).human).toBe(expected);
  });

  it('explains a score grant with the threshold and the identity', () => {
    const [human] = evaluateRules(RULES, [ok('vitalik.eth', score('isHuman', '32.1'))], NOW);
    expect(human).toEqual({
      roleId: 'human',
      want: true,
      because: 'isHuman: Passport score 32.1 ≥ 20 (vitalik.eth)',
      why: { code: 'evidence', values: { evidence: 'isHuman: Passport score 32.1 ≥ 20 (vitalik.eth)' } },
    });
  });

  it('explains a refusal with what was looked for and where', () => {
    const [human] = evaluateRules(RULES, [ok('a.eth', score('isHuman', '3')), ok('b.eth')], NOW);
    expect(human?.because).toBe('no unexpired isHuman credential is true or scores ≥ 20 (a.eth, b.eth)');
    expect(human?.why).toEqual({
      code: 'noHumanOrScore',
      values: { identities: 'a.eth, b.eth', minScore: 20 },
    });
  });
});

describe('evaluateRules: spam and risky flags', () => {
  it.each<[string, Credential[], Record<string, boolean | null>, Partial<GatingRules>?]>([
    [
      'a spam score of 0 flags and removes human',
      [cred('isHuman'), score('isSpam', '0')],
      { human: false, spam: true, risky: false },
    ],
    ['a true spam boolean flags', [cred('isSpam')], { human: false, spam: true, risky: false }],
    [
      'spam keeps human when spamRemovesHuman is off',
      [cred('isHuman'), cred('isSpam')],
      { human: true, spam: true, risky: false },
      { spamRemovesHuman: false },
    ],
    [
      'a false spam boolean does not flag',
      [cred('isHuman'), cred('isSpam', { value: 'false' })],
      { human: true, spam: false, risky: false },
    ],
    [
      'an expired spam flag does not count',
      [cred('isHuman'), cred('isSpam', { expiredAt: NOW })],
      { human: true, spam: false, risky: false },
    ],
    [
      'an unknown type that reads neither true nor a number is ignored',
      [cred('isHuman'), cred('isSpam', { type: 'level', value: 'high' })],
      { human: true, spam: false, risky: false },
    ],
    [
      'a risky flag adds risky only',
      [cred('isHuman'), cred('isRisky')],
      { human: true, spam: false, risky: true },
    ],
    ['a risky score flags', [score('isRisky', '0.4')], { human: false, spam: false, risky: true }],
    ['spam and risky together', [cred('isSpam'), cred('isRisky')], { human: false, spam: true, risky: true }],
  ])('%s', (_name, credentials, expected, over = {}) => {
    expect(wants({ ...RULES, ...over }, [ok('a.eth', ...credentials)])).toEqual(expected);
  });

  it('removes human on spam even when no spam role is configured', () => {
    const decisions = evaluateRules(
      { ...RULES, spamRoleId: null, riskyRoleId: null },
      [ok('a.eth', cred('isHuman'), score('isSpam', '0'))],
      NOW,
    );
    expect(decisions).toEqual([
      {
        roleId: 'human',
        want: false,
        because: 'isSpam: Spam score 0 (a.eth) takes the human role away',
        why: { code: 'flagTakesHuman', values: { evidence: 'isSpam: Spam score 0 (a.eth)' } },
        byFlag: true,
      },
    ]);
  });

  it('marks a removal caused by a flag, so it is never held back, and tells flagged sets apart', () => {
    const decisions = evaluateRules(RULES, [ok('a.eth', cred('isHuman'), cred('isSpam'))], NOW);
    const diff = diffRoles(decisions, new Set(['human']));
    expect(diff.remove).toEqual([expect.objectContaining({ roleId: 'human', byFlag: true })]);
    expect(carriesFlag(set(cred('isRisky')), NOW)).toBe(true);
    expect(carriesFlag(set(cred('isHuman')), NOW)).toBe(false);
    expect(carriesFlag(set(cred('isSpam', { expiredAt: NOW - 1 })), NOW)).toBe(false);
  });

  it('names the flag that earns the role', () => {
    const decisions = evaluateRules(
      RULES,
      [ok('ggmonster', cred('isRisky', { label: 'Copyright Violation' }))],
      NOW,
    );
    expect(decisions.find((d) => d.roleId === 'risky')?.because).toBe(
      'isRisky: Copyright Violation (ggmonster)',
    );
  });
});

describe('evaluateRules: identities and failed lookups', () => {
  it.each<[string, IdentityEvidence[], Record<string, boolean | null>]>([
    ['no proven identity wants nothing', [], { human: false, spam: false, risky: false }],
    ['a single failed lookup keeps everything', [failed('a.eth')], { human: null, spam: null, risky: null }],
    [
      'a failed lookup with a human grant elsewhere',
      [failed('a.eth'), ok('b.eth', cred('isHuman'))],
      { human: true, spam: null, risky: null },
    ],
    [
      'a failed lookup with a spam flag elsewhere',
      [ok('b.eth', cred('isHuman'), cred('isSpam')), failed('a.eth')],
      { human: false, spam: true, risky: null },
    ],
    [
      'a failed lookup beside an empty set',
      [ok('b.eth'), failed('a.eth')],
      { human: null, spam: null, risky: null },
    ],
    [
      'any identity can earn human',
      [ok('a.eth'), ok('b.eth', score('isHuman', '21'))],
      { human: true, spam: false, risky: false },
    ],
    [
      'one spam identity spoils another human one',
      [ok('a.eth', cred('isHuman')), ok('b.eth', cred('isSpam'))],
      { human: false, spam: true, risky: false },
    ],
  ])('%s', (_name, evidence, expected) => {
    expect(wants(RULES, evidence)).toEqual(expected);
  });

  it('says why nothing is removed, naming the failed identities', () => {
    const evidence = [failed('a.eth'), failed('b.eth'), failed('c.eth'), failed('d.eth'), ok('e.eth')];
    const [human] = evaluateRules(RULES, evidence, NOW);
    expect(human).toEqual({
      roleId: 'human',
      want: null,
      because: 'lookup failed for a.eth, b.eth, c.eth +1 more: keeping the current state',
      why: { code: 'lookupFailed', values: { identities: 'a.eth, b.eth, c.eth +1 more' } },
    });
  });

  it('names the identity that earned the role', () => {
    const [human] = evaluateRules(
      RULES,
      [ok('a.eth'), ok('b.eth', cred('isHuman', { label: 'Galxe KYC' }))],
      NOW,
    );
    expect(human?.because).toBe('isHuman: Galxe KYC (b.eth)');
  });

  it('only decides configured roles, human first', () => {
    const decisions = evaluateRules({ ...RULES, spamRoleId: null }, [], NOW);
    expect(decisions).toEqual([
      { roleId: 'human', want: false, because: 'no proven identity', why: { code: 'noProvenIdentity' } },
      { roleId: 'risky', want: false, because: 'no proven identity', why: { code: 'noProvenIdentity' } },
    ]);
  });

  it('keeps hostile upstream labels on one bounded line', () => {
    const label = `Evil\r\nX-Injected: 1\u0000${'x'.repeat(500)}`;
    const [human] = evaluateRules(RULES, [ok('a.eth', cred('isHuman', { label }))], NOW);
    expect(human?.want).toBe(true);
    expect(human?.because).not.toMatch(/[\r\n]/);
    expect(human?.because.includes('\0')).toBe(false);
    expect(human?.because.startsWith('isHuman: Evil X-Injected: 1 xxx')).toBe(true);
    expect(human?.because.length).toBeLessThan(200);
  });

  it('survives a credential set missing a category', () => {
    const partial = { isHuman: [cred('isHuman')] } as unknown as CredentialSet;
    expect(wants(RULES, [{ identity: 'a.eth', credentials: partial }])).toEqual({
      human: true,
      spam: false,
      risky: false,
    });
  });
});

describe('diffRoles', () => {
  const d = (roleId: string, want: boolean | null, because = `why ${roleId}`): RoleDecision => ({
    roleId,
    want,
    because,
  });

  it.each<[string, RoleDecision[], string[], { add: string[]; remove: string[] }]>([
    ['adds a wanted role the member lacks', [d('a', true)], [], { add: ['a'], remove: [] }],
    ['leaves a wanted role the member has', [d('a', true)], ['a'], { add: [], remove: [] }],
    ['removes an unwanted role the member has', [d('a', false)], ['a', 'other'], { add: [], remove: ['a'] }],
    ['leaves an unwanted role the member lacks', [d('a', false)], [], { add: [], remove: [] }],
    ['never touches an unknown role it has', [d('a', null)], ['a'], { add: [], remove: [] }],
    ['never touches an unknown role it lacks', [d('a', null)], [], { add: [], remove: [] }],
    ['merges one role named twice: true wins', [d('a', false), d('a', true)], [], { add: ['a'], remove: [] }],
    [
      'merges one role named twice: unknown beats false',
      [d('a', false), d('a', null)],
      ['a'],
      { add: [], remove: [] },
    ],
    [
      'merges one role named twice: false twice removes once',
      [d('a', false), d('a', false)],
      ['a'],
      { add: [], remove: ['a'] },
    ],
    [
      'mixes adds and removes',
      [d('a', true), d('b', false), d('c', null)],
      ['b', 'c'],
      { add: ['a'], remove: ['b'] },
    ],
  ])('%s', (_name, decisions, current, expected) => {
    const diff = diffRoles(decisions, new Set(current));
    expect({ add: diff.add.map((x) => x.roleId), remove: diff.remove.map((x) => x.roleId) }).toEqual(
      expected,
    );
  });

  it('carries the reason of the deciding rule', () => {
    const diff = diffRoles([d('a', false, 'no flag'), d('a', true, 'isSpam: flagged')], new Set());
    expect(diff.add).toEqual([{ roleId: 'a', because: 'isSpam: flagged' }]);
  });

  it('computes an end-to-end diff from evaluated rules', () => {
    const decisions = evaluateRules(RULES, [ok('a.eth', cred('isHuman'), score('isSpam', '0'))], NOW);
    const diff = diffRoles(decisions, new Set(['human', 'risky']));
    expect(diff.add.map((x) => x.roleId)).toEqual(['spam']);
    expect(diff.remove.map((x) => x.roleId)).toEqual(['human', 'risky']);
    expect(diff.remove[0]?.because).toContain('takes the human role away');
  });
});
