import type { Readable } from 'node:stream';
import type {
  APIActionRowComponent,
  APIAllowedMentions,
  APIComponentInMessageActionRow,
  APIEmbed,
  APIModalInteractionResponseCallbackData,
} from 'discord-api-types/v10';

/** A file attached to a message (a file on disk), read when the message is sent. */
export interface MessageFile {
  name: string;
  /** e.g. `text/csv; charset=utf-8` */
  contentType: string;
  /** Bytes: the request states its length before the first of them. */
  size: number;
  /** A stream of the file from its first byte, opened once per attempt to send it. */
  open(): Readable;
}

/** A Discord message body as API JSON; the bot layer adapts it to discord.js and adds flags. */
export interface MessagePayload {
  content?: string;
  embeds: APIEmbed[];
  components: APIActionRowComponent<APIComponentInMessageActionRow>[];
  /** Always `{ parse: [] }`: nothing a renderer outputs may ping. */
  allowed_mentions: APIAllowedMentions;
  /** Attachments (added by the bot layer, never by render). */
  files?: MessageFile[];
  /** Frees what the files hold (open files), once the message was sent or could not be; added with `files`. */
  release?: () => Promise<void>;
}

/** A modal (callback type 9) as API JSON. */
export type ModalPayload = APIModalInteractionResponseCallbackData;

/** Everything a renderer needs besides the domain object; renderers read no clock and no config. */
export interface RenderContext {
  /** Interaction locale, e.g. `en-US` or `de`; numbers are formatted with it (`en-US` on bad tags). */
  locale: string;
  /** Current Unix time in seconds. */
  nowSec: number;
  /** IPFS gateway origin, e.g. `https://ipfs.io`; `ipfs://CID/x` becomes `https://ipfs.io/ipfs/CID/x`. */
  ipfsGateway: string;
  /** Set when the data was served stale because Web3.bio was unreachable. */
  stale?: { fetchedAt: number } | undefined;
}
