/**
 * Component custom ids: `<command>|<handler>|<arg>|<arg>...`, at most 100 characters (Discord's limit).
 * Args are identities and page numbers. An arg that would not fit (an identity can be 256 characters)
 * or could be misread (one with `|`, or starting with `~`) is kept here, server-side, and the id carries
 * `~` and a hash of it instead; decoding looks it up. Kept args are bounded in number and age.
 */
import { createHash } from 'node:crypto';
import { growingLru } from '../cache/growingLru.ts';

export const CUSTOM_ID_MAX = 100;
/** Args kept server-side at most, and for how long after their last use. */
export const KEPT_ARGS_MAX = 10_000;
export const KEPT_ARGS_TTL_MS = 24 * 60 * 60_000;

const SEPARATOR = '|';
const KEPT = '~';
const keptArgs = growingLru<string, string>({
  maxEntries: KEPT_ARGS_MAX,
  ttl: KEPT_ARGS_TTL_MS,
  updateAgeOnGet: true,
});

export type DecodedCustomId =
  | { command: string; handler: string; args: string[]; expired?: undefined }
  /** An arg kept server-side is gone (restart or age): the message's controls no longer work. */
  | { command: string; handler: string; args?: undefined; expired: true };

/** The same arg always gets the same key, so a message rendered twice carries the same ids. */
function keep(arg: string): string {
  const key = `${KEPT}${createHash('sha256').update(arg).digest('base64url').slice(0, 22)}`;
  keptArgs.set(key, arg);
  return key;
}

/** Build a custom id of at most 100 characters, keeping args that do not fit or could be misread. */
export function encodeCustomId(command: string, handler: string, ...rawArgs: (string | number)[]): string {
  const args = rawArgs.map(String);
  const unsafe = (arg: string) => arg.includes(SEPARATOR) || arg.startsWith(KEPT);
  const parts = args.map((arg) => (unsafe(arg) ? keep(arg) : arg));
  const length = () => [command, handler, ...parts].join(SEPARATOR).length;
  // Longest args first, until the id fits.
  const byLength = args.map((arg, i) => [arg.length, i] as const).sort((a, b) => b[0] - a[0]);
  for (const [, i] of byLength) {
    if (length() <= CUSTOM_ID_MAX) break;
    const arg = args[i] ?? '';
    if (parts[i] === arg) parts[i] = keep(arg);
  }
  const id = [command, handler, ...parts].join(SEPARATOR);
  if (id.length > CUSTOM_ID_MAX) throw new RangeError(`custom id for ${command}|${handler} cannot fit`);
  return id;
}

export function decodeCustomId(customId: string): DecodedCustomId | null {
  const [command, handler, ...parts] = customId.split(SEPARATOR);
  if (!command || !handler) return null;
  const args: string[] = [];
  for (const part of parts) {
    const arg = part.startsWith(KEPT) ? keptArgs.get(part) : part;
    if (arg === undefined) return { command, handler, expired: true };
    args.push(arg);
  }
  return { command, handler, args };
}
