/**
 * ENS names under ENSIP-15: normalised by ens-normalize (or, for plain names, without it), and its refusals
 * turned into words for a Discord user.
 */
import { ens_normalize } from '@adraffy/ens-normalize';
import { InvalidIdentityError } from './errors.ts';

/**
 * Names of lower-case letters, digits and hyphens only: ENSIP-15 leaves every such label as it is and
 * refuses only an empty one or one with "--" as its third and fourth characters (test/web3bio checks this
 * against the library on every short name of these characters). Answered here, they never make the
 * library build its tables: about 0.4 s and 22 MiB kept, which a web replica need not pay for
 * `vitalik.eth`; the first other name does.
 */
const PLAIN_NAME = /^[a-z0-9-]+(?:\.[a-z0-9-]+)*$/;

export function isPlainValidName(text: string): boolean {
  return PLAIN_NAME.test(text) && !text.split('.').some((label) => label[2] === '-' && label[3] === '-');
}

/** The name normalised under ENSIP-15; InvalidIdentityError with a friendly reason when it is not one. */
export function normaliseEns(text: string, original: string): string {
  if (isPlainValidName(text)) return text;
  try {
    return ens_normalize(text);
  } catch (error) {
    throw new InvalidIdentityError(original, friendlyEnsReason(error));
  }
}

/** Turn an ens-normalize error into words for a Discord user (never echoing the input back). */
export function friendlyEnsReason(error: unknown): string {
  const message = error instanceof Error ? error.message : '';
  if (message.includes('empty label')) return 'part of the name is empty';
  if (message.includes('underscore')) return 'an underscore is only allowed at the start of a name';
  if (message.includes('label extension'))
    return 'a name cannot have "--" as its third and fourth characters';
  if (message.includes('confusable')) return 'it looks confusingly like a name in another script';
  const mixture = /illegal mixture: ([\w ]+?) \+ ([\w ]+?)(?: |$)/.exec(message);
  if (mixture) {
    return `it mixes ${mixture[1]} and ${mixture[2]} characters, which is how look-alike names are made`;
  }
  if (message.includes('illegal mixture')) return 'it mixes scripts, which is how look-alike names are made';
  if (message.includes('combining') || message.includes('non-spacing')) {
    return 'it has too many or misplaced accent marks';
  }
  if (message.includes('illegal placement')) return 'a character is in a place where names cannot have it';
  if (message.includes('disallowed')) return 'it contains a character names cannot have';
  return 'it is not a valid name';
}
