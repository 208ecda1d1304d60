/**
 * Proofs that belong to the Discord account (issue #36): a wallet or Farcaster account proven by this
 * account's own signature, in any server or on the Linked Roles page, may be brought to another server
 * without signing again. What a server sees is only its own links: an account proof counts there once
 * the member brings it (or shares their proofs with every server).
 */
import type { Logger } from '../../ops/log.ts';
import type { AccountProof, GatingStore, NonceRecord } from '../../store/types.ts';
import { fidIdentity, LINKED_ROLES_SCOPE } from './proofKeys.ts';

type ProofReads = Pick<
  GatingStore,
  'accountProofsOf' | 'getAccountProof' | 'getRoleConnection' | 'getHolding'
>;

/** The subject a signature proves: its Farcaster account for Sign in with Farcaster, else its signer. */
export function accountSubjectOf(record: Pick<NonceRecord, 'farcaster'>, address: string): string {
  if (record.farcaster) return fidIdentity(record.farcaster.fid);
  return address.startsWith('0x') ? address.toLowerCase() : address;
}

/**
 * The account's proofs by signature: those it made in servers, and its Linked Roles identity when that
 * was proven by signature and still backs the account (its wallet held by no other account, there or by
 * a signature in a server since).
 */
export async function accountProofsOf(store: ProofReads, userId: string): Promise<AccountProof[]> {
  const [proofs, connection] = await Promise.all([
    store.accountProofsOf(userId),
    store.getRoleConnection(userId),
  ]);
  if (
    !connection ||
    connection.releasedAt !== null ||
    connection.proofMethod !== 'signature' ||
    connection.address === null
  )
    return proofs;
  const subject = connection.address.startsWith('0x') ? connection.address.toLowerCase() : connection.address;
  if (proofs.some((p) => p.subject === subject)) return proofs;
  const [holder, proven] = await Promise.all([
    store.getHolding(LINKED_ROLES_SCOPE, 'address', subject),
    store.getAccountProof(subject),
  ]);
  if ((holder && holder.userId !== userId) || (proven && proven.userId !== userId)) return proofs;
  return [
    ...proofs,
    {
      subject,
      userId,
      identity: connection.identity,
      platform: connection.platform,
      address: subject,
      provenAt: connection.provenAt,
    },
  ];
}

/** The account's proof of any of `subjects` (an address, a `farcaster,#fid`), if it holds one. */
export function proofOfAny(
  proofs: readonly AccountProof[],
  subjects: readonly (string | null | undefined)[],
): AccountProof | undefined {
  const wanted = new Set(
    subjects.filter((s): s is string => !!s).map((s) => (s.startsWith('0x') ? s.toLowerCase() : s)),
  );
  return proofs.find((p) => wanted.has(p.subject));
}

/**
 * The identity a proof is linked under when it is shared (no command in that server): its subject, the
 * wallet or the Farcaster account the signature proved, never a name, whose record is read where it is
 * used.
 */
export function sharedIdentityOf(proof: AccountProof): { identity: string; platform: string } {
  if (proof.subject.startsWith('farcaster,#')) return { identity: proof.subject, platform: 'farcaster' };
  return { identity: proof.subject, platform: proof.subject.startsWith('0x') ? 'ethereum' : 'solana' };
}

/**
 * After a signature linked its identity in a server: the proof belongs to the account too. Another
 * account's proof of the wallet made after this signature's challenge stands (a race: the first wins).
 * A failure here costs only a signature later, never the link just made. Returns the account that held
 * the proof before, if another.
 */
export async function rememberAccountProof(
  store: Pick<GatingStore, 'saveAccountProof'>,
  logger: Logger,
  p: {
    record: NonceRecord;
    identity: string;
    platform: string;
    address: string;
    provenAt: number;
    challengeIssuedAt: number;
  },
): Promise<string | null> {
  const { record } = p;
  const subject = accountSubjectOf(record, p.address);
  const log = { guildId: record.guildId, userId: record.userId };
  try {
    const saved = await store.saveAccountProof(
      {
        subject,
        userId: record.userId,
        identity: p.identity,
        platform: p.platform,
        address: p.address,
        provenAt: p.provenAt,
      },
      { challengeIssuedAt: p.challengeIssuedAt },
    );
    if ('refusal' in saved) {
      logger.info(log, 'account proof not kept: another account proved it since');
      return null;
    }
    if (saved.displacedUserId !== null)
      logger.info({ ...log, from: saved.displacedUserId }, 'account proof moved to the account that signed');
    return saved.displacedUserId;
  } catch (error) {
    logger.warn({ ...log, err: error }, 'could not keep the account proof');
    return null;
  }
}
