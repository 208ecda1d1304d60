import { describe, expect, it } from 'vitest';
import { snowflakeTime } from '../../src/gating/roles/discordReads.ts';
import {
  DAY_MS,
  diffRoles,
  evaluateRules,
  type GatingRules,
  type IdentityEvidence,
  type MemberAge,
  notBeforeOf,
  qualifiesAt,
} from '../../src/gating/rules/rules.ts';
import type { Credential, CredentialCategory } from '../../src/web3bio/types.ts';

const NOW_SEC = 1_700_000_000;
const NOW = NOW_SEC * 1000;

const RULES: GatingRules = {
  humanRoleId: 'human',
  spamRoleId: 'spam',
  riskyRoleId: null,
  minScore: null,
  spamRemovesHuman: true,
  minAccountAgeDays: 7,
  minJoinAgeDays: 1,
};

function cred(category: CredentialCategory): Credential {
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
    updatedAt: NOW_SEC - 100,
    expiredAt: null,
  };
}

const human: IdentityEvidence[] = [
  { identity: 'alice.eth', credentials: { isHuman: [cred('isHuman')], isRisky: [], isSpam: [] } },
];
const spammyHuman: IdentityEvidence[] = [
  {
    identity: 'alice.eth',
    credentials: { isHuman: [cred('isHuman')], isRisky: [], isSpam: [cred('isSpam')] },
  },
];
const OLD: MemberAge = { createdAt: NOW - 400 * DAY_MS, joinedAt: NOW - 30 * DAY_MS };

const humanDecision = (rules: GatingRules, age: MemberAge, evidence = human) =>
  evaluateRules(rules, evidence, NOW_SEC, age).find((d) => d.roleId === 'human');

describe('account and join age for the human role', () => {
  it('holds the grant back for a new account, until the account is old enough', () => {
    const age = { createdAt: NOW - 2 * DAY_MS, joinedAt: OLD.joinedAt };
    const d = humanDecision(RULES, age);
    const due = age.createdAt + 7 * DAY_MS;
    expect(d).toMatchObject({ want: false, notBefore: due, why: { code: 'tooNew' } });
    expect(d?.why?.values).toEqual({ at: due });
    expect(d?.because).toContain('too new');
    expect(diffRoles(d ? [d] : [], new Set())).toEqual({ add: [], remove: [] });
  });

  it('holds the grant back for a member who just joined, until the join age is reached', () => {
    const age = { createdAt: OLD.createdAt, joinedAt: NOW - 60_000 };
    const d = humanDecision(RULES, age);
    expect(d).toMatchObject({ want: false, notBefore: age.joinedAt + DAY_MS, why: { code: 'tooNew' } });
    expect(notBeforeOf(d ? [d] : [])).toEqual({ roleId: 'human', at: age.joinedAt + DAY_MS });
  });

  it('waits for the later of both thresholds', () => {
    const age = { createdAt: NOW - 6 * DAY_MS, joinedAt: NOW - 60_000 };
    expect(qualifiesAt(RULES, age)).toBe(Math.max(age.createdAt + 7 * DAY_MS, age.joinedAt + DAY_MS));
  });

  it('grants a member old enough on both counts', () => {
    expect(humanDecision(RULES, OLD)).toMatchObject({ want: true, why: { code: 'evidence' } });
    const exactly = { createdAt: NOW - 7 * DAY_MS, joinedAt: NOW - DAY_MS };
    expect(humanDecision(RULES, exactly)?.want).toBe(true);
  });

  it('asks nothing when the settings are off (null or 0), or no age is known', () => {
    const fresh = { createdAt: NOW - 1000, joinedAt: NOW - 1000 };
    expect(humanDecision({ ...RULES, minAccountAgeDays: null, minJoinAgeDays: null }, fresh)?.want).toBe(
      true,
    );
    expect(humanDecision({ ...RULES, minAccountAgeDays: 0, minJoinAgeDays: 0 }, fresh)?.want).toBe(true);
    expect(
      qualifiesAt({ ...RULES, minAccountAgeDays: undefined, minJoinAgeDays: undefined }, fresh),
    ).toBeNull();
    expect(evaluateRules(RULES, human, NOW_SEC).find((d) => d.roleId === 'human')?.want).toBe(true);
  });

  it('never removes a held human role for age', () => {
    const fresh = { createdAt: NOW - 1000, joinedAt: NOW - 1000 };
    const decisions = evaluateRules(RULES, human, NOW_SEC, fresh);
    expect(diffRoles(decisions, new Set(['human']))).toEqual({ add: [], remove: [] });
  });

  it('leaves flags alone: a new member still gets the spam role and loses the human role to it', () => {
    const fresh = { createdAt: NOW - 1000, joinedAt: NOW - 1000 };
    const decisions = evaluateRules(RULES, spammyHuman, NOW_SEC, fresh);
    expect(decisions.find((d) => d.roleId === 'spam')?.want).toBe(true);
    expect(decisions.find((d) => d.roleId === 'human')).toMatchObject({ want: false, byFlag: true });
    expect(notBeforeOf(decisions)).toBeUndefined();
    const diff = diffRoles(decisions, new Set(['human']));
    expect(diff.add.map((c) => c.roleId)).toEqual(['spam']);
    expect(diff.remove.map((c) => c.roleId)).toEqual(['human']);
  });

  it('reads the account creation time from the snowflake', () => {
    expect(snowflakeTime('175928847299117063')).toBe(1_462_015_105_796);
    expect(snowflakeTime(String((BigInt(NOW) - 1_420_070_400_000n) << 22n))).toBe(NOW);
  });
});
