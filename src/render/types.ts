import type { Readable } from 'node:stream';
import type {
  APIActionRowComponent,
  APIAllowedMentions,
  APIComponentInMessageActionRow,
  APIEmbed,
  APIModalInteractionResponseCallbackData,
} from 'discord-api-types/v10';

/** A file attached to a message, read from a stream (a file on disk) when the message is sent. */
export interface MessageFile {
  name: string;
  data: Readable;
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
