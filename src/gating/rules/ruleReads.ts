/**
 * What the guild's role rules need read beyond credentials, and only when a rule needs it: `/domain` of
 * the names the member proved (name age and expiry) and the own profile of each proven Farcaster or Lens
 * identity (followers). Reads go through the client's cache like every other read. A failure, a stale
 * answer or a "not found" is `null`: the condition is unknown and the role stays as it is.
 */
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, LinkRecord } from '../../store/types.ts';
import type { Web3BioClient } from '../../web3bio/client.ts';
import { parseIdentity } from '../../web3bio/identity.ts';
import { DOMAIN_KINDS, type IdentityKind, KIND_PROFILE_SEGMENT } from '../../web3bio/identityKind.ts';
import type { HoldingsBatch, HoldingsReader } from '../holdings/holdingsReader.ts';
import { readHoldingFacts } from './holdingFacts.ts';
import type { FollowerFact, NameFact, RuleFacts } from './roleRuleDecisions.ts';
import { evaluateRoleRules } from './roleRuleDecisions.ts';
import {
  type FollowerPlatform,
  type RoleRule,
  RULE_PLATFORMS,
  type RulePlatform,
  rulesNeed,
  rulesOfRows,
} from './roleRules.ts';
import type { IdentityEvidence, RoleDecision } from './rules.ts';

function kindOf(identity: string): IdentityKind | null {
  try {
    return parseIdentity(identity).kind;
  } catch {
    return null;
  }
}

/** The rule platform an identity is on (a Solana wallet is on Solana; an EVM wallet on none of them). */
export function rulePlatformOf(identity: string): RulePlatform | null {
  const kind = kindOf(identity);
  const segment = kind === null ? undefined : KIND_PROFILE_SEGMENT[kind];
  return RULE_PLATFORMS.find((p) => p === segment) ?? null;
}

export interface RuleReadDeps {
  web3bio: Web3BioClient;
  logger: Logger;
  /** Holdings rules' balances (issue #35); without it they are unknown and their roles stay. */
  holdings?: HoldingsReader | undefined;
  /** The balances of the member's page of a re-check, read in one batch per chain. */
  holdingsBatch?: Promise<HoldingsBatch> | undefined;
}

async function nameFact(deps: RuleReadDeps, link: LinkRecord, fresh: boolean): Promise<NameFact> {
  try {
    const answer = await deps.web3bio.getDomain(link.identity, { fresh });
    if (answer.stale) return { identity: link.identity, domain: null };
    return {
      identity: link.identity,
      domain: { createdAt: answer.data.createdAt, expiredAt: answer.data.expiredAt },
    };
  } catch (error) {
    deps.logger.warn(
      { err: error, guildId: link.guildId, identity: link.identity },
      'domain lookup for a role rule failed: the role stays as it is',
    );
    return { identity: link.identity, domain: null };
  }
}

async function followerFact(
  deps: RuleReadDeps,
  link: LinkRecord,
  platform: FollowerPlatform,
  fresh: boolean,
): Promise<FollowerFact> {
  const unknown = { identity: link.identity, platform, followers: null };
  try {
    // The identity's own profile on its platform: never the profiles its universal profile lists.
    const answer = await deps.web3bio.getPlatformProfile(platform, link.identity, { fresh });
    const followers = answer.data.social?.follower;
    if (answer.stale || typeof followers !== 'number') return unknown;
    return { identity: link.identity, platform, followers };
  } catch (error) {
    deps.logger.warn(
      { err: error, guildId: link.guildId, identity: link.identity },
      'profile lookup for a role rule failed: the role stays as it is',
    );
    return unknown;
  }
}

/** The facts the rules need about the member's active (proven) links and their counted evidence. */
export async function readRuleFacts(
  deps: RuleReadDeps,
  rules: readonly RoleRule[],
  active: readonly LinkRecord[],
  evidence: readonly IdentityEvidence[],
  fresh: boolean,
): Promise<RuleFacts> {
  const need = rulesNeed(rules);
  const proven = active.map((l) => ({ identity: l.identity, platform: rulePlatformOf(l.identity) }));
  const named = need.names
    ? active.filter((l) => {
        const kind = kindOf(l.identity);
        return kind !== null && DOMAIN_KINDS.has(kind);
      })
    : [];
  const social = active.flatMap((link) => {
    const platform = rulePlatformOf(link.identity);
    const counts = (platform === 'farcaster' || platform === 'lens') && need.followers.has(platform);
    return counts ? [{ link, platform }] : [];
  });
  const [names, followers, holdings] = await Promise.all([
    Promise.all(named.map((l) => nameFact(deps, l, fresh))),
    Promise.all(social.map(({ link, platform }) => followerFact(deps, link, platform, fresh))),
    readHoldingFacts(deps.holdings, need.holdings, active, fresh, deps.holdingsBatch),
  ]);
  return { proven, evidence: [...evidence], names, followers, holdings };
}

/** The rule roles' decisions for a member, and whether a read they needed failed. */
export async function roleRuleDecisions(
  deps: RuleReadDeps,
  rules: readonly RoleRule[],
  member: {
    active: readonly LinkRecord[];
    evidence: readonly IdentityEvidence[];
    fresh: boolean;
    nowSec: number;
  },
): Promise<{ decisions: RoleDecision[]; failed: boolean }> {
  if (rules.length === 0) return { decisions: [], failed: false };
  const facts = await readRuleFacts(deps, rules, member.active, member.evidence, member.fresh);
  const failed =
    facts.names.some((n) => n.domain === null) ||
    facts.followers.some((f) => f.followers === null) ||
    (facts.holdings ?? []).some((h) => h.unknown || h.decimals === null);
  return { decisions: evaluateRoleRules(rules, facts, member.nowSec), failed };
}

/** The guild's role rules as the store holds them. */
export async function loadRoleRules(
  store: Pick<GatingStore, 'listRuleConditions'>,
  guildId: string,
): Promise<RoleRule[]> {
  return rulesOfRows(await store.listRuleConditions(guildId));
}
