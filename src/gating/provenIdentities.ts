/**
 * The identities a member proved: first what their account proved by signature (in any server or on the
 * Linked Roles page: theirs to bring anywhere, issue #36), then their gating links here (or in every
 * server, from a DM) that still prove something, and their Linked Roles identity unless another account
 * took it. Read from the store alone, so a web replica suggests them as the gateway process does. Only
 * ever shown to that member (their own suggestions).
 */
import type { GatingStore } from '../store/types.ts';
import { accountProofsOf } from './proofs/accountProofs.ts';

export async function provenIdentitiesOf(
  store: Pick<
    GatingStore,
    | 'getLinksOfUser'
    | 'getUserLinks'
    | 'getRoleConnection'
    | 'accountProofsOf'
    | 'getAccountProof'
    | 'getHolding'
  >,
  userId: string,
  guildId: string | null,
): Promise<string[]> {
  const [account, links, connection] = await Promise.all([
    accountProofsOf(store, userId),
    guildId === null ? store.getLinksOfUser(userId) : store.getUserLinks(guildId, userId),
    store.getRoleConnection(userId),
  ]);
  const proven = links.filter((link) => link.releasedAt === null).map((link) => link.identity);
  const linked = connection && connection.releasedAt === null ? [...proven, connection.identity] : proven;
  return [...account.map((p) => p.identity), ...linked];
}
