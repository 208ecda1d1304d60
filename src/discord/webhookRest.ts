/**
 * The REST a responder needs: interaction callbacks and the interaction webhook, which take the
 * interaction's token as their credential (no bot token) and are exempt from the global rate limit.
 * discord.js's client (`client.rest`) is one; a web replica uses `InteractionWebhooks`, on the undici the
 * bot already loads, instead of @discordjs/rest's own copy (about 250 ms of start-up and 10 MiB here).
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#followup-messages
 */
import { setTimeout as delay } from 'node:timers/promises';
import { request } from 'undici';

export interface WebhookFile {
  name: string;
  data: Buffer | Uint8Array;
}

export interface WebhookCall {
  body?: unknown;
  files?: WebhookFile[];
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

  /** `apiUrl`: DISCORD_API_URL, e.g. https://discord.com/api (v10 is added). */
  constructor(apiUrl: string) {
    this.#base = `${apiUrl.replace(/\/+$/, '')}/v10`;
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
      const answer = await request(`${this.#base}${route}`, {
        method,
        ...(await encode(call)),
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

async function encode(
  call: WebhookCall,
): Promise<{ body?: string | Buffer; headers?: Record<string, string> }> {
  if (call.files && call.files.length > 0) {
    const form = new FormData();
    form.append('payload_json', JSON.stringify(call.body ?? {}));
    call.files.forEach((file, index) => {
      form.append(`files[${index}]`, new Blob([Uint8Array.from(file.data)]), file.name);
    });
    // undici's request() takes bytes, not a form: a Response encodes it, boundary and all.
    const encoded = new Response(form);
    const type = encoded.headers.get('content-type') ?? 'multipart/form-data';
    return { body: Buffer.from(await encoded.arrayBuffer()), headers: { 'content-type': type } };
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
