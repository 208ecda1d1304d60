/**
 * Proven links: saving one (moving an identity or address away from the member who held it), dropping
 * one (released instead when it may carry a flag), and the per-member link cap.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { DueCheck } from '../../store/dueCheckTypes.ts';
import type { GatingStore, LinkInput, LinkRecord } from '../../store/types.ts';
import { truncate } from '../../text/safety.ts';
import type { BackgroundTasks } from '../rechecks/backgroundTasks.ts';
import { guildOf } from '../roles/discordReads.ts';
import type { GuildNotices } from '../roles/logChannel.ts';
import { carriesFlag } from '../rules/rules.ts';
import type { GatingNotice, NoticeText, VerifyRefusal } from '../types.ts';

/** At most this many proven identities per member and guild, which bounds the lookups one member costs. */
export const MAX_LINKS_PER_MEMBER = 5;
const MAX_REASON = 400;

export interface LinkBookOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  notices: GuildNotices;
  /** The sentence of a direct message. */
  noticeText: NoticeText;
  tasks: BackgroundTasks;
  now: () => number;
  /** Re-syncs the roles of a member who lost a link to another member. */
  afterLoss: (guildId: string, userId: string) => Promise<unknown>;
}

/** Saves and drops the links between members and the identities they proved. */
export class LinkBook {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #notices: GuildNotices;
  readonly #noticeText: NoticeText;
  readonly #tasks: BackgroundTasks;
  readonly #now: () => number;
  readonly #afterLoss: (guildId: string, userId: string) => Promise<unknown>;

  constructor(options: LinkBookOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#notices = options.notices;
    this.#noticeText = options.noticeText;
    this.#tasks = options.tasks;
    this.#now = options.now;
    this.#afterLoss = options.afterLoss;
  }

  /** The link cap, counted over the member's other active links. */
  async capRefusal(guildId: string, userId: string, identity: string): Promise<VerifyRefusal | null> {
    const existing = await this.#store.getUserLinks(guildId, userId);
    const others = existing.filter((l) => l.releasedAt === null && l.identity !== identity);
    return others.length >= MAX_LINKS_PER_MEMBER
      ? { code: 'too_many_links', count: others.length, max: MAX_LINKS_PER_MEMBER }
      : null;
  }

  /**
   * Store a proven link. One identity and one address back at most one member per guild, enforced by the
   * store's registry in the same transaction as the write. An identity goes to the member its proof names
   * now (its record, or a signature). An address goes to whoever proves it by wallet signature; a record
   * proof links an address only when no other member backs it, since a name's record can point at any
   * wallet. A signature never takes what another member proved after its signing link was made (two
   * completions racing for one wallet: the first wins). A member who loses a link is told, and loses what
   * it gave; the lost link stays released (proving nothing) while it may carry a flag.
   */
  async save(
    input: LinkInput,
    reason: string,
    opts: { challengeIssuedAt?: number } = {},
  ): Promise<{ link: LinkRecord; moved: boolean } | { refusal: VerifyRefusal }> {
    const { guildId, userId } = input;
    const proved = await this.#store.proveLink(input, truncate(reason, MAX_REASON), opts);
    if ('refusal' in proved) {
      const { code, holding } = proved.refusal;
      return {
        refusal:
          code === 'address_taken'
            ? { code, address: input.address ?? holding.subject }
            : { code, subject: holding.subject },
      };
    }
    this.#notices.post(guildId, {
      kind: 'verified',
      userId,
      identity: input.identity,
      proof: input.proofMethod,
    });
    const guild = proved.displaced.length > 0 ? await guildOf(this.#discord, guildId) : null;
    const guildName = guild?.name ?? null;
    const losers = new Set<string>();
    for (const other of proved.displaced) {
      const why =
        other.identity === input.identity
          ? `${input.identity} was proven by another member`
          : `its wallet ${other.address} was proven by another member with a signature`;
      // The store released it (it proves nothing now); one that never carried a flag is forgotten.
      const flagKept = mayCarryFlag(other, this.#now());
      if (!flagKept) await this.#store.removeLink(other, truncate(why, MAX_REASON));
      this.#notices.post(guildId, {
        kind: 'unlinked',
        userId: other.userId,
        identity: other.identity,
        reason: why,
        flagKept,
      });
      losers.add(other.userId);
      // Their interaction locale is not known here: the message follows the server's preferred locale.
      this.#tell(
        other.userId,
        { kind: 'link_moved', identity: other.identity, guildName, reason: why },
        guild?.preferredLocale,
      );
    }
    // Their roles follow now; if that fails, from the due check the proof saved for them.
    for (const loser of losers)
      this.#tasks.run(guildId, async () => {
        await this.#afterLoss(guildId, loser);
        await clearDueCheck(this.#store, this.#logger, { guildId, userId: loser, dueAt: input.provenAt });
      });
    return { link: proved.link, moved: losers.size > 0 };
  }

  /** Unlink; an identity that carried (or may carry) a flag is released instead, so its flag holds. */
  async drop(link: LinkRecord, reason: string): Promise<void> {
    const key = { guildId: link.guildId, userId: link.userId, identity: link.identity };
    const mayBeFlagged = mayCarryFlag(link, this.#now());
    const done = mayBeFlagged
      ? await this.#store.releaseLink(key, truncate(reason, MAX_REASON))
      : await this.#store.removeLink(key, truncate(reason, MAX_REASON));
    if (done) {
      this.#notices.post(link.guildId, {
        kind: 'unlinked',
        userId: link.userId,
        identity: link.identity,
        reason,
        flagKept: mayBeFlagged,
      });
    }
  }

  /** A best-effort direct message (members may have DMs closed). */
  #tell(userId: string, notice: GatingNotice, locale: string | undefined): void {
    this.#tasks.run('', async () => {
      try {
        const content = this.#noticeText(notice, locale);
        await this.#discord.users.send(userId, { content, allowedMentions: { parse: [] } });
      } catch (error) {
        this.#logger.info({ err: error, userId }, 'could not send a direct message');
      }
    });
  }
}

/** Whether a link carried a flag at its last check, or was never checked (then it may). */
function mayCarryFlag(link: LinkRecord, now: number): boolean {
  return link.lastResult === null || carriesFlag(link.lastResult, Math.floor(now / 1000));
}

/**
 * Forget the due check a proof saved, once the member was synced (a later one the sync saved stays). A
 * failure only means one more sync by the due-check pass.
 */
export async function clearDueCheck(
  store: Pick<GatingStore, 'deleteDueCheck'>,
  logger: Logger,
  check: DueCheck,
): Promise<void> {
  try {
    await store.deleteDueCheck(check);
  } catch (error) {
    logger.warn({ err: error, guildId: check.guildId, userId: check.userId }, 'could not clear a due check');
  }
}
