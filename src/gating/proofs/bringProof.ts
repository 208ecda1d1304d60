/**
 * Bringing a proof the member's account made by signature (in another server, or on the Linked Roles
 * page) to this server, without a new signature (issue #36): the link cap and the server's registry hold
 * as for any signature, and roles follow.
 */
import type { AccountProof, GatingStore } from '../../store/types.ts';
import { EMPTY_DIFF } from '../roles/memberGating.ts';
import type { RoleWorker } from '../roles/roleWorker.ts';
import type { MemberSync, VerifyRefusal, VerifyResult } from '../types.ts';
import { sharedIdentityOf } from './accountProofs.ts';
import type { LinkBook } from './linkBook.ts';

export interface BringDeps {
  store: Pick<GatingStore, 'getAccountProof'>;
  links: LinkBook;
  worker: Pick<RoleWorker, 'blockedRoles'>;
  now: () => number;
  /** Roles after the link, its due check cleared (verification.ts). */
  syncAfterLink: (
    guildId: string,
    userId: string,
    provenAt: number,
  ) => Promise<Pick<MemberSync, 'applied' | 'notBefore'> & { rolesLater?: true }>;
  /** Drop the member's links of `names` in the server, roles following. */
  unverify: (guildId: string, userId: string, names: string[], reason: string) => Promise<number>;
}

/**
 * Link `proof` for the member under `target` (the name or address they asked for, whose record was just
 * read, or the proof's own subject when shared); a Farcaster account is linked as its FID, as where it
 * was proven. Roles follow unless `sync` is false (a join syncs the member next).
 */
export async function bringProof(
  d: BringDeps,
  b: {
    guildId: string;
    userId: string;
    target: { identity: string; platform: string };
    proof: AccountProof;
    sync?: boolean;
    shared?: boolean;
  },
): Promise<VerifyResult> {
  const { guildId, userId, proof } = b;
  const as = proof.subject.startsWith('farcaster,#') ? sharedIdentityOf(proof) : b.target;
  const capped = await d.links.capRefusal(guildId, userId, as.identity);
  if (capped) return refused(capped);
  const how = b.shared ? 'shared by the member with every server' : 'brought here by the member';
  const linked = await d.links.save(
    { guildId, userId, ...as, address: proof.address, proofMethod: 'signature', provenAt: d.now() },
    `proven before by this account's signature (${proof.subject}), ${how}`,
  );
  if ('refusal' in linked) return refused(linked.refusal);
  // Another account's signature may have taken the wallet while this was written: then it goes again.
  const holder = await d.store.getAccountProof(proof.subject);
  if (holder && holder.userId !== userId) {
    await d.unverify(guildId, userId, [as.identity], 'its wallet was proven by another account');
    return refused({ code: 'raced', subject: proof.subject });
  }
  const synced =
    b.sync === false ? { applied: EMPTY_DIFF } : await d.syncAfterLink(guildId, userId, linked.link.provenAt);
  return {
    kind: 'linked',
    link: linked.link,
    diff: synced.applied,
    moved: linked.moved,
    brought: true,
    blockedRoleIds: d.worker.blockedRoles(guildId),
    ...('notBefore' in synced && synced.notBefore ? { notBefore: synced.notBefore } : {}),
    ...('rolesLater' in synced && synced.rolesLater ? { rolesLater: true } : {}),
  };
}

function refused(refusal: VerifyRefusal): VerifyResult {
  return { kind: 'refused', refusal };
}
