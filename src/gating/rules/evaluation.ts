/**
 * Evaluation of one member: reads each proven identity's record and credentials from Web3.bio, tells a
 * real answer from a failure or a sudden "not found", and applies the guild's rules. It reads and
 * reports; it never changes a link or a role (the service decides what to apply, and when).
 */
import type { Logger } from '../../ops/log.ts';
import type { Exemption, GatingStore, GuildSettings, LinkKey, LinkRecord } from '../../store/types.ts';
import type { Web3BioClient } from '../../web3bio/client.ts';
import { type ParsedIdentity, parseIdentity } from '../../web3bio/identity.ts';
import { recordNamesDiscordUser } from '../proofs/recordProof.ts';
import { ownersCount, type ProofBehind, weighCredentials } from './credentialSubjects.ts';
import { hasAnyCredential, type PassCycle, readCredentials, type Seen } from './cycleReads.ts';
import { type ExemptBy, exemptionOf, holdRemovals } from './exemptions.ts';
import {
  type BatchedRecord,
  batchRecords,
  lookupOutcome,
  type RecordRead,
  readRecord,
} from './recordReads.ts';
import type { RoleRule } from './roleRules.ts';
import { type RuleReadDeps, roleRuleDecisions } from './ruleReads.ts';
import {
  carriesFlag,
  diffRoles,
  evaluateRules,
  type GatingRules,
  type IdentityEvidence,
  type MemberAge,
  type RoleChangeWanted,
  type RoleDecision,
  type RoleDiff,
  rulesOf,
} from './rules.ts';

export interface MemberState {
  userId: string;
  /** null when the member is not in the guild (then records cannot be compared). */
  username: string | null;
  roleIds: ReadonlySet<string>;
  /** Account and join times, when the member is in the guild (the rules' age thresholds). */
  age?: MemberAge;
}

export interface EvaluateOptions {
  settings: GuildSettings;
  fresh: boolean;
  /** Read only: no check recorded. */
  dryRun: boolean;
  checkRecords: boolean;
  batch?: Promise<Map<string, BatchedRecord>>;
  /** The guild's exemptions: an exempt member's removals are held (`kept`), never in `diff`. */
  exemptions?: readonly Exemption[];
  /** The guild's role rules: what they need is read (cached) only when there are some. */
  roleRules?: readonly RoleRule[];
  holdingsBatch?: RuleReadDeps['holdingsBatch'];
  /** A periodic pass's cycle: an identity checked in it by any server is not read again (cycleReads.ts). */
  cycle?: PassCycle;
}

/** A record link whose record, read just now, does not name the member. */
export interface RecordGone {
  link: LinkRecord;
  reason: string;
  /** A real answer without the name (not a sudden "not found"). */
  confirmable: boolean;
}

export interface Evaluation {
  /** Links that prove something (not released). */
  links: LinkRecord[];
  /** Unlinked identities still re-checked because they carried a flag. */
  released: LinkRecord[];
  evidence: IdentityEvidence[];
  decisions: RoleDecision[];
  diff: RoleDiff;
  /** Removals the rules want that an exemption holds back (left out of `diff`). */
  kept: RoleChangeWanted[];
  /** The exemption covering the member, or null. */
  exemptBy: ExemptBy | null;
  recordsGone: RecordGone[];
  /** Record links whose record, read just now, still names the member. */
  recordsNaming: Set<string>;
  /** Released identities whose real answer shows no flag any more. */
  clearedHolds: LinkRecord[];
  /** Released identities still flagged. */
  stillFlagged: Set<string>;
  /** A credential lookup failed, so some decisions are "keep as is". */
  failed: boolean;
  /** Every answer behind a loss is a real one: none is a sudden "not found" for a known identity. */
  confirmable: boolean;
}

export type { Seen } from './cycleReads.ts';

export interface EvaluatorOptions {
  web3bio: Web3BioClient;
  store: Pick<GatingStore, 'recordLinkCheck'>;
  logger: Logger;
  now: () => number;
  holdings?: RuleReadDeps['holdings'];
}

/** Reads and rules for one member at a time. */
export class Evaluator {
  readonly holdings: RuleReadDeps['holdings'];
  readonly #web3bio: Web3BioClient;
  readonly #store: Pick<GatingStore, 'recordLinkCheck'>;
  readonly #logger: Logger;
  readonly #now: () => number;

  constructor(options: EvaluatorOptions) {
    this.#web3bio = options.web3bio;
    this.#store = options.store;
    this.#logger = options.logger;
    this.#now = options.now;
    this.holdings = options.holdings;
  }

  /**
   * The identity's own profile (and ENS-style text records), as evidence for a record proof. `fresh`:
   * true reads past the cache, false takes any fresh cached answer, `{ maxAgeMs }` only one that recent.
   */
  async readRecord(parsed: ParsedIdentity, fresh: boolean | { maxAgeMs: number }): Promise<RecordRead> {
    return readRecord(this.#web3bio, parsed, fresh);
  }

  async evaluate(member: MemberState, links: LinkRecord[], o: EvaluateOptions): Promise<Evaluation> {
    const active = links.filter((l) => l.releasedAt === null);
    const released = links.filter((l) => l.releasedAt !== null);
    const recordsGone: RecordGone[] = [];
    const recordsNaming = new Set<string>();
    if (o.checkRecords) {
      await Promise.all(
        active.map(async (link) => {
          if (link.proofMethod !== 'record') return;
          const verdict = await this.#recordVerdict(link, member.username, o);
          if (verdict === 'names') recordsNaming.add(link.identity);
          else if (verdict !== 'unknown') recordsGone.push(verdict);
        }),
      );
    }
    const reads = await Promise.all(
      [...active, ...released].map((link) => this.#credentialsOf(link, o.fresh, o.dryRun, o.cycle)),
    );
    const nowSec = Math.floor(this.#now() / 1000);
    const counted = await this.#weigh(
      active,
      reads.slice(0, active.length).map((r) => r.evidence),
      nowSec,
    );
    // A released identity proves nothing: only its flags count.
    const evidence = [
      ...counted,
      ...reads
        .slice(active.length)
        .map(({ evidence: e }) =>
          e.credentials === null ? e : { ...e, credentials: { ...e.credentials, isHuman: [] } },
        ),
    ];
    const rules = rulesOf(o.settings);
    let decisions = evaluateRules(rules, evidence, nowSec, member.age);
    if (evidence.length === 0) decisions = keepFlags(decisions, rules);
    // Nothing proven remains (the last link moved to another member): the human role goes without waiting.
    if (active.length === 0)
      decisions = decisions.map((d) =>
        d.roleId === rules.humanRoleId && d.want === false ? { ...d, unproven: true } : d,
      );
    const deps = { web3bio: this.#web3bio, logger: this.#logger, holdings: this.holdings };
    // A rule never decides a role `/gating setup` gates: its age delay and spam flag stay in force.
    const setupRoles = [rules.humanRoleId, rules.spamRoleId, rules.riskyRoleId];
    const roleRules = (o.roleRules ?? []).filter((r) => !setupRoles.includes(r.roleId));
    const ruled = await roleRuleDecisions({ ...deps, holdingsBatch: o.holdingsBatch }, roleRules, {
      active,
      evidence: counted,
      fresh: o.fresh,
      nowSec,
    });
    decisions = [...decisions, ...ruled.decisions];
    const clearedHolds: LinkRecord[] = [];
    const stillFlagged = new Set<string>();
    released.forEach((link, i) => {
      const read = reads[active.length + i];
      const credentials = read?.evidence.credentials ?? null;
      if (credentials === null) return;
      if (carriesFlag(credentials, nowSec)) stillFlagged.add(link.identity);
      // A "not found" for an identity never seen with credentials is an answer too.
      else if (read?.seen === 'answer' || (read?.seen === 'not_found' && !read.knownBefore)) {
        clearedHolds.push(link);
      }
    });
    const exemptBy = exemptionOf(member, o.exemptions ?? []);
    const { diff, kept } = holdRemovals(diffRoles(decisions, member.roleIds), exemptBy);
    return {
      links: active,
      released,
      evidence,
      decisions,
      diff,
      kept,
      exemptBy,
      recordsGone,
      recordsNaming,
      clearedHolds,
      stillFlagged,
      failed: ruled.failed || evidence.some((e) => e.credentials === null),
      confirmable: reads.every((r) => r.seen !== 'not_found' || !r.knownBefore),
    };
  }

  /**
   * What counts of every identity's credentials (each link taken as proven), for a report when the guild
   * has no rules and for Linked Roles.
   */
  async evidenceOf(links: LinkRecord[], fresh: boolean): Promise<IdentityEvidence[]> {
    return (await this.answersOf(links, fresh)).map((a) => a.evidence);
  }

  /**
   * Each answer weighed by subject against everything the links prove (credentialSubjects.ts). The
   * owner and manager of record-proven names are read (cached) only when an entry is left out that they
   * could account for; when that read fails, those answers count as failed lookups (nothing is removed).
   */
  async #weigh(
    links: LinkRecord[],
    answers: IdentityEvidence[],
    nowSec: number,
  ): Promise<IdentityEvidence[]> {
    const proofs: ProofBehind[] = links.map((l) => ({
      identity: l.identity,
      proofMethod: l.proofMethod,
      address: l.address,
    }));
    const weighAll = () =>
      answers.map((answer, i): IdentityEvidence => {
        const proof = proofs[i];
        if (answer.credentials === null || proof === undefined) return answer;
        const { counted, uncounted } = weighCredentials({
          credentials: answer.credentials,
          proof,
          others: proofs,
          nowSec,
        });
        return {
          identity: answer.identity,
          credentials: counted,
          ...(uncounted.length > 0 ? { uncounted } : {}),
        };
      });
    const first = weighAll();
    const wanting = (e: IdentityEvidence) => e.uncounted?.some((u) => u.signWith !== null) === true;
    if (!first.some(wanting) || !links.some(ownersCount)) return first;
    const owners = await Promise.all(links.map((l) => (ownersCount(l) ? this.#ownersOf(l) : null)));
    owners.forEach((o, i) => {
      const proof = proofs[i];
      if (o && o !== 'failed' && proof) Object.assign(proof, o);
    });
    const weighed = weighAll();
    if (!owners.includes('failed')) return weighed;
    return weighed.map((e) => (wanting(e) ? { identity: e.identity, credentials: null } : e));
  }

  /**
   * The owner and manager of a record-proven name, from the cached `/domain` answer (the record proof or
   * check just read it fresh); empty when Web3.bio knows no domain, 'failed' when it could not answer.
   */
  async #ownersOf(
    link: LinkRecord,
  ): Promise<Pick<ProofBehind, 'ownerAddress' | 'managerAddress'> | 'failed'> {
    const outcome = await lookupOutcome(this.#web3bio.getDomain(link.identity, { fresh: false }));
    if (outcome.kind === 'ok')
      return { ownerAddress: outcome.data.ownerAddress, managerAddress: outcome.data.managerAddress };
    if (outcome.kind === 'missing') return {};
    this.#logger.warn(
      { guildId: link.guildId, identity: link.identity },
      'domain lookup failed: credentials of its wallet are left as they were',
    );
    return 'failed';
  }

  /**
   * What counts of every identity's credentials (weighed by subject, each link taken as proven), with how
   * each lookup ended (Linked Roles' flag holds clear only on a real answer).
   */
  async answersOf(
    links: LinkRecord[],
    fresh: boolean,
  ): Promise<{ evidence: IdentityEvidence; seen: Seen }[]> {
    const reads = await Promise.all(links.map((l) => this.#credentialsOf(l, fresh, true)));
    const weighed = await this.#weigh(
      links,
      reads.map((r) => r.evidence),
      Math.floor(this.#now() / 1000),
    );
    return reads.map((r, i) => ({ evidence: weighed[i] ?? r.evidence, seen: r.seen }));
  }

  /**
   * Every record link's identity of a page, in batched lookups (30 identities each): a profile that still
   * names the member needs no lookup of its own.
   */
  async batchRecords(links: LinkRecord[], fresh: boolean): Promise<Map<string, BatchedRecord>> {
    return batchRecords(this.#web3bio, this.#logger, links, fresh);
  }

  /** Whether the record still names the member, nothing can be told, or why it does not. */
  async #recordVerdict(
    link: LinkRecord,
    username: string | null,
    o: EvaluateOptions,
  ): Promise<'names' | 'unknown' | RecordGone> {
    if (username === null) return 'unknown';
    const batched = o.batch ? (await o.batch).get(link.identity) : undefined;
    if (batched?.kind === 'failed') return 'unknown';
    if (batched?.kind === 'profile') {
      if (recordNamesDiscordUser({ profiles: [batched.profile], domain: null }, { username })) return 'names';
    }
    // Not in the batched profile: the text record may still name them, so look before deciding anything.
    let parsed: ParsedIdentity;
    try {
      parsed = parseIdentity(link.identity);
    } catch {
      return 'unknown';
    }
    const read = await this.readRecord(parsed, o.fresh);
    if (recordNamesDiscordUser(read, { username })) return 'names';
    if (read.failed) return 'unknown';
    const answered = read.profiles.length > 0 || read.domain !== null;
    return {
      link,
      reason: answered
        ? `the discord record of ${link.identity} no longer names ${username}`
        : `Web3.bio no longer finds ${link.identity}`,
      confirmable: answered,
    };
  }

  /** A link's credentials: null when the lookup failed (then nothing is removed on its account). */
  async #credentialsOf(
    link: LinkRecord,
    fresh: boolean,
    dryRun: boolean,
    cycle?: PassCycle,
  ): Promise<{ evidence: IdentityEvidence; seen: Seen; knownBefore: boolean }> {
    const knownBefore = link.lastResult !== null && hasAnyCredential(link.lastResult);
    const deps = { web3bio: this.#web3bio, logger: this.#logger, now: this.#now() };
    const { credentials, seen, at } = await readCredentials(deps, link, fresh, cycle);
    if (!dryRun) {
      const key: LinkKey = { guildId: link.guildId, userId: link.userId, identity: link.identity };
      // A sudden "not found" keeps the last known result, as a failure does.
      const kept = credentials === null || (seen === 'not_found' && knownBefore);
      const notFound = seen === 'not_found';
      const check = kept ? { at, ok: false } : { at, ok: true, result: credentials, notFound };
      await this.#store
        .recordLinkCheck(key, check)
        .catch((error: unknown) => this.#logger.warn({ err: error }, 'could not record a link check'));
    }
    return { evidence: { identity: link.identity, credentials }, seen, knownBefore };
  }
}

/**
 * With no proven identity at all, the spam and risky roles stay as they are: a moderator may have set
 * them by hand, and an identity that carried a flag is kept (released) until its own credentials clear.
 */
function keepFlags(decisions: RoleDecision[], rules: GatingRules): RoleDecision[] {
  return decisions.map((d) =>
    d.want === false && d.roleId !== rules.humanRoleId
      ? {
          ...d,
          want: null,
          because: 'no proven identity: a flag stays until a moderator removes it',
          why: { code: 'flagStays' as const },
        }
      : d,
  );
}
