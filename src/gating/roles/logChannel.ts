/**
 * The guild's log channel: one-line notices for moderators, gathered for a moment and sent a few per
 * message, never pinging anyone.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import { truncate } from '../../text/safety.ts';
import type { GatingNotice, NoticeText } from '../types.ts';
import { delay } from './discordReads.ts';

const MAX_LINE = 300;
const MAX_MESSAGE = 1_900;

/** Where notices for a guild's moderators go (the log channel, when one is set). */
export interface GuildNotices {
  post(guildId: string, notice: GatingNotice): void;
}

export interface LogChannelOptions {
  discord: Client;
  logger: Logger;
  /** The sentence for each notice in the guild's preferred locale (render's `gatingNoticeText`). */
  text: NoticeText;
  /** The guild's log channel id, or null for none. */
  channelOf: (guildId: string) => Promise<string | null>;
  /** How long lines are gathered into one message. Default 1000 ms. */
  flushMs?: number;
}

/**
 * Posts notices to each guild's log channel. Lines are gathered for a moment and sent a few per message,
 * so a re-check that changes hundreds of roles does not queue behind the channel's send rate limit.
 * Nothing pings: allowed mentions parse nothing.
 */
export class LogChannel implements GuildNotices {
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #channelOf: (guildId: string) => Promise<string | null>;
  readonly #flushMs: number;
  readonly #text: NoticeText;
  readonly #pending = new Map<string, GatingNotice[]>();
  #timer: NodeJS.Timeout | null = null;
  #flushing: Promise<void> | null = null;
  #closed = false;

  constructor(opts: LogChannelOptions) {
    this.#discord = opts.discord;
    this.#logger = opts.logger;
    this.#channelOf = opts.channelOf;
    this.#flushMs = opts.flushMs ?? 1_000;
    this.#text = opts.text;
  }

  post(guildId: string, notice: GatingNotice): void {
    if (this.#closed) return;
    const notices = this.#pending.get(guildId) ?? [];
    notices.push(notice);
    this.#pending.set(guildId, notices);
    this.#schedule();
  }

  /** Send everything gathered so far; resolves when sent (or dropped on an error). */
  async idle(): Promise<void> {
    while (this.#pending.size > 0 || this.#flushing) {
      if (!this.#flushing) this.#startFlush();
      await this.#flushing;
    }
  }

  /** Flush (up to `graceMs`), then drop further lines. */
  async stop(graceMs: number): Promise<void> {
    await Promise.race([this.idle(), delay(graceMs)]);
    this.#closed = true;
  }

  #schedule(): void {
    if (this.#closed || this.#timer || this.#flushing || this.#pending.size === 0) return;
    this.#timer = setTimeout(() => this.#startFlush(), this.#flushMs);
    this.#timer.unref();
  }

  #startFlush(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = null;
      this.#schedule();
    });
  }

  async #flush(): Promise<void> {
    const batches = [...this.#pending.entries()];
    this.#pending.clear();
    for (const [guildId, notices] of batches) {
      try {
        const channelId = await this.#channelOf(guildId);
        if (!channelId) continue;
        const channel =
          this.#discord.channels.cache.get(channelId) ?? (await this.#discord.channels.fetch(channelId));
        if (!channel?.isSendable()) continue;
        // Moderators read the log in the server's language (Community servers set it; else en-US).
        const locale =
          ('guild' in channel ? channel.guild.preferredLocale : undefined) ??
          this.#discord.guilds.cache.get(guildId)?.preferredLocale;
        const lines = notices.map((n) =>
          truncate(this.#text(n, locale).replace(/\s+/g, ' ').trim(), MAX_LINE),
        );
        for (const content of packLines(lines)) {
          await channel.send({ content, allowedMentions: { parse: [] } });
        }
      } catch (error) {
        this.#logger.warn(
          { err: error, guildId, lines: notices.length },
          'could not post to the gating log channel',
        );
      }
    }
  }
}

/** Lines joined into as few messages as fit Discord's 2000-character limit. */
export function packLines(lines: readonly string[]): string[] {
  const messages: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current !== '' && current.length + 1 + line.length > MAX_MESSAGE) {
      messages.push(current);
      current = '';
    }
    current = current === '' ? line : `${current}\n${line}`;
  }
  if (current !== '') messages.push(current);
  return messages;
}
