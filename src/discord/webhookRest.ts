/**
 * The REST an interaction's answers need: its callback and its webhook, which take the interaction's
 * token as their credential (no bot token) and are exempt from the global rate limit. Every process
 * answers through `InteractionWebhooks`, on the bot's undici with a dispatcher of its own.
 *
 * Not through discord.js's REST (`client.rest`): for a file it builds Node's built-in FormData and hands
 * it to undici's `request()` without a dispatcher, so whichever undici first installed the process-wide
 * dispatcher sends it. Run from the sources, that was Node's own copy, which takes its FormData; in the
 * bundle `npm start` runs, the bot's undici 8 loads first, and it refuses any FormData but its own
 * (`UND_ERR_INVALID_ARG`): every `/gating export` failed there, and only there. Here a message with files
 * is a multipart body of our own (multipart.ts), streamed from disk, on a dispatcher no other copy sets.
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#followup-messages
 */
import type { Readable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { Agent, type Dispatcher, request } from 'undici';
import type { MessageFile } from '../render/types.ts';
import { multipartBody } from './multipart.ts';

export interface WebhookCall {
  body?: unknown;
  files?: MessageFile[];
  /** Always false here: these routes authenticate by the token in the path. */
  auth?: boolean;
}

/** What `Responder` calls: the subset of @discordjs/rest's `REST` that interaction answers use. */
export interface WebhookRest {
  post(route: `/${string}`, call?: WebhookCall): Promise<unknown>;
  patch(route: `/${string}`, call?: WebhookCall): Promise<unknown>;
  delete(route: `/${string}`, call?: WebhookCall): Promise<unknown>;
}

/** A Discord error answer: the HTTP status and Discord's JSON error code. */
export class WebhookError extends Error {
  readonly status: number;
  readonly code: number | null;
  constructor(status: number, code: number | null, message: string) {
    super(`Discord answered ${status}${code === null ? '' : ` (${code})`}: ${message}`);
    this.name = 'WebhookError';
    this.status = status;
    this.code = code;
  }
}

/** Tries for one call when Discord answers 429 (each waits its `retry_after`, at most MAX_WAIT_MS). */
const MAX_TRIES = 3;
const MAX_WAIT_MS = 5_000;
const TIMEOUT_MS = 15_000;

export class InteractionWebhooks implements WebhookRest {
  readonly #base: string;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  #closed: Promise<void> | undefined;

  /** `apiUrl`: DISCORD_API_URL, e.g. https://discord.com/api (v10 is added). */
  constructor(apiUrl: string, dispatcher?: Dispatcher) {
    this.#base = `${apiUrl.replace(/\/+$/, '')}/v10`;
    this.#ownsDispatcher = dispatcher === undefined;
    this.#dispatcher = dispatcher ?? new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  }

  /** Closes the connections of a dispatcher this client made (once, however often it is called). */
  close(): Promise<void> {
    if (!this.#ownsDispatcher) return Promise.resolve();
    this.#closed ??= this.#dispatcher.close();
    return this.#closed;
  }

  post(route: `/${string}`, call: WebhookCall = {}): Promise<unknown> {
    return this.#call('POST', route, call);
  }

  patch(route: `/${string}`, call: WebhookCall = {}): Promise<unknown> {
    return this.#call('PATCH', route, call);
  }

  delete(route: `/${string}`, call: WebhookCall = {}): Promise<unknown> {
    return this.#call('DELETE', route, call);
  }

  async #call(method: 'POST' | 'PATCH' | 'DELETE', route: string, call: WebhookCall): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      // Encoded for each try: a retry reads the files again from their first byte.
      const answer = await request(`${this.#base}${route}`, {
        method,
        dispatcher: this.#dispatcher,
        ...encode(call),
        headersTimeout: TIMEOUT_MS,
        bodyTimeout: TIMEOUT_MS,
      });
      const text = await answer.body.text();
      const json = parse(text);
      if (answer.statusCode === 429 && attempt < MAX_TRIES) {
        const seconds = Number((json as { retry_after?: unknown } | undefined)?.retry_after);
        await delay(Math.min(MAX_WAIT_MS, Number.isFinite(seconds) ? seconds * 1_000 : 1_000));
        continue;
      }
      if (answer.statusCode >= 400) {
        const error = json as { code?: unknown; message?: unknown } | undefined;
        throw new WebhookError(
          answer.statusCode,
          typeof error?.code === 'number' ? error.code : null,
          typeof error?.message === 'string' ? error.message : 'no message',
        );
      }
      return json;
    }
  }
}

function encode(call: WebhookCall): {
  body?: string | Readable;
  headers?: Record<string, string>;
} {
  if (call.files && call.files.length > 0) {
    const form = multipartBody(call.body ?? {}, call.files);
    return {
      body: form.body,
      headers: { 'content-type': form.contentType, 'content-length': String(form.length) },
    };
  }
  if (call.body === undefined) return {};
  return { body: JSON.stringify(call.body), headers: { 'content-type': 'application/json' } };
}

function parse(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
