/**
 * `POST /interactions`, the Interactions Endpoint URL (INTERACTIONS=http): Discord POSTs each interaction
 * here, signed with ed25519 over `X-Signature-Timestamp` + the raw body. Anything unsigned, stale or
 * too large is refused before its body is read (deliveryGate.ts); anything signed by another key or
 * tampered with is refused with 401 before it is parsed, and a delivery already acted on (here or, with
 * Redis, by another replica) with 401 before it acts; Discord's PING gets its PONG; everything else goes to the router, whose first response becomes this response's body
 * (later answers use the interaction's webhook).
 * @see https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint
 */

import { type APIInteraction, InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { Responder, responseBytes } from '../discord/responder.ts';
import type { WebhookRest } from '../discord/webhookRest.ts';
import {
  type DeliveryGateOptions,
  type DeliveryGuards,
  deliveryGate,
  refuseDelivery,
  suspectList,
} from './deliveryGate.ts';
import { header, parseJson, verifySignature } from './discordSignature.ts';
import { errorSummary, refuseOtherMethods, sendJson, type WebLogger } from './responses.ts';
import type { DeliveryLedger } from './seenDeliveries.ts';
import { signedBodyReader } from './signedBody.ts';

export const INTERACTIONS_PATH = '/interactions';
/**
 * The largest interaction body read (a larger one is refused unread, 413). The largest Discord sends this
 * bot is a message context menu ("Web3 identities in this message"), which carries the whole target
 * message: at Discord's limits, 4,000 characters of content, 100 mentioned users, 10 embeds (6,000
 * characters of text among them, each with its image, thumbnail, video, author and footer URLs and
 * Discord's proxy URLs for them), 10 attachments with descriptions and a poll come to about 120 KiB of
 * JSON with 200-character URLs, and 245 KiB with the message it replies to alongside
 * (test/e2e/deliveryGate.test.ts builds it). Twice that leaves room for longer URLs and fields Discord
 * adds; every other interaction is a few KiB. What bodies may cost in all is bounded separately, by
 * MAX_BYTES_IN_FLIGHT.
 */
export const MAX_INTERACTION_BODY_BYTES = 512 * 1024;

/** What the endpoint needs: the key that signs, the router, and REST for the webhook answers. */
export interface InteractionEndpoint {
  /** DISCORD_PUBLIC_KEY, hex. */
  publicKey: string;
  /** DISCORD_APPLICATION_ID: an interaction for another application is refused. */
  applicationId: string;
  /** Answers one interaction through the responder (the router's `handle`, or a hand-off to the gateway worker). */
  dispatch: (interaction: APIInteraction, responder: Responder) => Promise<void>;
  /** For follow-ups and edits through the interaction webhook (no bot token needed). */
  rest: WebhookRest;
  now?: () => number;
}

/** What the endpoint reads of every interaction before it acts (the rest is the router's). */
export const InteractionEnvelope = z.object({
  id: z.string().regex(/^\d{17,20}$/),
  application_id: z.string(),
  type: z.number().int(),
  token: z.string().min(1).max(1_000),
});

/**
 * Mounts the endpoint on `app`. No per-client request limit: every delivery comes from Discord's few
 * addresses. A client whose deliveries keep being refused is turned away unchecked, and everything the
 * headers can tell is checked before the body is read (deliveryGate.ts).
 */
export function registerInteractions(
  app: FastifyInstance,
  endpoint: InteractionEndpoint,
  guards: DeliveryGuards,
  logger: WebLogger,
): void {
  const now = endpoint.now ?? Date.now;
  const gate: DeliveryGateOptions = {
    route: INTERACTIONS_PATH,
    bodyLimit: MAX_INTERACTION_BODY_BYTES,
    budget: guards.budget,
    bodyTimeoutMs: guards.bodyTimeoutMs,
    refusals: guards.refusals,
    suspects: suspectList(),
    logger,
    refusedMessage: 'interaction delivery refused',
    refusedBody: { error: 'invalid request signature' },
    now,
  };
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Discord's own type by name: Fastify caches that match, while the catch-all parses the header every time.
    const readBody = signedBodyReader(gate);
    for (const type of ['application/json', '*']) scope.addContentTypeParser(type, readBody);
    const receiver: Receiver = { endpoint, gate, ledger: guards.ledger, logger };
    // Not async: the answer is sent when the router gives it, with no promise of the handler's own.
    scope.post(
      INTERACTIONS_PATH,
      { config: { rateLimit: false, answers: 'api' }, onRequest: deliveryGate(gate) },
      (request, reply) => {
        accept(request, reply, receiver, now());
      },
    );
    refuseOtherMethods(scope, INTERACTIONS_PATH, 'POST');
  });
}

interface Receiver {
  endpoint: InteractionEndpoint;
  gate: DeliveryGateOptions;
  ledger: DeliveryLedger;
  logger: WebLogger;
}

/** A failure after the handler returned goes to the app's error handler (a 500 without details). */
const failed = (reply: FastifyReply) => (error: unknown) => void reply.send(error);

/**
 * Refuses what Discord did not sign (or signed for another application, or sent before, to this process
 * or, with Redis, to any), answers PING, and hands the rest to the router, whose first response is this
 * response's body. The headers were checked before the body was read (deliveryGate.ts).
 */
function accept(request: FastifyRequest, reply: FastifyReply, receiver: Receiver, now: number): void {
  const { endpoint, gate, ledger } = receiver;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const timestamp = header(request, 'x-signature-timestamp') ?? '';
  if (!verifySignature(endpoint.publicKey, header(request, 'x-signature-ed25519') ?? '', timestamp, body)) {
    refuseDelivery(request, reply, gate, 'bad_signature');
    return;
  }
  const raw = parseJson(body);
  const envelope = InteractionEnvelope.safeParse(raw);
  if (!envelope.success) {
    sendJson(reply, 400, { error: 'malformed interaction' });
    return;
  }
  if (envelope.data.application_id !== endpoint.applicationId) {
    refuseDelivery(request, reply, gate, 'other_application');
    return;
  }
  // A captured delivery sent again within the window, here or to another replica: acted on once.
  const first = ledger.firstSighting(envelope.data.id, Number(timestamp), now);
  if (first === true) act(raw as APIInteraction, reply, receiver);
  else if (first === false) refuseDelivery(request, reply, gate, 'replayed');
  else
    first
      .then((sighting) => {
        if (sighting === true) act(raw as APIInteraction, reply, receiver);
        else if (sighting === false) refuseDelivery(request, reply, gate, 'replayed');
        else unjudged(reply, receiver.logger);
      })
      .catch(failed(reply));
}

/**
 * A delivery that could not be judged while the replicas restore the shared set (Redis came back empty):
 * neither acted on nor remembered, and not counted against the sender (Discord sent it); 503, so that
 * the same delivery sent again once the set is whole is judged then.
 */
function unjudged(reply: FastifyReply, logger: WebLogger): void {
  logger.warn(
    { route: INTERACTIONS_PATH },
    'interaction refused for now: the replicas are restoring the shared deliveries acted on',
  );
  sendJson(reply.header('retry-after', '1'), 503, { error: 'restoring replay protection' });
}

/** Answers PING, and hands the rest to the router. */
function act(interaction: APIInteraction, reply: FastifyReply, receiver: Receiver): void {
  const { endpoint, logger } = receiver;
  if (interaction.type === InteractionType.Ping) {
    sendJson(reply, 200, { type: InteractionResponseType.Pong });
    return;
  }
  const responder = new Responder(endpoint.rest, interaction, async (response) => {
    reply.code(200).header('content-type', 'application/json').send(responseBytes(response));
  });
  // The router never rejects and always answers first; should it end without an answer, Discord is told.
  endpoint
    .dispatch(interaction, responder)
    .then(
      () => answerIfUnanswered(reply),
      (error: unknown) => {
        logger.error({ err: errorSummary(error) }, 'interaction dispatch failed');
        answerIfUnanswered(reply);
      },
    )
    .catch(failed(reply));
}

function answerIfUnanswered(reply: FastifyReply): void {
  if (!reply.sent) sendJson(reply, 500, { error: 'no answer' });
}
