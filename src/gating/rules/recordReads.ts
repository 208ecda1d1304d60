/**
 * Reading identities' records from Web3.bio, one at a time or batched, for record proofs and re-checks:
 * how each lookup ended (an answer, "not found" or a failure) and the addresses a record resolves to.
 */
import type { Logger } from '../../ops/log.ts';
import type { LinkRecord } from '../../store/types.ts';
import type { Web3BioClient } from '../../web3bio/client.ts';
import { NotFoundError } from '../../web3bio/errors.ts';
import { EVM_ADDRESS, type ParsedIdentity, parseBatchId, SOLANA_ADDRESS } from '../../web3bio/identity.ts';
import { KIND_PROFILE_SEGMENT, TEXT_RECORD_KINDS } from '../../web3bio/identityKind.ts';
import type { DomainInfo, Fetched, Profile } from '../../web3bio/types.ts';

/**
 * A record proof on a page reads an answer at most this old, once the account's few fresh reads in this
 * window are spent (the web tier's FRESH_PROOF_READS): a member who just edited their record is read
 * afresh, and a burst of proofs by one account costs a read or two.
 */
export const PROVE_READ_MAX_AGE_MS = 30_000;

/** What a batch said about a record link's identity. */
export type BatchedRecord = { kind: 'profile'; profile: Profile } | { kind: 'dropped' } | { kind: 'failed' };

export interface RecordRead {
  profiles: Profile[];
  domain: DomainInfo | null;
  /** A lookup failed (other than "not found"): absence proves nothing. */
  failed: boolean;
}

/**
 * An identity's own profile and (ENS-style) text records. `fresh`: true reads past the cache, false takes
 * any fresh cached answer, `{ maxAgeMs }` only one that recent.
 */
export async function readRecord(
  web3bio: Web3BioClient,
  parsed: ParsedIdentity,
  fresh: boolean | { maxAgeMs: number },
): Promise<RecordRead> {
  const segment = KIND_PROFILE_SEGMENT[parsed.kind];
  const call = typeof fresh === 'boolean' ? { fresh } : { maxAgeMs: fresh.maxAgeMs };
  const [profile, domain] = await Promise.all([
    segment ? lookupOutcome(web3bio.getPlatformProfile(segment, parsed.identity, call)) : null,
    TEXT_RECORD_KINDS.has(parsed.kind) ? lookupOutcome(web3bio.getDomain(parsed.identity, call)) : null,
  ]);
  return {
    profiles: profile?.kind === 'ok' ? [profile.data] : [],
    domain: domain?.kind === 'ok' ? domain.data : null,
    failed: profile?.kind === 'failed' || domain?.kind === 'failed',
  };
}

/**
 * The identities of live record links in batched lookups (30 each); platforms the batch route does not
 * take are left out, to be read one by one.
 */
export async function batchRecords(
  web3bio: Web3BioClient,
  logger: Pick<Logger, 'warn'>,
  links: LinkRecord[],
  fresh: boolean,
): Promise<Map<string, BatchedRecord>> {
  const identityById = new Map<string, string>();
  for (const link of links) {
    if (link.proofMethod !== 'record' || link.releasedAt !== null) continue;
    try {
      identityById.set(parseBatchId(link.identity).id, link.identity);
    } catch {
      // Platforms the batch route does not take are checked one by one.
    }
  }
  const result = new Map<string, BatchedRecord>();
  if (identityById.size === 0) return result;
  try {
    for (const entry of await web3bio.getProfilesBatch([...identityById.keys()], { fresh })) {
      const identity = identityById.get(entry.input);
      if (identity === undefined) continue;
      result.set(identity, entry.result ? { kind: 'profile', profile: entry.result } : { kind: 'dropped' });
    }
  } catch (error) {
    logger.warn({ err: error, identities: identityById.size }, 'batched record check failed');
    for (const identity of identityById.values()) result.set(identity, { kind: 'failed' });
  }
  return result;
}

/** The address an identity resolves to: EVM lower-cased, Solana base58 as is; null when none. */
export function resolvedAddressOf(read: Pick<RecordRead, 'profiles' | 'domain'>): string | null {
  const candidates = [...read.profiles.map((p) => p.address), read.domain?.resolvedAddress ?? null];
  for (const address of candidates) {
    if (typeof address !== 'string') continue;
    if (EVM_ADDRESS.test(address)) return address.toLowerCase();
    if (SOLANA_ADDRESS.test(address)) return address;
  }
  return null;
}

/** The address to sign with: an EVM one when the identity resolves to one, else a Solana one. */
export function signerAddressOf(read: Pick<RecordRead, 'profiles' | 'domain'>): string | null {
  const evm = evmAddressOf(read);
  if (evm) return evm;
  const candidates = [...read.profiles.map((p) => p.address), read.domain?.resolvedAddress ?? null];
  return candidates.find((a): a is string => typeof a === 'string' && SOLANA_ADDRESS.test(a)) ?? null;
}

/** The EVM address to sign with, when the identity resolves to one. */
export function evmAddressOf(read: Pick<RecordRead, 'profiles' | 'domain'>): string | null {
  const candidates = [...read.profiles.map((p) => p.address), read.domain?.resolvedAddress ?? null];
  const address = candidates.find((a): a is string => typeof a === 'string' && EVM_ADDRESS.test(a));
  return address ? address.toLowerCase() : null;
}

type Outcome<T> = { kind: 'ok'; data: T } | { kind: 'missing' } | { kind: 'failed' };

/** A lookup's outcome: a stale answer (the upstream just failed) counts as a failure. */
export async function lookupOutcome<T>(lookup: Promise<Fetched<T>>): Promise<Outcome<T>> {
  try {
    const answer = await lookup;
    return answer.stale ? { kind: 'failed' } : { kind: 'ok', data: answer.data };
  } catch (error) {
    return error instanceof NotFoundError ? { kind: 'missing' } : { kind: 'failed' };
  }
}
