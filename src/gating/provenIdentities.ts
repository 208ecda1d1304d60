/**
 * The identities a member proved: their gating links here (or in every server, from a DM) that still
 * prove something, and their Linked Roles identity unless another account took it. Read from the store
 * alone, so a web replica suggests them as the gateway process does.
 */
import type { GatingStore } from '../store/types.ts';

export async function provenIdentitiesOf(
  store: Pick<GatingStore, 'getLinksOfUser' | 'getUserLinks' | 'getRoleConnection'>,
  userId: string,
  guildId: string | null,
): Promise<string[]> {
  const [links, connection] = await Promise.all([
    guildId === null ? store.getLinksOfUser(userId) : store.getUserLinks(guildId, userId),
    store.getRoleConnection(userId),
  ]);
  const proven = links.filter((link) => link.releasedAt === null).map((link) => link.identity);
  return connection && connection.releasedAt === null ? [...proven, connection.identity] : proven;
}
