import type { APIApplicationCommandOptionChoice } from 'discord-api-types/v10';
import { MAX_IDENTITY_LENGTH, withoutHandleMark } from '../web3bio/identity.ts';
import { completeIdentity, stableIdentity } from '../web3bio/identityCompletions.ts';

/** Discord shows at most 25 autocomplete choices. */
export const MAX_AUTOCOMPLETE_CHOICES = 25;
/** A choice's name is 1-100 characters, a string value at most 100. */
export const MAX_CHOICE_LENGTH = 100;

/** What an identity option can suggest, each most relevant first. */
export interface IdentitySources {
  /** The member's own recent lookups. */
  recent: readonly string[];
  /** The identities the member proved (gating links, the Linked Roles connection). */
  proven: readonly string[];
  /** This server's recent public lookups. */
  server: readonly string[];
}

/**
 * The choices for an identity option while `typed` is being typed: the member's recent lookups, what
 * they proved, the server's recent lookups (each kept when it starts with `typed`, ignoring case and the
 * `@` of a handle), then
 * completions of `typed` into each platform's forms. Every value parses with `parseIdentity` and is its
 * normalised form; duplicates go, at most MAX_AUTOCOMPLETE_CHOICES remain.
 */
export function identityChoices(
  typed: string,
  sources: IdentitySources,
): APIApplicationCommandOptionChoice<string>[] {
  const prefix = typeof typed === 'string' ? withoutHandleMark(typed.trim()).toLowerCase() : '';
  const remembered = [...sources.recent, ...sources.proven, ...sources.server]
    .map(offerable)
    .filter((identity) => identity?.toLowerCase().startsWith(prefix));
  const completed = prefix.length > MAX_IDENTITY_LENGTH ? [] : completeIdentity(typed).map(offerable);
  const values = new Set<string>();
  for (const identity of [...remembered, ...completed]) {
    if (identity === undefined) continue;
    values.add(identity);
    if (values.size === MAX_AUTOCOMPLETE_CHOICES) break;
  }
  return [...values].map((value) => ({ name: value, value }));
}

/** The normalised identity, when `value` parses (stably) and fits in a choice; undefined otherwise. */
function offerable(value: string): string | undefined {
  if (typeof value !== 'string' || value.length > MAX_IDENTITY_LENGTH) return undefined;
  const identity = stableIdentity(value)?.identity;
  return identity !== undefined && identity.length <= MAX_CHOICE_LENGTH ? identity : undefined;
}
