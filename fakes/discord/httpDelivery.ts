/**
 * Interactions delivered the way Discord does when an Interactions Endpoint URL is set: a signed HTTPS
 * POST of the interaction, answered with the first response in the HTTP response body (JSON, or
 * multipart with `payload_json` + `files[n]`), within 3 s. The answer goes through the same callback
 * handling as `POST /interactions/{id}/{token}/callback`; follow-ups and edits use the webhook routes.
 * @see https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint
 */
import { ed25519 } from '@noble/curves/ed25519';
import { InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import { parseBody } from './http.ts';
import type { HttpDelivery, InteractionTracker, TrackInput } from './interactions.ts';
import { asRecord } from './messages.ts';
import { nextSnowflake } from './snowflake.ts';
import { signedHeaders } from './webhookEvents.ts';

export type { HttpDelivery } from './interactions.ts';

/** The User-Agent of Discord's interaction POSTs. */
export const INTERACTIONS_USER_AGENT = 'Discord-Interactions/1.0 (+https://discord.com)';

/** The headers of every interaction POST besides the signature. */
const POST_HEADERS = { 'content-type': 'application/json', 'user-agent': INTERACTIONS_USER_AGENT };

/** How far a 'stale' or 'future' timestamp is from now: 10 minutes. */
const SKEW_SECONDS = 600;

/**
 * How a raw delivery is signed: 'none' correctly; 'unsigned' without signature headers; 'forged' with
 * another (attacker's) key; 'stale' / 'future' correctly but with a timestamp 10 minutes ago / ahead;
 * 'tampered' correctly over the payload, but another body is sent.
 */
export type Tamper = 'none' | 'unsigned' | 'forged' | 'stale' | 'future' | 'tampered';

export interface DeliverInteractionInput {
  /** An object (sent as JSON) or the exact body text. */
  payload: unknown;
  /** Default 'none'. */
  tamper?: Tamper;
  /**
   * For 'tampered': the body sent instead (object or text). Default: the payload with the invoking
   * user's id (`member.user.id` or `user.id`) changed, else with a field added.
   */
  sendInstead?: unknown;
  /** Default: the URL set with `useInteractionsEndpoint`. */
  url?: string;
}

/** What an endpoint answered to a POST. */
export interface EndpointAnswer {
  status: number;
  body: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
}

/** Rejects a played interaction that Discord would show as "This interaction failed". */
export class InteractionFailedError extends Error {
  readonly delivery: HttpDelivery;

  constructor(delivery: HttpDelivery) {
    super(`${delivery.kind} interaction ${delivery.interactionId} failed over HTTP: ${delivery.error}`);
    this.name = 'InteractionFailedError';
    this.delivery = delivery;
  }
}

/** The fake's surface for HTTP interactions (part of `FakeDiscord`). */
export interface HttpInteractionsApi {
  /** The application's Ed25519 public key, hex: what the bot verifies with (DISCORD_PUBLIC_KEY). */
  readonly applicationPublicKey: string;
  /** The Interactions Endpoint URL in use, or null when interactions go over the gateway. */
  readonly interactionsEndpoint: string | null;
  /** Every interaction and PING POSTed to an endpoint by the fake's tracked paths, in order. */
  readonly httpDeliveries: HttpDelivery[];
  /**
   * While set, runCommand / typeInOption / clickComponent / submitModal POST the interaction to `url`,
   * signed, instead of dispatching INTERACTION_CREATE; null goes back to the gateway.
   */
  useInteractionsEndpoint(url: string | null): void;
  /**
   * Developer Portal › Interactions Endpoint URL › Save: a signed PING must get 200 `{"type":1}` and a
   * PING with a bad signature 401; only then is the URL used (as `useInteractionsEndpoint`).
   */
  saveInteractionsEndpoint(
    url: string,
  ): Promise<{ saved: boolean; valid: EndpointAnswer; invalid: EndpointAnswer }>;
  /** POSTs a signed PING (type 1) to `url` (default: the endpoint in use); recorded in `httpDeliveries`. */
  pingInteractionsEndpoint(url?: string): Promise<EndpointAnswer>;
  /** POSTs a raw payload, signed or not per `tamper`, and nothing else: no tracking, no callback handling. */
  deliverInteraction(input: DeliverInteractionInput): Promise<EndpointAnswer>;
}

export interface HttpDeliveryContext {
  readonly applicationId: string;
  readonly tracker: InteractionTracker;
  /** A response later than this fails the interaction, as on Discord. */
  readonly ackDeadlineMs: number;
  /** Signs with the application's private key. */
  sign(body: string, timestampSeconds?: number): Record<string, string>;
}

interface Posted {
  status: number;
  headers: Headers;
  raw: Buffer;
}

/** Sends interactions to the Interactions Endpoint URL and feeds the answers to the tracker. */
export class HttpInteractionDelivery {
  readonly deliveries: HttpDelivery[] = [];
  readonly #ctx: HttpDeliveryContext;
  #url: string | null = null;

  constructor(ctx: HttpDeliveryContext) {
    this.#ctx = ctx;
  }

  get url(): string | null {
    return this.#url;
  }

  use(url: string | null): void {
    this.#url = url;
  }

  /** POSTs a tracked interaction; never throws: a failure rejects the tracked result instead. */
  async deliver(input: Pick<TrackInput, 'id' | 'token' | 'kind'>, payload: unknown): Promise<void> {
    const { tracker } = this.#ctx;
    const url = this.#endpoint();
    const body = JSON.stringify(payload);
    const signature = this.#ctx.sign(body);
    const started = performance.now();
    const delivery: HttpDelivery = {
      interactionId: input.id,
      kind: input.kind,
      status: null,
      servedBy: null,
      ms: 0,
      error: null,
      sent: { body, headers: { ...POST_HEADERS, ...signature } },
    };
    let answer: { body: unknown; files: Parameters<InteractionTracker['callback']>[4] } | null = null;
    try {
      const posted = await post(url, body, signature, AbortSignal.timeout(this.#ctx.ackDeadlineMs));
      delivery.status = posted.status;
      delivery.servedBy = posted.headers.get('x-served-by');
      const parsed = await parseBody(posted.raw, posted.headers.get('content-type') ?? '');
      if (posted.status < 200 || posted.status > 299)
        delivery.error = `the endpoint answered ${posted.status}`;
      else if ('status' in parsed || parsed.body === null)
        delivery.error = 'the response body is not an interaction response';
      else answer = parsed;
    } catch (error) {
      delivery.error =
        error instanceof DOMException && error.name === 'TimeoutError'
          ? `no response within ${this.#ctx.ackDeadlineMs} ms`
          : `the POST failed: ${String(error)}`;
    }
    delivery.ms = performance.now() - started;
    this.deliveries.push(delivery);
    tracker.recordDelivery(delivery);
    if (answer) {
      const applied = tracker.callback(
        input.id,
        input.token,
        new URLSearchParams(),
        answer.body,
        answer.files,
      );
      if (applied.status >= 400)
        delivery.error = `Discord refused the response: ${applied.status} ${JSON.stringify(applied.body)}`;
    }
    if (delivery.error !== null) tracker.abandon(input.id, new InteractionFailedError(delivery));
  }

  async ping(url = this.#endpoint()): Promise<EndpointAnswer> {
    const payload = this.pingPayload();
    const body = JSON.stringify(payload);
    const started = performance.now();
    const answer = await postForAnswer(url, body, this.#ctx.sign(body));
    const pong = asRecord(safeJson(answer.body))?.type === InteractionResponseType.Pong;
    this.deliveries.push({
      interactionId: payload.id,
      kind: 'ping',
      status: answer.status,
      servedBy: answer.headers['x-served-by'] ?? null,
      ms: performance.now() - started,
      error: answer.status === 200 && pong ? null : `PING answered ${answer.status} ${answer.body}`,
    });
    return answer;
  }

  /** A PING as Discord sends it when the URL is saved. */
  pingPayload(): {
    id: string;
    application_id: string;
    type: InteractionType.Ping;
    token: string;
    version: 1;
  } {
    const id = nextSnowflake();
    return {
      id,
      application_id: this.#ctx.applicationId,
      type: InteractionType.Ping,
      token: `fake-ping.${id}`,
      version: 1,
    };
  }

  async save(url: string): Promise<{ saved: boolean; valid: EndpointAnswer; invalid: EndpointAnswer }> {
    const valid = await this.ping(url);
    const invalid = await this.raw({ payload: this.pingPayload(), tamper: 'forged', url });
    const saved =
      valid.status === 200 &&
      asRecord(safeJson(valid.body))?.type === InteractionResponseType.Pong &&
      invalid.status === 401;
    if (saved) this.#url = url;
    return { saved, valid, invalid };
  }

  async raw(input: DeliverInteractionInput): Promise<EndpointAnswer> {
    const url = input.url ?? this.#endpoint();
    const body = serialize(input.payload);
    const now = Math.floor(Date.now() / 1000);
    const { sign } = this.#ctx;
    switch (input.tamper ?? 'none') {
      case 'none':
        return postForAnswer(url, body, sign(body));
      case 'unsigned':
        return postForAnswer(url, body, {});
      case 'forged':
        return postForAnswer(url, body, signedHeaders(ed25519.utils.randomPrivateKey(), body));
      case 'stale':
        return postForAnswer(url, body, sign(body, now - SKEW_SECONDS));
      case 'future':
        return postForAnswer(url, body, sign(body, now + SKEW_SECONDS));
      case 'tampered': {
        const sent = input.sendInstead === undefined ? tamperWith(body) : serialize(input.sendInstead);
        return postForAnswer(url, sent, sign(body));
      }
    }
  }

  #endpoint(): string {
    if (this.#url === null)
      throw new Error('no Interactions Endpoint URL: call useInteractionsEndpoint(url)');
    return this.#url;
  }
}

async function post(
  url: string,
  body: string,
  signature: Record<string, string>,
  signal?: AbortSignal,
): Promise<Posted> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...POST_HEADERS, ...signature },
    body,
    ...(signal ? { signal } : {}),
  });
  return {
    status: response.status,
    headers: response.headers,
    raw: Buffer.from(await response.arrayBuffer()),
  };
}

async function postForAnswer(
  url: string,
  body: string,
  signature: Record<string, string>,
): Promise<EndpointAnswer> {
  const posted = await post(url, body, signature);
  return {
    status: posted.status,
    body: posted.raw.toString('utf8'),
    headers: Object.fromEntries(posted.headers),
  };
}

function serialize(payload: unknown): string {
  return typeof payload === 'string' ? payload : JSON.stringify(payload);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

/** The same interaction claimed for another user: what someone replaying a captured body would change. */
function tamperWith(body: string): string {
  const record = asRecord(safeJson(body));
  if (!record) return `${body} `;
  const user = asRecord(asRecord(record.member)?.user) ?? asRecord(record.user);
  if (user && typeof user.id === 'string') {
    user.id = nextSnowflake();
    return JSON.stringify(record);
  }
  return JSON.stringify({ ...record, tampered: true });
}
