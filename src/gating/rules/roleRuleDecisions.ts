/**
 * The roles the guild's role rules want for a member, from facts about what the member PROVED only:
 *
 * - `score`: the highest unexpired humanity score among the credentials that count (weighed by subject in
 *   credentialSubjects.ts: a score of a wallet or name the member did not prove is not there).
 * - `platform`: an active link of an identity on that platform (a Solana wallet signed for counts as Solana).
 * - `name-age` / `name-expiry`: `/domain` of a name the member proved itself (a link of that name); a name
 *   that a proven wallet merely owns does not count.
 * - `followers`: the follower count on the own profile of a proven Farcaster or Lens identity, never a
 *   profile some other identity's universal profile lists.
 *
 * A condition is met, not met, or unknown (a read failed): "all of" is unknown when none fails and one is
 * unknown; "any of" is unknown when none holds and one is unknown. Unknown is `want: null`: the role stays
 * as it is. Pure: no clock, no lookups.
 */
import { credentialScore, isCredentialExpired } from '../../web3bio/credentials.ts';
import { type HoldingFact, holdingOutcome } from './holdingOutcomes.ts';
import {
  conditionKey,
  type FollowerPlatform,
  type RoleRule,
  type RuleCondition,
  type RulePlatform,
} from './roleRules.ts';
import {
  DAY_MS,
  type DecisionWhy,
  type IdentityEvidence,
  listIdentities,
  oneLine,
  type RoleDecision,
} from './rules.ts';

const DAY_SEC = DAY_MS / 1000;

/** A proven name's `/domain` answer: null when it could not be read (failed, or not found). */
export interface NameFact {
  identity: string;
  domain: { createdAt: number | null; expiredAt: number | null } | null;
}

/** A proven Farcaster or Lens identity's own follower count: null when it could not be read. */
export interface FollowerFact {
  identity: string;
  platform: FollowerPlatform;
  followers: number | null;
}

export interface RuleFacts {
  /** The member's active links, with the rule platform each is on (null for none of them). */
  proven: { identity: string; platform: RulePlatform | null }[];
  /** What counts of the active links' credentials (null credentials: the lookup failed). */
  evidence: IdentityEvidence[];
  /** Read only when a rule asks a name's age or expiry. */
  names: NameFact[];
  /** Read only when a rule asks followers. */
  followers: FollowerFact[];
  /** Read only when a rule asks holdings: one per holdings condition. */
  holdings?: HoldingFact[];
}

interface Outcome {
  met: boolean | null;
  text: string;
  why: DecisionWhy;
}

const MAX_IDENTITY = 100;
const one = (identity: string) => oneLine(identity, MAX_IDENTITY);

function unknown(identities: string[]): Outcome {
  const list = listIdentities(identities);
  return {
    met: null,
    text: `lookup failed for ${list}`,
    why: { code: 'lookupFailed', values: { identities: list } },
  };
}

function score(min: number, facts: RuleFacts, nowSec: number): Outcome {
  let best: { value: number; identity: string } | null = null;
  for (const { identity, credentials } of facts.evidence) {
    for (const c of credentials?.isHuman ?? []) {
      if (isCredentialExpired(c, nowSec)) continue;
      const value = credentialScore(c);
      if (value !== null && (best === null || value > best.value)) best = { value, identity };
    }
  }
  if (best && best.value >= min) {
    const values = { met: 'yes', score: best.value, min, identity: one(best.identity), identities: '' };
    return {
      met: true,
      text: `humanity score ${best.value} ≥ ${min} (${values.identity})`,
      why: { code: 'ruleScore', values },
    };
  }
  const failed = facts.evidence.filter((e) => e.credentials === null).map((e) => e.identity);
  if (failed.length > 0) return unknown(failed);
  const identities = listIdentities(facts.evidence.map((e) => e.identity));
  return {
    met: false,
    text: `no unexpired humanity score ≥ ${min} (${identities})`,
    why: { code: 'ruleScore', values: { met: 'no', score: best?.value ?? 0, min, identity: '', identities } },
  };
}

function platform(wanted: RulePlatform, facts: RuleFacts): Outcome {
  const found = facts.proven.find((p) => p.platform === wanted);
  const identity = found ? one(found.identity) : '';
  return found
    ? {
        met: true,
        text: `proven ${wanted} identity (${identity})`,
        why: { code: 'rulePlatform', values: { met: 'yes', platform: wanted, identity } },
      }
    : {
        met: false,
        text: `no proven ${wanted} identity`,
        why: { code: 'rulePlatform', values: { met: 'no', platform: wanted, identity } },
      };
}

function nameAge(days: number, facts: RuleFacts, nowSec: number): Outcome {
  for (const { identity, domain } of facts.names) {
    if (domain?.createdAt == null) continue;
    const age = Math.floor((nowSec - domain.createdAt) / DAY_SEC);
    if (age >= days) {
      const values = { met: 'yes', identity: one(identity), age, days, identities: '' };
      return {
        met: true,
        text: `${values.identity} registered ${age} days ago (≥ ${days})`,
        why: { code: 'ruleNameAge', values },
      };
    }
  }
  const failed = facts.names.filter((n) => n.domain === null).map((n) => n.identity);
  if (failed.length > 0) return unknown(failed);
  const identities = listIdentities(facts.names.map((n) => n.identity));
  return {
    met: false,
    text: `no proven name registered at least ${days} days ago (${identities || 'none'})`,
    why: { code: 'ruleNameAge', values: { met: 'no', identity: '', age: 0, days, identities } },
  };
}

function nameExpiry(days: number, facts: RuleFacts, nowSec: number): Outcome {
  for (const { identity, domain } of facts.names) {
    if (domain?.expiredAt == null || domain.expiredAt <= nowSec + days * DAY_SEC) continue;
    const values = {
      met: 'yes',
      identity: one(identity),
      days,
      left: Math.floor((domain.expiredAt - nowSec) / DAY_SEC),
      identities: '',
    };
    return {
      met: true,
      text: `${values.identity} expires in ${values.left} days (more than ${days})`,
      why: { code: 'ruleNameExpiry', values },
    };
  }
  const failed = facts.names.filter((n) => n.domain === null).map((n) => n.identity);
  if (failed.length > 0) return unknown(failed);
  const identities = listIdentities(facts.names.map((n) => n.identity));
  return {
    met: false,
    text: `no proven name with a known expiry more than ${days} days away (${identities || 'none'})`,
    why: { code: 'ruleNameExpiry', values: { met: 'no', identity: '', days, left: 0, identities } },
  };
}

function followers(wanted: FollowerPlatform, min: number, facts: RuleFacts): Outcome {
  const mine = facts.followers.filter((f) => f.platform === wanted);
  const found = mine.find((f) => f.followers !== null && f.followers >= min);
  if (found) {
    const values = {
      met: 'yes',
      platform: wanted,
      count: found.followers ?? 0,
      min,
      identity: one(found.identity),
    };
    return {
      met: true,
      text: `${values.count} ${wanted} followers ≥ ${min} (${values.identity})`,
      why: { code: 'ruleFollowers', values },
    };
  }
  const failed = mine.filter((f) => f.followers === null).map((f) => f.identity);
  if (failed.length > 0) return unknown(failed);
  return {
    met: false,
    text: `no proven ${wanted} identity with at least ${min} followers`,
    why: { code: 'ruleFollowers', values: { met: 'no', platform: wanted, count: 0, min, identity: '' } },
  };
}

/** Whether one condition holds for the member, and why. */
export function conditionOutcome(c: RuleCondition, facts: RuleFacts, nowSec: number): Outcome {
  switch (c.kind) {
    case 'score':
      return score(c.min, facts, nowSec);
    case 'platform':
      return platform(c.platform, facts);
    case 'name-age':
      return nameAge(c.days, facts, nowSec);
    case 'name-expiry':
      return nameExpiry(c.days, facts, nowSec);
    case 'followers':
      return followers(c.platform, c.min, facts);
    case 'token':
    case 'nft':
      return holdingOutcome(c, conditionKey(c), facts.holdings ?? []);
  }
}

function combine(rule: RoleRule, outcomes: Outcome[]): { want: boolean | null; deciding: Outcome[] } {
  const of = (met: boolean | null) => outcomes.filter((o) => o.met === met);
  if (rule.match === 'all') {
    if (of(false).length > 0) return { want: false, deciding: of(false) };
    if (of(null).length > 0) return { want: null, deciding: of(null) };
    return { want: true, deciding: outcomes };
  }
  if (of(true).length > 0) return { want: true, deciding: of(true) };
  if (of(null).length > 0) return { want: null, deciding: of(null) };
  return { want: false, deciding: outcomes };
}

/** One decision per rule; with nothing proven, every rule role is unwanted (a fact of the store). */
export function evaluateRoleRules(
  rules: readonly RoleRule[],
  facts: RuleFacts,
  nowSec: number,
): RoleDecision[] {
  return rules
    .filter((rule) => rule.conditions.length > 0)
    .map((rule): RoleDecision => {
      if (facts.proven.length === 0) {
        return {
          roleId: rule.roleId,
          want: false,
          because: 'no proven identity',
          why: { code: 'noProvenIdentity' },
          unproven: true,
        };
      }
      const { want, deciding } = combine(
        rule,
        rule.conditions.map((c) => conditionOutcome(c, facts, nowSec)),
      );
      const first = deciding[0];
      const mode = rule.match === 'all' ? 'all of' : 'any of';
      const because =
        deciding.length === 1 && first ? first.text : `${mode}: ${deciding.map((o) => o.text).join('; ')}`;
      const why: DecisionWhy =
        deciding.length === 1 && first
          ? first.why
          : { code: rule.match === 'all' ? 'ruleAll' : 'ruleAny', parts: deciding.map((o) => o.why) };
      return { roleId: rule.roleId, want, because, why };
    });
}
