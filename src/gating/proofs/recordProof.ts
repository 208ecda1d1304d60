/**
 * Proof of ownership by the identity's own record: the identity's profile `discord` link, or its
 * domain's `com.discord` text record, names the member's Discord username. Only the identity's owner
 * (or its manager) can write those records, so a match proves the member controls the identity.
 */
import type { DomainInfo, Profile } from '../../web3bio/types.ts';

export interface RecordEvidence {
  /** The identity's own profiles (not related identities'). */
  profiles: Profile[];
  domain: DomainInfo | null;
}

const DISCORD_LINK_KEY = 'discord';
const DISCORD_TEXT_KEY = 'com.discord';
const MAX_HANDLE = 64;

/**
 * The comparable form of a username as people write it: trimmed, without a leading @, and without the
 * `#0` / `#0000` discriminator that migrated usernames show in some tools. A non-zero discriminator is
 * kept (and so never matches): `alice#1234` was a legacy account, and today's `alice` may be someone else.
 */
function comparable(raw: string): string | null {
  const text = raw
    .trim()
    .replace(/^@/, '')
    .replace(/#0{1,4}$/, '');
  if (text === '' || text.length > MAX_HANDLE) return null;
  return text.toLowerCase();
}

/** True when a profile `discord` link handle or a domain `com.discord` text record names this Discord user (case-insensitive, tolerant of a leading @ and a legacy #0000 discriminator). */
export function recordNamesDiscordUser(evidence: RecordEvidence, user: { username: string }): boolean {
  const wanted = typeof user.username === 'string' ? comparable(user.username) : null;
  if (wanted === null) return false;
  const names = (value: unknown) => typeof value === 'string' && comparable(value) === wanted;

  for (const profile of evidence.profiles) {
    for (const link of profile.links ?? []) {
      if (link.key.toLowerCase() === DISCORD_LINK_KEY && names(link.handle)) return true;
    }
  }
  const texts = evidence.domain?.texts ?? {};
  return Object.entries(texts).some(([key, value]) => key.toLowerCase() === DISCORD_TEXT_KEY && names(value));
}
