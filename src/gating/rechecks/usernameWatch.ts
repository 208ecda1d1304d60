/**
 * The Discord usernames of members whose record links name them, to notice a rename. discord.js reports
 * one (`userUpdate`) only for a user it had cached, and the bot caches no users but itself
 * (clientCaches.ts); the GUILD_MEMBER_UPDATE Discord sends carries the new name, so the old one is kept
 * here, for these few members only.
 */
export class UsernameWatch {
  readonly #names = new Map<string, string>();

  get size(): number {
    return this.#names.size;
  }

  /** Remember the username of a member with a record link (seen in a walk, a sync or a proof). */
  note(userId: string, username: string): void {
    this.#names.set(userId, username);
  }

  /** The member no longer has a record link anywhere. */
  forget(userId: string): void {
    this.#names.delete(userId);
  }

  /** Whether a member update shows a watched member under a new username (remembered from now on). */
  renamed(userId: string, username: string): boolean {
    const known = this.#names.get(userId);
    if (known === undefined || known === username) return false;
    this.#names.set(userId, username);
    return true;
  }
}

/** Whether any of the links still stands on the identity's own record. */
export function hasRecordLink(links: readonly { proofMethod: string; releasedAt: number | null }[]): boolean {
  return links.some((l) => l.proofMethod === 'record' && l.releasedAt === null);
}
