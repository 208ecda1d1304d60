/**
 * Suggestions for identity options (autocomplete) and the lookups they are made of. Reads only what is
 * at hand (recent lookups, the gating store), never Web3.bio: one answer per keystroke.
 */
import type { APIApplicationCommandOptionChoice } from 'discord-api-types/v10';
import { parseIdentity } from '../web3bio/identity.ts';
import type { BotDeps, Command, CommandOptions } from './command.ts';
import { identityOptionNames } from './command.ts';
import { identityChoices } from './identityChoices.ts';

/** A source slower than this is left out of the answer (Discord waits 3 s and nothing can be deferred). */
export const SUGGESTION_SOURCE_DEADLINE_MS = 1_000;

export interface Asker {
  userId: string;
  /**
   * The server whose install of the bot the interaction came through (`installedGuildId`), or null: in a
   * DM, and in a server reached only through the member's own install of the app, whose other members
   * never see the member's lookups and whose list is never read.
   */
  guildId: string | null;
}

/** The choices for `typed`; a source that fails or is slow adds nothing (never rejects). */
export async function suggestIdentities(
  deps: BotDeps,
  asker: Asker,
  typed: string,
  /** `/verify`: the member's own proven identities before their lookups. */
  o: { provenFirst?: boolean } = {},
): Promise<APIApplicationCommandOptionChoice<string>[]> {
  const onError = (source: string) => (error: unknown) => {
    deps.logger.warn({ ...asker, source, err: error }, 'autocomplete source failed');
    return [];
  };
  const { recentLookups } = deps;
  const [recent, proven, server] = await Promise.all([
    withinDeadline(recentLookups?.ofUser(asker.userId)).catch(onError('recent')),
    withinDeadline(provenIdentities(deps, asker)).catch(onError('proven')),
    withinDeadline(
      recentLookups && asker.guildId !== null ? recentLookups.ofGuild(asker.guildId) : undefined,
    ).catch(onError('server')),
  ]);
  return o.provenFirst
    ? identityChoices(typed, { recent: proven, proven: recent, server })
    : identityChoices(typed, { recent, proven, server });
}

/**
 * After `command` answered OK: remember the identity it looked up (normalised), in the background.
 * A failure is logged; the answer never waits for it.
 */
export function rememberLookup(deps: BotDeps, command: Command, options: CommandOptions, asker: Asker): void {
  const { recentLookups } = deps;
  if (!command.remembersLookup || !recentLookups) return;
  for (const name of identityOptionNames(command)) {
    const value = options[name];
    if (typeof value !== 'string') continue;
    let identity: string;
    try {
      identity = parseIdentity(value).identity;
    } catch {
      continue;
    }
    recentLookups
      .remember({ ...asker, identity, private: options.private === true })
      .catch((error: unknown) =>
        deps.logger.warn({ ...asker, err: error }, 'could not remember a lookup for autocomplete'),
      );
  }
}

/** What the member proved here (or anywhere, in a DM), and their Linked Roles identity; none without gating. */
async function provenIdentities(deps: BotDeps, asker: Asker): Promise<string[]> {
  return deps.provenIdentities ? deps.provenIdentities(asker.userId, asker.guildId) : [];
}

/** `work`'s result, or [] when it is absent or takes longer than SUGGESTION_SOURCE_DEADLINE_MS. */
async function withinDeadline(work: Promise<string[]> | undefined): Promise<string[]> {
  if (work === undefined) return [];
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string[]>((resolve) => {
    timer = setTimeout(resolve, SUGGESTION_SOURCE_DEADLINE_MS, []);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
