/**
 * Component custom ids: `<command>|<handler>|<arg>|<arg>...`, at most 100 characters (Discord's limit).
 * Args are identities and page numbers; `|` cannot occur in a parsed identity.
 */
export const CUSTOM_ID_MAX = 100;
const SEPARATOR = '|';

/** Build a custom id, or null when it would not fit in Discord's 100 characters. */
export function encodeCustomId(
  command: string,
  handler: string,
  ...args: (string | number)[]
): string | null {
  const id = [command, handler, ...args.map(String)].join(SEPARATOR);
  return id.length <= CUSTOM_ID_MAX ? id : null;
}

export function decodeCustomId(
  customId: string,
): { command: string; handler: string; args: string[] } | null {
  const [command, handler, ...args] = customId.split(SEPARATOR);
  if (!command || !handler) return null;
  return { command, handler, args };
}
