/**
 * Proven links: saving one (moving an identity or address away from the member who held it), dropping
 * one (released instead when it may carry a flag), and the per-member link cap.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../log.ts';
import type { GatingStore, LinkInput, LinkRecord } from '../store/types.ts';
import { escapeLine, truncate } from '../text/safety.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';
import { guildOf } from './discordReads.ts';
import type { GuildNotices } from './logChannel.ts';
import { carriesFlag } from './rules.ts';
import type { VerifyRefusal } from './types.ts';

/** At most this many proven identities per member and guild, which bounds the lookups one member costs. */
export const MAX_LINKS_PER_MEMBER = 5;
const MAX_REASON = 400;

export interface LinkBookOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  notices: GuildNotices;
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
  readonly #tasks: BackgroundTasks;
  readonly #now: () => number;
  readonly #afterLoss: (guildId: string, userId: string) => Promise<unknown>;

  constructor(options: LinkBookOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#notices = options.notices;
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
   * Store a proven link. One identity and one address back at most one member per guild. An identity
   * goes to the member its proof names now (its record, or a signature). An address goes to whoever
   * proves it by wallet signature; a record proof links an address only when no other member backs it,
   * since a name's record can point at any wallet. A member who loses a link is told, and loses what it gave.
   */
  async save(
    input: LinkInput,
    reason: string,
  ): Promise<{ link: LinkRecord; moved: boolean } | { refusal: VerifyRefusal }> {
    const { guildId, userId } = input;
    const others = (links: LinkRecord[]) => links.filter((l) => l.userId !== userId && l.releasedAt === null);
    const sameIdentity = others(await this.#store.getIdentityLinks(guildId, input.identity));
    const sameAddress = input.address
      ? others(await this.#store.getAddressLinks(guildId, input.address)).filter(
          (l) => l.identity !== input.identity,
        )
      : [];
    if (input.proofMethod === 'record' && sameAddress.length > 0) {
      return { refusal: { code: 'address_taken', address: input.address ?? '' } };
    }
    const link = await this.#store.saveLink(input, truncate(reason, MAX_REASON));
    this.#notices.post(
      guildId,
      `Verified <@${userId}> as ${escapeLine(input.identity)} (${input.proofMethod === 'record' ? 'record' : 'wallet signature'}).`,
    );
    const guildName = (await guildOf(this.#discord, guildId))?.name ?? 'a server';
    const losers = new Set<string>();
    for (const other of [...sameIdentity, ...sameAddress]) {
      const why =
        other.identity === input.identity
          ? `${input.identity} was proven by another member`
          : `its wallet ${other.address} was proven by another member with a signature`;
      await this.drop(other, why);
      losers.add(other.userId);
      this.#tell(
        other.userId,
        `Your link of ${other.identity} in ${guildName} moved to another Discord account: ${why}. Run /whoami there to see your roles.`,
      );
    }
    for (const loser of losers) this.#tasks.run(guildId, () => this.#afterLoss(guildId, loser));
    return { link, moved: losers.size > 0 };
  }

  /** Unlink; an identity that carried (or may carry) a flag is released instead, so its flag holds. */
  async drop(link: LinkRecord, reason: string): Promise<void> {
    const key = { guildId: link.guildId, userId: link.userId, identity: link.identity };
    const nowSec = Math.floor(this.#now() / 1000);
    const mayBeFlagged = link.lastResult === null || carriesFlag(link.lastResult, nowSec);
    const done = mayBeFlagged
      ? await this.#store.releaseLink(key, truncate(reason, MAX_REASON))
      : await this.#store.removeLink(key, truncate(reason, MAX_REASON));
    if (done) {
      this.#notices.post(
        link.guildId,
        `Unlinked ${escapeLine(link.identity)} from <@${link.userId}>: ${escapeLine(reason)}.${mayBeFlagged ? ' Any spam or risky flag it carries stays until its own credentials clear.' : ''}`,
      );
    }
  }

  /** A best-effort direct message (members may have DMs closed). */
  #tell(userId: string, text: string): void {
    this.#tasks.run('', async () => {
      try {
        await this.#discord.users.send(userId, { content: escapeLine(text), allowedMentions: { parse: [] } });
      } catch (error) {
        this.#logger.info({ err: error, userId }, 'could not send a direct message');
      }
    });
  }
}
