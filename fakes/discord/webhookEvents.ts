/**
 * The stand-in for Discord's Webhook Events: the application's ed25519 key pair (its public key is what
 * the bot is configured with, as DISCORD_PUBLIC_KEY), the Webhook Events URL and the events subscribed
 * to (Developer Portal › Webhooks), and signed POSTs to that URL as Discord sends them: the signature
 * over `X-Signature-Timestamp` (Unix seconds) + the raw body. Deauthorizing a user first does what
 * Discord does to its own state (their tokens and role connection are gone), then sends the event.
 * @see https://discord.com/developers/docs/events/webhook-events
 */
import { ed25519 } from '@noble/curves/ed25519';
import {
  type APIUser,
  type APIWebhookEvent,
  ApplicationWebhookEventType,
  ApplicationWebhookType,
} from 'discord-api-types/v10';
import type { FakeOAuth } from './oauth.ts';

/** What the endpoint answered to one delivery. */
export interface EventDelivery {
  status: number;
  body: string;
}

/** The signature headers Discord puts on a body signed at `timestampSeconds` with `privateKey`. */
export function signedHeaders(
  privateKey: Uint8Array,
  body: string,
  timestampSeconds = Math.floor(Date.now() / 1_000),
): { 'x-signature-ed25519': string; 'x-signature-timestamp': string } {
  const timestamp = String(timestampSeconds);
  const signature = ed25519.sign(new TextEncoder().encode(timestamp + body), privateKey);
  return {
    'x-signature-ed25519': Buffer.from(signature).toString('hex'),
    'x-signature-timestamp': timestamp,
  };
}

/** POSTs `body` to `url` with the given headers, as Discord's webhook sender does. */
export async function postEvent(
  url: string,
  body: string,
  headers: Record<string, string>,
): Promise<EventDelivery> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'user-agent': 'Discord-Webhook/1.0', ...headers },
    body,
  });
  return { status: response.status, body: await response.text() };
}

export class FakeWebhookEvents {
  /** The application's public key, hex (General Information › Public Key). */
  readonly publicKey: string;
  /** Every event delivered, in order: its type (`PING` for a ping) and the endpoint's answer. */
  readonly deliveries: { type: string; status: number }[] = [];
  readonly #privateKey = ed25519.utils.randomPrivateKey();
  readonly #applicationId: string;
  readonly #oauth: Pick<FakeOAuth, 'revokeUser' | 'roleConnections'>;
  readonly #users: Map<string, APIUser>;
  #url: string | null = null;
  #subscribed = new Set<ApplicationWebhookEventType>();

  constructor(input: {
    applicationId: string;
    oauth: Pick<FakeOAuth, 'revokeUser' | 'roleConnections'>;
    users: Map<string, APIUser>;
  }) {
    this.#applicationId = input.applicationId;
    this.#oauth = input.oauth;
    this.#users = input.users;
    this.publicKey = Buffer.from(ed25519.getPublicKey(this.#privateKey)).toString('hex');
  }

  /**
   * Webhooks › Endpoint and Events, then Save Changes: like Discord, a signed PING goes to the URL first,
   * and the URL is kept only when it answers 204. Returns whether it was kept.
   */
  async configure(url: string, events: ApplicationWebhookEventType[]): Promise<boolean> {
    const ping = await this.#deliver(url, 'PING', {
      version: 1,
      application_id: this.#applicationId,
      type: ApplicationWebhookType.Ping,
      event: undefined,
    });
    if (ping.status !== 204) return false;
    this.#url = url;
    this.#subscribed = new Set(events);
    return true;
  }

  /**
   * The user deauthorizes the app (User Settings › Authorized Apps): their tokens stop working and their
   * role connection is gone at once; then `APPLICATION_DEAUTHORIZED` goes to the URL when subscribed.
   * The endpoint's answer, or null when nothing was sent.
   */
  async deauthorize(userId: string): Promise<EventDelivery | null> {
    const user = this.#users.get(userId);
    if (!user) throw new Error(`unknown user ${userId}`);
    this.#oauth.revokeUser(userId);
    this.#oauth.roleConnections.delete(userId);
    const type = ApplicationWebhookEventType.ApplicationDeauthorized;
    if (this.#url === null || !this.#subscribed.has(type)) return null;
    return this.#deliver(this.#url, type, {
      version: 1,
      application_id: this.#applicationId,
      type: ApplicationWebhookType.Event,
      // Discord writes the time in UTC with microseconds and no zone.
      event: { type, timestamp: `${new Date().toISOString().slice(0, -1)}000`, data: { user } },
    });
  }

  /** The signature headers for `body` made with the application's private key (as Discord signs). */
  sign(body: string, timestampSeconds?: number): ReturnType<typeof signedHeaders> {
    return signedHeaders(this.#privateKey, body, timestampSeconds);
  }

  async #deliver(url: string, type: string, event: APIWebhookEvent): Promise<EventDelivery> {
    const body = JSON.stringify(event);
    const answer = await postEvent(url, body, this.sign(body));
    this.deliveries.push({ type, status: answer.status });
    return answer;
  }
}
