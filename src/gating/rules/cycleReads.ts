/**
 * Credential reads in a periodic re-check cycle (issue #37): an identity whose credentials were read
 * earlier in the cycle, for any server and by any process sharing the store, is not read again; the
 * cycle's first read takes no cached answer from before the cycle began, whatever the cache's TTL. So a
 * cycle reads each identity upstream once, however many servers it is proven in.
 */
import type { IdentityCheck, RecheckCycleCounts } from '../../store/recheckCycleTypes.ts';
import type { LinkRecord } from '../../store/types.ts';
import type { Web3BioClient } from '../../web3bio/client.ts';
import type { CredentialSet, Fetched } from '../../web3bio/types.ts';

/** The cycle a periodic pass belongs to, and what its reads cost (the pass adds it to the cycle's counts). */
export interface PassCycle {
  startedAt: number;
  counts: RecheckCycleCounts;
  /** The identities of the walk's page checked earlier in the cycle, by any server (set per page). */
  checks?: Promise<Map<string, IdentityCheck>>;
}

/** A credential read: another server's check of the identity in this cycle, or an answer of the client. */
export type CredentialRead =
  | { kind: 'reused'; check: IdentityCheck }
  | { kind: 'read'; answer: Fetched<CredentialSet> };

export function hasAnyCredential(set: CredentialSet): boolean {
  return set.isHuman.length + set.isRisky.length + set.isSpam.length > 0;
}

/** The link's credentials: without a cycle as asked (`fresh`), within one as the cycle allows. */
export async function readCredentials(
  web3bio: Web3BioClient,
  link: LinkRecord,
  fresh: boolean,
  cycle: PassCycle | undefined,
  now: number,
): Promise<CredentialRead> {
  if (!cycle) return { kind: 'read', answer: await web3bio.getCredentials(link.identity, { fresh }) };
  const check = (await cycle.checks?.catch(() => undefined))?.get(link.identity);
  if (check && reusable(check, link)) {
    cycle.counts.reusedChecks += 1;
    return { kind: 'reused', check };
  }
  // This server's link was checked in the cycle already (its second pass in one interval): as before
  // cycles, through the cache; a fresh answer may confirm a loss, the same answer never does.
  const checkedInCycle = link.lastCheckAt !== null && link.lastCheckAt >= cycle.startedAt;
  const call = checkedInCycle ? { fresh: false } : { maxAgeMs: Math.max(1, now - cycle.startedAt) };
  try {
    const answer = await web3bio.getCredentials(link.identity, call);
    if (!answer.cached) cycle.counts.upstreamRequests += 1;
    return { kind: 'read', answer };
  } catch (error) {
    // A failure or "not found" may have come from the cache: counted as a request, an upper bound.
    cycle.counts.upstreamRequests += 1;
    throw error;
  }
}

/**
 * Another server's check counts for this link when it is newer than the link's own (one answer never
 * counts twice towards confirming a loss) and is not an empty answer for an identity this link knew
 * with credentials (it may be a sudden "not found" there, which proves nothing: read for itself).
 */
function reusable(check: IdentityCheck, link: LinkRecord): boolean {
  if (link.lastCheckAt !== null && check.at <= link.lastCheckAt) return false;
  const knownBefore = link.lastResult !== null && hasAnyCredential(link.lastResult);
  return !knownBefore || hasAnyCredential(check.result);
}
