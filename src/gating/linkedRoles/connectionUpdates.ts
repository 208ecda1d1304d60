/**
 * One Linked Roles connection brought up to date, for a proof and for every re-check: a record proof's
 * record read again (the connection released once it is seen, twice, not to name the member), then what
 * the identity and the account's holds earn now written to Discord, a loss held back until confirmed.
 */

import { type DiscordOAuthConfig, fetchCurrentUser } from '../../discord/oauth.ts';
import type { Logger } from '../../ops/log.ts';
import type {
  LinkRecord,
  RoleConnectionHold,
  RoleConnectionRecord,
  RoleConnectionStore,
} from '../../store/types.ts';
import { parseIdentity } from '../../web3bio/identity.ts';
import { recordNamesDiscordUser } from '../proofs/recordProof.ts';
import type { Evaluator, Seen } from '../rules/evaluation.ts';
import { carriesFlag, type IdentityEvidence } from '../rules/rules.ts';
import { putRoleConnection, type RoleConnection, roleConnectionFor } from './linkedRoles.ts';
import type { MemberCallFailure, MemberTokens } from './linkedRoleTokens.ts';

/** As GATING_CONFIRM_MINUTES' default. */
const DEFAULT_CONFIRM_MS = 60 * 60_000;

/** Why a connection stopped backing its account (`releasedReason`); render says it in words. */
export type ReleaseReason =
  /** Its wallet signed for another Discord account. */
  | 'signed_elsewhere'
  /** Another Discord account proved the identity (its record names that account now). */
  | 'proven_elsewhere'
  /** A re-check read the record, twice, without the member's Discord username. */
  | 'record_gone';

type Answer = { evidence: IdentityEvidence; seen: Seen };

/** The Linked Roles service's options that updates use. */
export interface ConnectionUpdateOptions {
  store: RoleConnectionStore;
  oauth: DiscordOAuthConfig;
  evaluator: Pick<Evaluator, 'answersOf' | 'readRecord'>;
  logger: Pick<Logger, 'info'>;
  now: () => number;
  /** A loss is applied once seen at least this far apart (GATING_CONFIRM_MINUTES). Default 60 min. */
  confirmMs?: number;
}

/** The steps of bringing a connection up to date; the Linked Roles service decides when each runs. */
export class ConnectionUpdates {
  readonly #o: ConnectionUpdateOptions;

  constructor(options: ConnectionUpdateOptions) {
    this.#o = options;
  }

  get #confirmMs(): number {
    return this.#o.confirmMs ?? DEFAULT_CONFIRM_MS;
  }

  /**
   * Reads the record of a record-proven connection again with the member's current Discord username. A
   * real answer without the name is noted, and releases the connection when a later re-check at least
   * confirmMs after sees it again; a failed lookup or a "not found" tells nothing.
   */
  async checkRecord(
    record: RoleConnectionRecord,
    tokens: MemberTokens,
  ): Promise<'kept' | 'released' | 'stale'> {
    let parsed: ReturnType<typeof parseIdentity>;
    try {
      parsed = parseIdentity(record.identity);
    } catch {
      return 'kept';
    }
    const user = await tokens.call((token) => fetchCurrentUser(this.#o.oauth, token));
    if (user === 'stale') return 'stale';
    if (user === 'discord_failed') return 'kept';
    const read = await this.#o.evaluator.readRecord(parsed, true);
    const { userId, recordLossSeenAt } = record;
    if (recordNamesDiscordUser(read, { username: user.value.username })) {
      if (recordLossSeenAt !== null) await this.#o.store.noteRoleConnectionRecordLoss(userId, null);
      return 'kept';
    }
    if (read.failed || (read.profiles.length === 0 && read.domain === null)) return 'kept';
    const now = this.#o.now();
    if (recordLossSeenAt === null) {
      await this.#o.store.noteRoleConnectionRecordLoss(userId, now);
      return 'kept';
    }
    if (now - recordLossSeenAt < this.#confirmMs) return 'kept';
    const reason: ReleaseReason = 'record_gone';
    await this.#o.store.releaseRoleConnection(userId, reason, now);
    this.#o.logger.info(
      { userId, reason },
      'linked role connection released: the record no longer names the member',
    );
    return 'released';
  }

  /**
   * Computes what the connection earns now (its live identity's credentials unless released, plus the
   * flags of its holds), settles the holds, holds back a loss until confirmed, and writes it when it
   * changed. `live`: the live identity's answer when the caller just read it.
   */
  async write(
    record: RoleConnectionRecord,
    tokens: MemberTokens,
    live?: Answer,
  ): Promise<
    | { kind: 'written'; connection: RoleConnection }
    | { kind: 'unchanged'; connection: RoleConnection; lossPending: boolean }
    | { kind: 'lookup_failed' | MemberCallFailure }
  > {
    const { userId } = record;
    const released = record.releasedAt !== null;
    const holds = await this.#o.store.listRoleConnectionHolds(userId);
    const [liveAnswers, heldAnswers] = await Promise.all([
      released ? [] : live ? [live] : this.#o.evaluator.answersOf([linkOf(record)], true),
      this.#o.evaluator.answersOf(holds.map(holdLinkOf), true),
    ]);
    await this.#settleHolds(holds, heldAnswers);
    // A held identity Web3.bio no longer finds keeps the flags it was held with.
    const keptFlags = holds.flatMap((hold, i) => (heldAnswers[i]?.seen === 'not_found' ? hold.flags : []));
    const fresh = roleConnectionFor({
      username: released ? null : record.identity,
      evidence: liveAnswers.map((a) => a.evidence),
      held: heldAnswers.map((a) => a.evidence),
      keptFlags,
      firstProvenAt: record.provenAt,
      nowSec: Math.floor(this.#o.now() / 1_000),
    });
    if (!fresh) return { kind: 'lookup_failed' };
    // As with roles: a new flag is written at once, a loss only once seen again confirmMs later. A
    // released connection loses what its identity gave at once: the identity is someone else's now.
    const now = this.#o.now();
    const held = released ? null : holdLosses(record.metadata, fresh.metadata);
    const confirmed =
      held !== null && record.lossSeenAt !== null && now - record.lossSeenAt >= this.#confirmMs;
    const lossSeenAt = held === null || confirmed ? null : (record.lossSeenAt ?? now);
    if (lossSeenAt !== record.lossSeenAt) await this.#o.store.noteRoleConnectionLoss(userId, lossSeenAt);
    const connection = held === null || confirmed ? fresh : { ...fresh, metadata: held };
    if (sameMetadata(record.metadata, connection.metadata))
      return { kind: 'unchanged', connection, lossPending: lossSeenAt !== null };
    const put = await tokens.call((token) => putRoleConnection(this.#o.oauth, token, connection));
    if (put === 'stale' || put === 'discord_failed') return { kind: put };
    await this.#o.store.recordRoleConnectionWrite(userId, connection.metadata, now);
    if (live === undefined) this.#o.logger.info({ userId }, 'linked role connection updated');
    return { kind: 'written', connection };
  }

  /**
   * A hold goes once its own credentials, in real answers at least confirmMs apart, show no flag; a
   * flag seen again forgets the earlier sighting. A failure or a "not found" tells nothing.
   */
  async #settleHolds(holds: RoleConnectionHold[], answers: Answer[]): Promise<void> {
    const now = this.#o.now();
    const nowSec = Math.floor(now / 1_000);
    for (const [i, hold] of holds.entries()) {
      const answer = answers[i];
      const credentials = answer?.evidence.credentials ?? null;
      if (answer?.seen !== 'answer' || credentials === null) continue;
      if (carriesFlag(credentials, nowSec)) {
        if (hold.clearSeenAt !== null)
          await this.#o.store.noteRoleConnectionHoldClear(hold.userId, hold.identity, null);
      } else if (hold.clearSeenAt === null) {
        await this.#o.store.noteRoleConnectionHoldClear(hold.userId, hold.identity, now);
      } else if (now - hold.clearSeenAt >= this.#confirmMs) {
        await this.#o.store.removeRoleConnectionHold(hold.userId, hold.identity);
        this.#o.logger.info({ userId: hold.userId }, 'linked role flag hold dropped: its identity cleared');
      }
    }
  }
}

/** The connection's identity as the evaluator reads it, with its real proof method. */
export function linkOf(
  c: Pick<LinkRecord, 'userId' | 'identity' | 'platform' | 'address' | 'proofMethod' | 'provenAt'>,
): LinkRecord {
  return {
    guildId: '',
    userId: c.userId,
    identity: c.identity,
    platform: c.platform,
    address: c.address,
    proofMethod: c.proofMethod,
    provenAt: c.provenAt,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
  };
}

/** A held identity proves nothing (its humanity is dropped): only its flags are read. */
function holdLinkOf(hold: RoleConnectionHold): LinkRecord {
  return { ...linkOf({ ...hold, proofMethod: 'record', provenAt: hold.since }), releasedAt: hold.since };
}

/**
 * The metadata with its losses (likely human dropped, a lower humanity score) put back to what Discord
 * holds; null when nothing got worse. Flags (not spam, not risky) are not held.
 */
function holdLosses(
  written: Record<string, string> | null,
  fresh: Record<string, string>,
): Record<string, string> | null {
  if (written === null) return null;
  const held = { ...fresh };
  let losing = false;
  if (written.likely_human === '1' && fresh.likely_human === '0') {
    held.likely_human = '1';
    losing = true;
  }
  if (Number(fresh.humanity_score ?? 0) < Number(written.humanity_score ?? 0)) {
    held.humanity_score = written.humanity_score ?? '0';
    losing = true;
  }
  return losing ? held : null;
}

function sameMetadata(a: Record<string, string> | null, b: Record<string, string>): boolean {
  if (a === null) return false;
  const keys = Object.keys(b);
  return keys.length === Object.keys(a).length && keys.every((k) => a[k] === b[k]);
}
