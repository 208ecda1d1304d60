/**
 * The Farcaster Auth relay (FARCASTER_RELAY_URL, by default Farcaster's public relay): the bot's server
 * opens a channel for a sign-in and reads its status until the member's Farcaster app has approved it.
 * Answers are validated here; a relay that does not answer, answers 5xx or answers nonsense is
 * `RelayUnavailableError` (nothing is decided, the member may try again), a channel the relay no longer
 * knows is `ChannelGoneError`.
 * @see farcasterxyz/auth-monorepo `apps/relay/src/handlers.ts` and `packages/auth-client/src/actions/app/`
 */
import { z } from 'zod';

export const DEFAULT_RELAY_URL = 'https://relay.farcaster.xyz';
const TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 64 * 1024;

/** The relay did not answer usefully (down, slow, 5xx, or an answer that is not the protocol's). */
export class RelayUnavailableError extends Error {
  override readonly name = 'RelayUnavailableError';
}

/** The relay no longer knows the channel (closed after it was read, or expired there). */
export class ChannelGoneError extends Error {
  override readonly name = 'ChannelGoneError';
}

export interface OpenChannelRequest {
  siweUri: string;
  domain: string;
  nonce: string;
  expirationTime: string;
  requestId: string;
}

export interface OpenedChannel {
  channelToken: string;
  /** The approval link the member's Farcaster app opens (a QR code of it on a desktop). */
  url: string;
}

export type ChannelStatus =
  | { state: 'pending' }
  | { state: 'completed'; message: unknown; signature: unknown; fid: unknown };

const CHANNEL_TOKEN = /^[A-Za-z0-9_-]{4,128}$/;

const OpenedSchema = z.object({
  channelToken: z.string().regex(CHANNEL_TOKEN),
  url: z
    .string()
    .max(2_000)
    .refine((url) => URL.canParse(url) && /^(https?|farcaster):$/.test(new URL(url).protocol)),
  nonce: z.string(),
});

const StatusSchema = z.object({
  state: z.enum(['pending', 'completed']),
  message: z.unknown().optional(),
  signature: z.unknown().optional(),
  fid: z.unknown().optional(),
});

/** A relay at `relayUrl` (no trailing slash needed). */
export class FarcasterRelay {
  readonly #base: string;

  constructor(relayUrl: string) {
    this.#base = relayUrl.replace(/\/+$/, '');
  }

  /** Opens a channel for one sign-in; the relay must keep the nonce the bot chose. */
  async open(request: OpenChannelRequest): Promise<OpenedChannel> {
    const { status, body } = await this.#call('/v1/channel', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ...request, acceptAuthAddress: true }),
    });
    if (status !== 201 && status !== 200) throw new RelayUnavailableError(`relay answered ${status}`);
    const opened = OpenedSchema.safeParse(body);
    if (!opened.success || opened.data.nonce !== request.nonce)
      throw new RelayUnavailableError('relay answered a channel that is not the one asked for');
    return { channelToken: opened.data.channelToken, url: opened.data.url };
  }

  /** The channel's state: pending, or completed with what the member's app signed (unchecked). */
  async status(channelToken: string): Promise<ChannelStatus> {
    const { status, body } = await this.#call('/v1/channel/status', {
      headers: { authorization: `Bearer ${channelToken}` },
    });
    if (status === 401 || status === 404) throw new ChannelGoneError(`relay answered ${status}`);
    if (status !== 200 && status !== 202) throw new RelayUnavailableError(`relay answered ${status}`);
    const parsed = StatusSchema.safeParse(body);
    if (!parsed.success) throw new RelayUnavailableError('relay answered an unreadable status');
    const { state, message, signature, fid } = parsed.data;
    return state === 'completed' && status === 200
      ? { state, message, signature, fid }
      : { state: 'pending' };
  }

  async #call(path: string, init: RequestInit): Promise<{ status: number; body: unknown }> {
    let response: Response;
    try {
      response = await fetch(`${this.#base}${path}`, {
        ...init,
        redirect: 'error',
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new RelayUnavailableError('relay unreachable', { cause: error });
    }
    const text = await readCapped(response, MAX_BODY_BYTES);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: response.status, body };
  }
}

/**
 * The answer's text, read chunk by chunk: past `maxBytes` the stream is cancelled (the connection
 * closed) and the read fails, so a relay streaming a huge answer never has more than `maxBytes` held.
 */
async function readCapped(response: Response, maxBytes: number): Promise<string> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw new RelayUnavailableError(`relay answer larger than ${maxBytes} bytes`);
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof RelayUnavailableError) throw error;
    throw new RelayUnavailableError('relay answer cut off', { cause: error });
  }
  return Buffer.concat(chunks).toString('utf8');
}
