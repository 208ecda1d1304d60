/**
 * Whether the signed-in account may see a server's pages now, asked before every server page of the
 * process that owns the server (operations.ts `standing`: Manage Server, ownership or Administrator from
 * the member's roles as the server has them, and no timeout). The account's server list (rights.ts) is
 * Discord's own count of its roles, not relied on for a timeout; this answer reads it. An answer is kept
 * per server and account for the rights' maximum age (as the list is), in this process only: a replica
 * asks at most once per age for each viewer and server. No answer: nothing is shown.
 */
import type { DashboardAnswer, DashboardOperations } from '../../gating/dashboard/types.ts';

/** How many answers a process keeps (the oldest go first). */
export const MAX_STANDINGS = 10_000;

export type Standing = 'allowed' | 'no_rights' | 'timed_out' | 'no_answer';

export interface ViewerStandingsOptions {
  operations: DashboardOperations;
  /** How long an answer is kept: the rights' maximum age. */
  maxAgeMs: number;
  now: () => number;
}

/** What an answer of the owning process means for the pages. */
function standingOf(answer: DashboardAnswer): Standing {
  if (answer.kind === 'timeout') return 'no_answer';
  const { result } = answer;
  if (result.kind === 'standing')
    return result.allowed ? 'allowed' : result.timedOut ? 'timed_out' : 'no_rights';
  // The bot is no longer in the server: nothing of it to show. Anything else did not answer the question.
  return result.kind === 'unavailable' ? 'no_rights' : 'no_answer';
}

/** The viewers' standing in each server, read from the owning process at most once per maximum age. */
export class ViewerStandings {
  readonly #o: ViewerStandingsOptions;
  readonly #answers = new Map<string, { standing: Standing; at: number }>();

  constructor(options: ViewerStandingsOptions) {
    this.#o = options;
  }

  async of(guildId: string, userId: string): Promise<Standing> {
    const key = `${guildId}:${userId}`;
    const now = this.#o.now();
    const known = this.#answers.get(key);
    if (known && known.at <= now && now - known.at < this.#o.maxAgeMs) return known.standing;
    this.#answers.delete(key);
    const standing = standingOf(await this.#o.operations.run({ op: 'standing', guildId, actorId: userId }));
    if (standing === 'no_answer') return standing;
    this.#answers.set(key, { standing, at: now });
    if (this.#answers.size > MAX_STANDINGS) {
      const oldest = this.#answers.keys().next();
      if (!oldest.done) this.#answers.delete(oldest.value);
    }
    return standing;
  }
}
