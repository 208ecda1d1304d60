/**
 * Pure helpers over Web3.bio credentials, shared by the renderer and the gating module.
 * Times are Unix seconds; nothing here reads the clock.
 */
import type { Credential, CredentialSet } from './types.ts';

export type CredentialVerdict = 'spam' | 'risky' | 'human' | 'none';

/** True when the credential has an expiry and it is at or before `nowSec`. */
export function isCredentialExpired(c: Credential, nowSec: number): boolean {
  return c.expiredAt !== null && c.expiredAt <= nowSec;
}

/** The numeric value of a `score` credential; null for other types or a value that is not a finite number. */
export function credentialScore(c: Credential): number | null {
  if (c.type.trim().toLowerCase() !== 'score') return null;
  const text = c.value.trim();
  if (text === '') return null;
  const score = Number(text);
  return Number.isFinite(score) ? score : null;
}

/** True when the credential's value reads `true` (case-insensitive), as boolean credentials do. */
export function credentialIsTrue(c: Credential): boolean {
  return c.value.trim().toLowerCase() === 'true';
}

/**
 * Whether a credential counts as a signal for its category: unexpired, and not a boolean that reads
 * anything but `true`. Scores count by presence because the server lists a score only under the
 * category it supports (a Farcaster spam label of 0 sits under `isSpam`).
 */
export function isCredentialSignal(c: Credential, nowSec: number): boolean {
  if (isCredentialExpired(c, nowSec)) return false;
  if (c.type.trim().toLowerCase() === 'boolean') return credentialIsTrue(c);
  return true;
}

/** The overall verdict from the unexpired signals: spam beats risky beats human; none without signals. */
export function credentialVerdict(set: CredentialSet, nowSec: number): CredentialVerdict {
  const has = (list: Credential[] | undefined) => (list ?? []).some((c) => isCredentialSignal(c, nowSec));
  if (has(set.isSpam)) return 'spam';
  if (has(set.isRisky)) return 'risky';
  if (has(set.isHuman)) return 'human';
  return 'none';
}
