/**
 * With shards, the HTTP server (signing page, OAuth callback) runs once per machine, in the shard manager,
 * while each guild belongs to one shard process. A verified signature crosses over through the store:
 * `handOffSignedProof` queues it and waits a little for its answer; a `SignedProofInbox` in each shard
 * process claims the proofs of its own guilds and links them exactly as an unsharded bot does. A proof
 * queued while its shard restarts waits in the store, and a claim that lapses (the process died mid-proof)
 * is taken over.
 */
import { CoalescedPoller } from '../../ops/coalescedPoller.ts';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, JsonValue, NonceRecord } from '../../store/types.ts';
import { delay } from '../roles/discordReads.ts';
import type { SignatureLinkResult } from '../types.ts';

type ProofStore = Pick<
  GatingStore,
  'enqueueSignedProof' | 'openSignedProofs' | 'claimSignedProof' | 'finishSignedProof' | 'signedProofResult'
>;

export interface SignedProof {
  record: NonceRecord;
  address: string;
}

/**
 * Queue a verified signature for the shard that owns its guild, tell the shards (`nudge`), and wait up to
 * `waitMs` for the answer. Past that the proof stays queued and the answer says so (`queued`).
 */
export async function handOffSignedProof(
  store: ProofStore,
  proof: SignedProof,
  o: { nudge: (guildId: string) => void; waitMs?: number; pollMs?: number },
): Promise<SignatureLinkResult> {
  const id = await store.enqueueSignedProof(proof);
  o.nudge(proof.record.guildId);
  const deadline = Date.now() + (o.waitMs ?? 8_000);
  for (;;) {
    const result = await store.signedProofResult(id);
    if (result !== null && result !== undefined) return toLinkResult(result, proof.record.identity);
    if (Date.now() >= deadline) return { ok: true, queued: true };
    await delay(o.pollMs ?? 100);
  }
}

/** What the shard process recorded; anything unreadable counts as a failure on our side. */
function toLinkResult(value: JsonValue, identity: string): SignatureLinkResult {
  const record = typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
  if (record.ok === true) return { ok: true };
  const refusal = record.refusal;
  if (
    typeof refusal === 'object' &&
    refusal !== null &&
    !Array.isArray(refusal) &&
    typeof refusal.code === 'string'
  )
    return {
      ok: false,
      refusal: refusal as unknown as Extract<SignatureLinkResult, { ok: false }>['refusal'],
    };
  return { ok: false, refusal: { code: 'lookup_failed', identity } };
}

export interface SignedProofInboxOptions {
  store: ProofStore;
  logger: Logger;
  /** Whether this process's shards serve the guild. */
  ownsGuild: (guildId: string) => boolean;
  /** Link the proof (the service's `completeSignature`). */
  complete: (proof: SignedProof) => Promise<SignatureLinkResult>;
  /** How often to look for proofs nobody nudged us about (after a restart, a lost message). Default 5 s. */
  pollMs?: number;
  /** Claims before a proof that keeps failing is answered with a failure. Default 5. */
  maxAttempts?: number;
}

/** Claims and links, in a shard process, the queued proofs of the guilds its shards serve. */
export class SignedProofInbox extends CoalescedPoller {
  readonly #o: Required<SignedProofInboxOptions>;

  constructor(options: SignedProofInboxOptions) {
    const o = { pollMs: 5_000, maxAttempts: 5, ...options };
    super({ pollMs: o.pollMs, logger: o.logger, what: 'signed-proof inbox' });
    this.#o = o;
  }

  protected async look(): Promise<void> {
    const { store, logger, ownsGuild, complete, maxAttempts } = this.#o;
    for (const open of await store.openSignedProofs(100)) {
      if (this.stopping) return;
      if (!ownsGuild(open.guildId)) continue;
      const claim = await store.claimSignedProof(open.id);
      if (!claim) continue;
      const log = { proofId: claim.id, guildId: claim.record.guildId, userId: claim.record.userId };
      let result: SignatureLinkResult;
      try {
        result = await complete({ record: claim.record, address: claim.address });
      } catch (error) {
        if (claim.attempts < maxAttempts) {
          logger.warn(
            { ...log, err: error, attempts: claim.attempts },
            'linking a signed proof failed; will retry',
          );
          continue;
        }
        logger.error({ ...log, err: error }, 'linking a signed proof kept failing; giving up');
        result = { ok: false, refusal: { code: 'lookup_failed', identity: claim.record.identity } };
      }
      await store.finishSignedProof(claim.id, claim.claimToken, result as unknown as JsonValue);
      logger.info({ ...log, ok: result.ok }, 'signed proof linked by its shard');
    }
  }
}
