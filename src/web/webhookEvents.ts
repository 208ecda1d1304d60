/**
 * `PUBLIC_URL/discord/events`, the app's Webhook Events URL: Discord POSTs events there, signed with
 * ed25519 over `X-Signature-Timestamp` + the raw body; DISCORD_PUBLIC_KEY checks them. A member's
 * `APPLICATION_DEAUTHORIZED` removes their stored Linked Roles connection at once; every other event is
 * acknowledged and ignored.
 * @see https://discord.com/developers/docs/events/webhook-events
 */

import { ed25519 } from '@noble/curves/ed25519';
import { ApplicationWebhookEventType, ApplicationWebhookType } from 'discord-api-types/v10';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { LinkedRoleService } from '../gating/linkedRoles/linkedRoleService.ts';
import type { WebLimiters } from './limits.ts';
import { errorSummary, refuseOtherMethods, sendJson, type WebLogger } from './responses.ts';

export const WEBHOOK_EVENTS_PATH = '/discord/events';
/** A signature made longer ago (or further ahead) than this is refused, so a captured event cannot be replayed later. */
export const MAX_EVENT_AGE_MS = 5 * 60_000;
/** Discord's events carry a user or an entitlement at most; a larger body is not Discord's. */
export const MAX_EVENT_BODY_BYTES = 64 * 1024;
/** Signatures remembered within MAX_EVENT_AGE_MS, so the same delivery acts once. */
const MAX_REMEMBERED = 10_000;
const SIGNATURE_SHAPE = /^[0-9a-fA-F]{128}$/;
/** Unix seconds, as Discord sends them. */
const TIMESTAMP_SHAPE = /^\d{1,12}$/;
const SNOWFLAKE = /^\d{17,20}$/;

export type EventSignatureCheck = 'ok' | 'missing' | 'stale' | 'bad_signature';

/**
 * Whether a request carries Discord's signature: both headers present, the timestamp within
 * `maxAgeMs` of `now`, and a valid ed25519 signature by `publicKey` (hex) over timestamp + raw body.
 */
export function checkEventSignature(input: {
  publicKey: string;
  signature: string | undefined;
  timestamp: string | undefined;
  body: Uint8Array;
  now: number;
  maxAgeMs?: number;
}): EventSignatureCheck {
  const { signature, timestamp } = input;
  if (!signature || !timestamp) return 'missing';
  if (!SIGNATURE_SHAPE.test(signature) || !TIMESTAMP_SHAPE.test(timestamp)) return 'bad_signature';
  // The cheap check first: a flood of old or made-up timestamps costs no curve arithmetic.
  if (Math.abs(input.now - Number(timestamp) * 1_000) > (input.maxAgeMs ?? MAX_EVENT_AGE_MS)) return 'stale';
  try {
    const signed = Buffer.concat([Buffer.from(timestamp, 'utf8'), input.body]);
    const valid = ed25519.verify(Buffer.from(signature, 'hex'), signed, Buffer.from(input.publicKey, 'hex'), {
      zip215: false,
    });
    return valid ? 'ok' : 'bad_signature';
  } catch {
    return 'bad_signature';
  }
}

const RawWebhookEvent = z.object({
  application_id: z.string(),
  type: z.number().int(),
  event: z.object({ type: z.string(), timestamp: z.string().optional(), data: z.unknown() }).nullish(),
});
const RawDeauthorizedData = z.object({ user: z.object({ id: z.string().regex(SNOWFLAKE) }) });

export interface WebhookEventsOptions {
  /** DISCORD_PUBLIC_KEY, hex. */
  publicKey: string;
  /** DISCORD_APPLICATION_ID: events for another application are ignored. */
  applicationId: string;
  service: Pick<LinkedRoleService, 'forgetDeauthorized'>;
  logger: WebLogger;
  now: () => number;
}

/** Receives the app's webhook events: checks each, answers Discord at once, then acts on it. */
export class WebhookEventReceiver {
  readonly #o: WebhookEventsOptions;
  /** Signature -> when it stops being accepted anyway (insertion order is age order). */
  readonly #seen = new Map<string, number>();

  constructor(options: WebhookEventsOptions) {
    this.#o = options;
  }

  /** Mounts the endpoint on `app`: the raw body (any content type) reaches the signature check as sent. */
  register(app: FastifyInstance, limit: WebLimiters['events']): void {
    app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser(
        '*',
        { parseAs: 'buffer', bodyLimit: MAX_EVENT_BODY_BYTES },
        (_req, body, done) => done(null, body),
      );
      scope.post(WEBHOOK_EVENTS_PATH, { onRequest: limit }, (request, reply) => this.handle(request, reply));
      refuseOtherMethods(scope, WEBHOOK_EVENTS_PATH, 'POST');
    });
  }

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const now = this.#o.now();
    const signature = header(request, 'x-signature-ed25519');
    const check = checkEventSignature({
      publicKey: this.#o.publicKey,
      signature,
      timestamp: header(request, 'x-signature-timestamp'),
      body,
      now,
    });
    if (check !== 'ok') {
      this.#o.logger.warn({ route: WEBHOOK_EVENTS_PATH, refusal: check }, 'webhook event refused');
      return sendJson(reply, 401, { ok: false, message: 'Invalid request signature.' });
    }
    const parsed = RawWebhookEvent.safeParse(parseJson(body));
    if (!parsed.success) return sendJson(reply, 400, { ok: false, message: 'Malformed event.' });
    const { type, event } = parsed.data;
    if (type === ApplicationWebhookType.Ping) return reply.code(204).send();
    if (type !== ApplicationWebhookType.Event || !event)
      return sendJson(reply, 400, { ok: false, message: 'Malformed event.' });
    // Discord wants the acknowledgement within 3 seconds; the work happens after it.
    reply.code(204).send();
    if (!this.#firstSighting(signature ?? '', now)) return reply;
    if (parsed.data.application_id !== this.#o.applicationId) {
      this.#o.logger.warn({ route: WEBHOOK_EVENTS_PATH }, 'webhook event for another application ignored');
      return reply;
    }
    if (event.type !== ApplicationWebhookEventType.ApplicationDeauthorized) return reply;
    await this.#deauthorized(event.data, occurredAt(event.timestamp, now)).catch((error: unknown) =>
      this.#o.logger.error({ err: errorSummary(error) }, 'webhook event: removing the connection failed'),
    );
    return reply;
  }

  async #deauthorized(data: unknown, at: number): Promise<void> {
    const parsed = RawDeauthorizedData.safeParse(data);
    if (!parsed.success) {
      this.#o.logger.warn({ route: WEBHOOK_EVENTS_PATH }, 'deauthorization event without a user ignored');
      return;
    }
    const userId = parsed.data.user.id;
    if (!(await this.#o.service.forgetDeauthorized(userId, at)))
      this.#o.logger.info({ userId }, 'member deauthorized the app; no stored connection older than that');
  }

  /** False when this signature was already acted on (a repeated delivery, or a replay within the window). */
  #firstSighting(signature: string, now: number): boolean {
    for (const [seen, until] of this.#seen) {
      if (until > now && this.#seen.size < MAX_REMEMBERED) break;
      this.#seen.delete(seen);
    }
    const key = signature.toLowerCase();
    if (this.#seen.has(key)) return false;
    this.#seen.set(key, now + 2 * MAX_EVENT_AGE_MS);
    return true;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** When the event happened: Discord's ISO 8601 timestamp (UTC, often without a zone), else now. */
function occurredAt(timestamp: string | undefined, now: number): number {
  if (timestamp === undefined) return now;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(timestamp) ? timestamp : `${timestamp}Z`;
  const at = Date.parse(zoned);
  return Number.isNaN(at) ? now : at;
}
