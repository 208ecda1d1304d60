/**
 * Pure gating rules: proven identities' credentials in, wanted roles out, each with the reason.
 *
 * - Human role: any unexpired `isHuman` credential that reads `true`, or whose score is at least
 *   `minScore` (with no `minScore`, scores alone earn nothing).
 * - Spam / risky roles: flagged by any unexpired `isSpam` / `isRisky` entry that reads `true` or
 *   carries a score. A score counts by presence, whatever its value: the server lists a score under
 *   the category it supports (a Farcaster spam label of 0 sits under `isSpam`), and `minScore` is a
 *   humanity threshold, not a spam one. Entries of unknown types that read neither are ignored, so a
 *   punitive role is never added on data we do not understand.
 * - A spam flag takes the human role away when `spamRemovesHuman`, even with no spam role set.
 * - No proven identity: every gated role is unwanted.
 * - A failed lookup (credentials null) never removes: a role that the other identities do not grant
 *   is `want: null` (keep as is). A grant or a spam flag found on the other identities still counts.
 * - Account and join age: with `minAccountAgeDays` / `minJoinAgeDays`, a member who would earn the human
 *   role is not granted it before both ages are reached (`tooNew`, `notBefore`); a role held is kept.
 */

import type { GuildSettings } from '../../store/types.ts';
import { credentialIsTrue, credentialScore, isCredentialExpired } from '../../web3bio/credentials.ts';
import type { Credential, CredentialCategory, CredentialSet } from '../../web3bio/types.ts';
import type { UncountedCredential } from './credentialSubjects.ts';

export interface GatingRules {
  humanRoleId: string;
  spamRoleId: string | null;
  riskyRoleId: string | null;
  minScore: number | null;
  spamRemovesHuman: boolean;
  /** Days since the Discord account was created before the human role is granted; 0 or null: off. */
  minAccountAgeDays?: number | null;
  /** Days since the member joined the server before the human role is granted; 0 or null: off. */
  minJoinAgeDays?: number | null;
}

/** When the member's account was created and when they joined the server (ms since epoch). */
export interface MemberAge {
  createdAt: number;
  /** null when Discord did not say. */
  joinedAt: number | null;
}

export const DAY_MS = 86_400_000;

/** When the member is old enough for the human role (ms), or null when the rules ask no age. */
export function qualifiesAt(rules: GatingRules, age: MemberAge): number | null {
  const times: number[] = [];
  if (rules.minAccountAgeDays) times.push(age.createdAt + rules.minAccountAgeDays * DAY_MS);
  if (rules.minJoinAgeDays && age.joinedAt !== null) times.push(age.joinedAt + rules.minJoinAgeDays * DAY_MS);
  return times.length === 0 ? null : Math.max(...times);
}

export interface IdentityEvidence {
  identity: string;
  /**
   * null: the lookup failed. Otherwise what counts: every flag, and only the isHuman entries whose
   * subject the member proved (see credentialSubjects.ts).
   */
  credentials: CredentialSet | null;
  /** isHuman entries of the answer left out of `credentials` because their subject is not proven. */
  uncounted?: UncountedCredential[];
}

/**
 * Why a rule decided, for the people reading it: a code and its values, worded in their language by the
 * renderers (`gating.reason.<code>`). `because` says the same in English for audit logs and the queue.
 */
export interface DecisionWhy {
  code:
    | 'noProvenIdentity'
    | 'flagStays'
    | 'evidence'
    | 'flagTakesHuman'
    | 'noHuman'
    | 'noHumanOrScore'
    | 'noFlag'
    | 'lookupFailed'
    | 'tooNew'
    | 'ruleScore'
    | 'rulePlatform'
    | 'ruleNameAge'
    | 'ruleNameExpiry'
    | 'ruleFollowers'
    | 'ruleToken'
    | 'ruleNft'
    | 'holdingsFailed'
    | 'ruleAll'
    | 'ruleAny';
  /** The message's arguments; `tooNew` carries `at` (ms), which render shows as a Discord date. */
  values?: Readonly<Record<string, string | number>>;
  /** A role rule of several conditions: the reasons of the conditions that decided (`ruleAll`, `ruleAny`). */
  parts?: readonly DecisionWhy[];
}

export interface RoleDecision {
  roleId: string;
  /** null: unknown, keep the role as it is. */
  want: boolean | null;
  because: string;
  why?: DecisionWhy;
  /** A spam flag takes the role away: such a removal is never held back. */
  byFlag?: boolean;
  /**
   * The member proves no identity any more (the last one moved to another member, or was unlinked): a fact
   * of the store, not an upstream answer, so such a removal is never held back either.
   */
  unproven?: boolean;
  /** The member is too new: the role is not granted before this time (ms), and not removed for it. */
  notBefore?: number;
}

export interface RoleChangeWanted {
  roleId: string;
  because: string;
  byFlag?: boolean;
  unproven?: boolean;
}

export interface RoleDiff {
  add: RoleChangeWanted[];
  remove: RoleChangeWanted[];
}

interface Finding {
  identity: string;
  credential: Credential;
  text: string;
}

const MAX_LABEL = 80;
const MAX_IDENTITY = 100;
const LISTED_IDENTITIES = 3;

/** Upstream labels and identities go into audit-log reasons: one line, bounded. */
export function oneLine(text: string, max: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters is the point
  const flat = text.replace(/[\u0000-\u001f\u007f\s]+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function nameOf(c: Credential): string {
  return oneLine(c.label || c.source || c.platform || c.category, MAX_LABEL);
}

export function listIdentities(identities: string[]): string {
  const shown = identities.slice(0, LISTED_IDENTITIES).map((i) => oneLine(i, MAX_IDENTITY));
  const more = identities.length - shown.length;
  return more > 0 ? `${shown.join(', ')} +${more} more` : shown.join(', ');
}

function entries(set: CredentialSet, category: CredentialCategory): Credential[] {
  return set[category] ?? [];
}

function findHuman(rules: GatingRules, known: IdentityEvidence[], nowSec: number): Finding | undefined {
  for (const { identity, credentials } of known) {
    if (!credentials) continue;
    for (const c of entries(credentials, 'isHuman')) {
      if (isCredentialExpired(c, nowSec)) continue;
      const where = `(${oneLine(identity, MAX_IDENTITY)})`;
      if (credentialIsTrue(c)) return { identity, credential: c, text: `isHuman: ${nameOf(c)} ${where}` };
      const score = credentialScore(c);
      if (score !== null && rules.minScore !== null && score >= rules.minScore) {
        const text = `isHuman: ${nameOf(c)} score ${score} ≥ ${rules.minScore} ${where}`;
        return { identity, credential: c, text };
      }
    }
  }
  return undefined;
}

function findFlag(
  category: 'isSpam' | 'isRisky',
  known: IdentityEvidence[],
  nowSec: number,
): Finding | undefined {
  for (const { identity, credentials } of known) {
    if (!credentials) continue;
    for (const c of entries(credentials, category)) {
      if (isCredentialExpired(c, nowSec)) continue;
      const score = credentialScore(c);
      if (!credentialIsTrue(c) && score === null) continue;
      const detail = score === null ? '' : ` score ${score}`;
      return {
        identity,
        credential: c,
        text: `${category}: ${nameOf(c)}${detail} (${oneLine(identity, MAX_IDENTITY)})`,
      };
    }
  }
  return undefined;
}

/** Whether a credential set flags its identity as spam or risky now (the same test the flag roles use). */
export function carriesFlag(credentials: CredentialSet, nowSec: number): boolean {
  const known = [{ identity: '', credentials }];
  return findFlag('isSpam', known, nowSec) !== undefined || findFlag('isRisky', known, nowSec) !== undefined;
}

/**
 * The roles the rules want for a member, from the credentials of each proven identity and, when the
 * rules ask an age, the member's account and join times.
 */
export function evaluateRules(
  rules: GatingRules,
  evidence: IdentityEvidence[],
  nowSec: number,
  age?: MemberAge,
): RoleDecision[] {
  const gated: { roleId: string; category: CredentialCategory }[] = [
    { roleId: rules.humanRoleId, category: 'isHuman' },
  ];
  if (rules.spamRoleId) gated.push({ roleId: rules.spamRoleId, category: 'isSpam' });
  if (rules.riskyRoleId) gated.push({ roleId: rules.riskyRoleId, category: 'isRisky' });

  if (evidence.length === 0) {
    return gated.map(({ roleId }) => ({
      roleId,
      want: false,
      because: 'no proven identity',
      why: { code: 'noProvenIdentity' },
    }));
  }

  const known = evidence.filter((e) => e.credentials !== null);
  const checked = listIdentities(known.map((e) => e.identity));
  const failed = evidence.filter((e) => e.credentials === null).map((e) => e.identity);
  const failedList = listIdentities(failed);
  const keep = `lookup failed for ${failedList}: keeping the current state`;
  const keepWhy: DecisionWhy = { code: 'lookupFailed', values: { identities: failedList } };

  const human = findHuman(rules, known, nowSec);
  const spam = findFlag('isSpam', known, nowSec);
  const risky = findFlag('isRisky', known, nowSec);
  const threshold = rules.minScore === null ? '' : ` or scores ≥ ${rules.minScore}`;

  return gated.map(({ roleId, category }): RoleDecision => {
    if (category === 'isHuman') {
      if (spam && rules.spamRemovesHuman) {
        return {
          roleId,
          want: false,
          because: `${spam.text} takes the human role away`,
          why: { code: 'flagTakesHuman', values: { evidence: spam.text } },
          byFlag: true,
        };
      }
      const due = human && age ? qualifiesAt(rules, age) : null;
      if (human && due !== null && due > nowSec * 1000) {
        const when = new Date(due).toISOString();
        const because = `${human.text}, but the account or membership is too new until ${when}`;
        return { roleId, want: false, because, why: { code: 'tooNew', values: { at: due } }, notBefore: due };
      }
      if (human) return { roleId, want: true, because: human.text, why: evidenceWhy(human) };
      if (failed.length > 0) return { roleId, want: null, because: keep, why: keepWhy };
      return {
        roleId,
        want: false,
        because: `no unexpired isHuman credential is true${threshold} (${checked})`,
        why:
          rules.minScore === null
            ? { code: 'noHuman', values: { identities: checked } }
            : { code: 'noHumanOrScore', values: { identities: checked, minScore: rules.minScore } },
      };
    }
    const flag = category === 'isSpam' ? spam : risky;
    if (flag) return { roleId, want: true, because: flag.text, why: evidenceWhy(flag) };
    if (failed.length > 0) return { roleId, want: null, because: keep, why: keepWhy };
    return {
      roleId,
      want: false,
      because: `no unexpired ${category} flag (${checked})`,
      why: { code: 'noFlag', values: { category, identities: checked } },
    };
  });
}

/** A finding as the reason: the credential's own words (`isHuman: Passport (alice.eth)`), in any language. */
function evidenceWhy(finding: Finding): DecisionWhy {
  return { code: 'evidence', values: { evidence: finding.text } };
}

/** The role a too-new member waits for, and until when (ms); undefined when none. */
export function notBeforeOf(decisions: readonly RoleDecision[]): { roleId: string; at: number } | undefined {
  const waiting = decisions.find((d) => d.notBefore !== undefined && d.want === false);
  return waiting?.notBefore === undefined ? undefined : { roleId: waiting.roleId, at: waiting.notBefore };
}

/**
 * The role edits that bring `currentRoleIds` to the decisions. Decisions naming the same role merge:
 * any `true` wins, else any `null` keeps it, else it goes.
 */
export function diffRoles(decisions: RoleDecision[], currentRoleIds: ReadonlySet<string>): RoleDiff {
  const strength = (want: boolean | null) => (want === true ? 2 : want === null ? 1 : 0);
  const merged = new Map<string, RoleDecision>();
  for (const d of decisions) {
    const seen = merged.get(d.roleId);
    if (!seen || strength(d.want) > strength(seen.want)) merged.set(d.roleId, d);
  }
  const diff: RoleDiff = { add: [], remove: [] };
  for (const { roleId, want, because, byFlag, unproven, notBefore } of merged.values()) {
    const has = currentRoleIds.has(roleId);
    if (want === true && !has) diff.add.push({ roleId, because });
    if (want === false && has && notBefore === undefined)
      diff.remove.push({ roleId, because, ...(byFlag ? { byFlag } : {}), ...(unproven ? { unproven } : {}) });
  }
  return diff;
}

/** The rules of a guild's settings. */
export function rulesOf(settings: GuildSettings): GatingRules {
  return {
    humanRoleId: settings.humanRoleId,
    spamRoleId: settings.spamRoleId,
    riskyRoleId: settings.riskyRoleId,
    minScore: settings.minScore,
    spamRemovesHuman: settings.spamRemovesHuman,
    minAccountAgeDays: settings.minAccountAgeDays ?? null,
    minJoinAgeDays: settings.minJoinAgeDays ?? null,
  };
}
