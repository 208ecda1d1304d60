/**
 * A link's credential read, and the same read in a periodic re-check cycle (issue #37): an identity whose
 * credentials were read earlier in the cycle, for any server and by any process sharing the store, is
 * not read again (that answer is taken, as of when it was read, "not found" included); the cycle's first
 * read takes no cached answer from before the cycle began, whatever the cache's TTL. So a cycle reads
 * each identity upstream once, however many servers it is proven in.
 */
import type { Logger } from '../../ops/log.ts';
import type { IdentityCheck, RecheckCycleCounts } from '../../store/recheckCycleTypes.ts';
import type { LinkRecord } from '../../store/types.ts';
import type { Web3BioClient } from '../../web3bio/client.ts';
import { NotFoundError } from '../../web3bio/errors.ts';
import type { CredentialSet, Fetched } from '../../web3bio/types.ts';

/** How a credential lookup ended: a real answer, "not found", or a failure. */
export type Seen = 'answer' | 'not_found' | 'failed';

export const NO_CREDENTIALS: CredentialSet = { isHuman: [], isRisky: [], isSpam: [] };

/** The cycle a periodic pass belongs to, and what its reads cost (the pass adds it to the cycle's counts). */
export interface PassCycle {
  startedAt: number;
  counts: RecheckCycleCounts;
  /** The identities of the walk's page checked earlier in the cycle, by any server (set per page). */
  checks?: Promise<Map<string, IdentityCheck>>;
}

/** A credential read: its credentials (null when it failed), how it ended, and when it was answered. */
export interface CredentialOutcome {
  credentials: CredentialSet | null;
  seen: Seen;
  at: number;
}

export function hasAnyCredential(set: CredentialSet): boolean {
  return set.isHuman.length + set.isRisky.length + set.isSpam.length > 0;
}

/** The link's credentials: without a cycle as asked (`fresh`), within one as the cycle allows. */
export async function readCredentials(
  deps: { web3bio: Web3BioClient; logger: Logger; now: number },
  link: LinkRecord,
  fresh: boolean,
  cycle: PassCycle | undefined,
): Promise<CredentialOutcome> {
  const check = cycle ? (await cycle.checks?.catch(() => undefined))?.get(link.identity) : undefined;
  // Another server's check in this cycle, newer than this link's own: one answer never counts twice
  // towards confirming a loss here.
  if (cycle && check && (link.lastCheckAt === null || check.at > link.lastCheckAt)) {
    cycle.counts.reusedChecks += 1;
    const seen = check.notFound ? 'not_found' : 'answer';
    return { credentials: check.notFound ? NO_CREDENTIALS : check.result, seen, at: check.at };
  }
  // A second pass of this server in one cycle reads as before cycles did: through the cache.
  const checkedInCycle = cycle && link.lastCheckAt !== null && link.lastCheckAt >= cycle.startedAt;
  const call = cycle && !checkedInCycle ? { maxAgeMs: Math.max(1, deps.now - cycle.startedAt) } : { fresh };
  try {
    const answer: Fetched<CredentialSet> = await deps.web3bio.getCredentials(link.identity, call);
    if (cycle && !answer.cached) cycle.counts.upstreamRequests += 1;
    // A stale answer means the upstream failed just now: treat it as the failure it is.
    return answer.stale
      ? { credentials: null, seen: 'failed', at: deps.now }
      : { credentials: answer.data, seen: 'answer', at: deps.now };
  } catch (error) {
    // A failure or "not found" may have come from the cache: counted as a request, an upper bound.
    if (cycle) cycle.counts.upstreamRequests += 1;
    // "Not found" is an answer (no credentials), but never proof that a known identity lost them.
    if (error instanceof NotFoundError)
      return { credentials: NO_CREDENTIALS, seen: 'not_found', at: deps.now };
    deps.logger.warn(
      { err: error, guildId: link.guildId, identity: link.identity },
      'credential lookup failed',
    );
    return { credentials: null, seen: 'failed', at: deps.now };
  }
}
