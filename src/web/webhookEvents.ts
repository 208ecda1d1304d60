/**
 * `PUBLIC_URL/discord/events`, the app's Webhook Events URL: Discord POSTs events there, signed with
 * ed25519 over `X-Signature-Timestamp` + the raw body; DISCORD_PUBLIC_KEY checks them. A member's
 * `APPLICATION_DEAUTHORIZED` removes their stored Linked Roles connection at once; every other event is
 * acknowledged and ignored.
 * @see https://discord.com/developers/docs/events/webhook-events
 */

import { ApplicationWebhookEventType, ApplicationWebhookType } from 'discord-api-types/v10';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { LinkedRoleService } from '../gating/linkedRoles/linkedRoleService.ts';
import {
  type DeliveryGateOptions,
  type DeliveryGuards,
  deliveryGate,
  refuseDelivery,
  suspectList,
} from './deliveryGate.ts';
import { header, parseJson, verifySignature } from './discordSignature.ts';
import type { WebLimiters } from './limits.ts';
import { errorSummary, refuseOtherMethods, sendJson, type WebLogger } from './responses.ts';
import type { DeliveryLedger, Sighting } from './seenDeliveries.ts';
import { signedBodyReader } from './signedBody.ts';

export const WEBHOOK_EVENTS_PATH = '/discord/events';
/** Discord's events carry a user or an entitlement at most; a larger body is not Discord's. */
export const MAX_EVENT_BODY_BYTES = 64 * 1024;
const SNOWFLAKE = /^\d{17,20}$/;

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
  /** The refusal count, the deliveries acted on and the bytes in flight, shared with `/interactions`. */
  guards: DeliveryGuards;
}

/** Receives the app's webhook events: checks each, answers Discord at once, then acts on it. */
export class WebhookEventReceiver {
  readonly #o: WebhookEventsOptions;
  readonly #gate: DeliveryGateOptions;

  constructor(options: WebhookEventsOptions) {
    this.#o = options;
    this.#gate = {
      route: WEBHOOK_EVENTS_PATH,
      bodyLimit: MAX_EVENT_BODY_BYTES,
      budget: options.guards.budget,
      bodyTimeoutMs: options.guards.bodyTimeoutMs,
      refusals: options.guards.refusals,
      suspects: suspectList(),
      logger: options.logger,
      refusedMessage: 'webhook event refused',
      refusedBody: { ok: false, message: 'Invalid request signature.' },
      now: options.now,
    };
  }

  /**
   * Mounts the endpoint on `app`: the per-client limit and the checks of deliveryGate.ts come before the
   * body is read; the raw body (any content type) then reaches the signature check as sent.
   */
  register(app: FastifyInstance, limit: WebLimiters['events']): void {
    app.register(async (scope) => {
      scope.removeAllContentTypeParsers();
      scope.addContentTypeParser('*', signedBodyReader(this.#gate));
      scope.post(WEBHOOK_EVENTS_PATH, { onRequest: [limit, deliveryGate(this.#gate)] }, (request, reply) =>
        this.handle(request, reply),
      );
      refuseOtherMethods(scope, WEBHOOK_EVENTS_PATH, 'POST');
    });
  }

  async handle(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    const now = this.#o.now();
    const signature = header(request, 'x-signature-ed25519') ?? '';
    const timestamp = header(request, 'x-signature-timestamp') ?? '';
    if (!verifySignature(this.#o.publicKey, signature, timestamp, body)) {
      refuseDelivery(request, reply, this.#gate, 'bad_signature');
      return reply;
    }
    const parsed = RawWebhookEvent.safeParse(parseJson(body));
    if (!parsed.success) return sendJson(reply, 400, { ok: false, message: 'Malformed event.' });
    const { type, event } = parsed.data;
    if (type === ApplicationWebhookType.Ping) return reply.code(204).send();
    if (type !== ApplicationWebhookType.Event || !event)
      return sendJson(reply, 400, { ok: false, message: 'Malformed event.' });
    // Discord wants the acknowledgement within 3 seconds; the work happens after it. An event carries
    // no id of its own: its signature (lower-cased, as hex is read either way) names it.
    reply.code(204).send();
    const first = await judged(
      this.#o.guards.ledger,
      `event:${signature.toLowerCase()}`,
      Number(timestamp),
      this.#o.now,
    );
    if (first !== true) {
      this.#o.logger.warn(
        { route: WEBHOOK_EVENTS_PATH },
        first === false
          ? 'webhook event already acted on: ignored'
          : 'webhook event ignored: the replicas were restoring the shared deliveries acted on',
      );
      return reply;
    }
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
}

/** How long an acknowledged event may wait to be judged while the replicas restore the shared set, ms. */
const EVENT_JUDGE_MS = 30_000;

/**
 * Whether the event is seen for the first time. It was acknowledged already, so while the replicas
 * restore the shared set (Redis came back empty) it is not dropped but asked about again (each answer
 * 'unjudged' comes after the ledger held it a while), for up to EVENT_JUDGE_MS.
 */
async function judged(
  ledger: DeliveryLedger,
  key: string,
  timestampSeconds: number,
  now: () => number,
): Promise<Sighting> {
  const until = performance.now() + EVENT_JUDGE_MS;
  let sighting = await ledger.firstSighting(key, timestampSeconds, now());
  while (sighting === 'unjudged' && performance.now() < until)
    sighting = await ledger.firstSighting(key, timestampSeconds, now());
  return sighting;
}

/** When the event happened: Discord's ISO 8601 timestamp (UTC, often without a zone), else now. */
function occurredAt(timestamp: string | undefined, now: number): number {
  if (timestamp === undefined) return now;
  const zoned = /(Z|[+-]\d\d:?\d\d)$/i.test(timestamp) ? timestamp : `${timestamp}Z`;
  const at = Date.parse(zoned);
  return Number.isNaN(at) ? now : at;
}
