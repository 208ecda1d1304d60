/**
 * `POST /interactions`, the Interactions Endpoint URL (INTERACTIONS=http): Discord POSTs each interaction
 * here, signed with ed25519 over `X-Signature-Timestamp` + the raw body. Anything unsigned, signed by
 * another key, stale, tampered with or replayed is refused with 401 before it is parsed; Discord's PING
 * gets its PONG; everything else goes to the router, whose first response becomes this response's body
 * (later answers use the interaction's webhook).
 * @see https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint
 */

import { type APIInteraction, InteractionResponseType, InteractionType } from 'discord-api-types/v10';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { growingLru } from '../cache/growingLru.ts';
import { Responder, responseBytes } from '../discord/responder.ts';
import type { WebhookRest } from '../discord/webhookRest.ts';
import { checkDiscordSignature, header, parseJson, SeenSignatures } from './discordSignature.ts';
import { clientKey, type RefusalCounter } from './limits.ts';
import { errorSummary, refuseOtherMethods, sendJson, type WebLogger } from './responses.ts';

export const INTERACTIONS_PATH = '/interactions';
/** An interaction with resolved users, members, messages and attachments stays well below this. */
export const MAX_INTERACTION_BODY_BYTES = 1024 * 1024;

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

const Envelope = z.object({
  id: z.string().regex(/^\d{17,20}$/),
  application_id: z.string(),
  type: z.number().int(),
  token: z.string().min(1).max(1_000),
});

/**
 * Mounts the endpoint on `app`. No per-client request limit: every delivery comes from Discord's few
 * addresses. A client whose deliveries keep being refused is turned away unchecked (`refusals`).
 */
export function registerInteractions(
  app: FastifyInstance,
  endpoint: InteractionEndpoint,
  refusals: RefusalCounter,
  logger: WebLogger,
): void {
  const seen = new SeenSignatures();
  // Clients refused lately: only theirs pay the count's lookup (a Redis round trip with REDIS_URL).
  const suspects = growingLru<string, true>({ maxEntries: 10_000, ttl: 60_000 });
  const now = endpoint.now ?? Date.now;
  app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Discord's own type by name: Fastify caches that match, while the catch-all parses the header every time.
    for (const type of ['application/json', '*'])
      scope.addContentTypeParser(
        type,
        { parseAs: 'buffer', bodyLimit: MAX_INTERACTION_BODY_BYTES },
        (_req, body, done) => done(null, body),
      );
    const receiver: Receiver = { endpoint, seen, refusals, suspects, logger };
    // Not async: the answer is sent when the router gives it, with no promise of the handler's own.
    scope.post(INTERACTIONS_PATH, { config: { rateLimit: false, answers: 'api' } }, (request, reply) => {
      receive(request, reply, receiver, now());
    });
    refuseOtherMethods(scope, INTERACTIONS_PATH, 'POST');
  });
}

interface Receiver {
  endpoint: InteractionEndpoint;
  seen: SeenSignatures;
  refusals: RefusalCounter;
  suspects: LRUCache<string, true>;
  logger: WebLogger;
}

/** Turns away a client refused too often lately, then checks and answers the delivery (`accept`). */
function receive(request: FastifyRequest, reply: FastifyReply, receiver: Receiver, now: number): void {
  // A client that keeps sending what Discord never sends is turned away before any curve arithmetic.
  const { suspects, refusals } = receiver;
  if (suspects.size === 0 || !suspects.has(clientKey(request))) {
    accept(request, reply, receiver, now);
    return;
  }
  refusals
    .wait(request)
    .then((wait) => {
      if (wait === undefined) accept(request, reply, receiver, now);
      else sendJson(reply.header('retry-after', String(wait)), 429, { error: 'too many refused deliveries' });
    })
    .catch(failed(reply));
}

/** A failure after the handler returned goes to the app's error handler (a 500 without details). */
const failed = (reply: FastifyReply) => (error: unknown) => void reply.send(error);

/**
 * Refuses what Discord did not sign (or signed for another application, or sent before), answers PING,
 * and hands the rest to the router, whose first response is this response's body.
 */
function accept(request: FastifyRequest, reply: FastifyReply, receiver: Receiver, now: number): void {
  const { endpoint, seen, logger } = receiver;
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const signature = header(request, 'x-signature-ed25519');
  const check = checkDiscordSignature({
    publicKey: endpoint.publicKey,
    signature,
    timestamp: header(request, 'x-signature-timestamp'),
    body,
    now,
  });
  if (check !== 'ok') {
    refuse(request, reply, receiver, check);
    return;
  }
  const raw = parseJson(body);
  const envelope = Envelope.safeParse(raw);
  if (!envelope.success) {
    sendJson(reply, 400, { error: 'malformed interaction' });
    return;
  }
  // Another application's interaction, or a captured delivery sent again within the window (acts once).
  const refusal =
    envelope.data.application_id !== endpoint.applicationId
      ? 'other_application'
      : !seen.firstSighting(signature ?? '', now)
        ? 'replayed'
        : undefined;
  if (refusal) {
    refuse(request, reply, receiver, refusal);
    return;
  }
  const interaction = raw as APIInteraction;
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

/** 401, logged and counted against the client (`receive` turns it away once it has been refused too often). */
function refuse(request: FastifyRequest, reply: FastifyReply, receiver: Receiver, reason: string): void {
  receiver.suspects.set(clientKey(request), true);
  receiver.logger.warn(
    { route: INTERACTIONS_PATH, refusal: reason, client: request.ip },
    'interaction delivery refused',
  );
  receiver.refusals
    .count(request)
    .then(() => sendJson(reply, 401, { error: 'invalid request signature' }))
    .catch(failed(reply));
}
