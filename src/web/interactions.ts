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
import { Responder } from '../discord/responder.ts';
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
    scope.post(INTERACTIONS_PATH, { config: { rateLimit: false } }, (request, reply) =>
      receive(request, reply, { endpoint, seen, refusals, suspects, logger }, now()),
    );
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

async function receive(
  request: FastifyRequest,
  reply: FastifyReply,
  { endpoint, seen, refusals, suspects, logger }: Receiver,
  now: number,
): Promise<FastifyReply> {
  // A client that keeps sending what Discord never sends is turned away before any curve arithmetic.
  const wait =
    suspects.size > 0 && suspects.has(clientKey(request)) ? await refusals.wait(request) : undefined;
  if (wait !== undefined) {
    reply.header('retry-after', String(wait));
    return sendJson(reply, 429, { error: 'too many refused deliveries' });
  }
  const refuse = async (reason: string) => {
    suspects.set(clientKey(request), true);
    await refusals.count(request);
    logger.warn(
      { route: INTERACTIONS_PATH, refusal: reason, client: request.ip },
      'interaction delivery refused',
    );
    return sendJson(reply, 401, { error: 'invalid request signature' });
  };
  const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
  const signature = header(request, 'x-signature-ed25519');
  const check = checkDiscordSignature({
    publicKey: endpoint.publicKey,
    signature,
    timestamp: header(request, 'x-signature-timestamp'),
    body,
    now,
  });
  if (check !== 'ok') return refuse(check);
  const raw = parseJson(body);
  const envelope = Envelope.safeParse(raw);
  if (!envelope.success) return sendJson(reply, 400, { error: 'malformed interaction' });
  if (envelope.data.application_id !== endpoint.applicationId) return refuse('other_application');
  // A captured delivery sent again within the window acts once.
  if (!seen.firstSighting(signature ?? '', now)) return refuse('replayed');
  const interaction = raw as APIInteraction;
  if (interaction.type === InteractionType.Ping)
    return sendJson(reply, 200, { type: InteractionResponseType.Pong });

  let firstSent: () => void = () => {};
  const sent = new Promise<void>((resolve) => {
    firstSent = resolve;
  });
  const responder = new Responder(endpoint.rest, interaction, async (response) => {
    reply.code(200).header('content-type', 'application/json').send(response);
    firstSent();
  });
  // The router never rejects and always answers first; should it end without an answer, Discord is told.
  void endpoint
    .dispatch(interaction, responder)
    .catch((error: unknown) => logger.error({ err: errorSummary(error) }, 'interaction dispatch failed'))
    .finally(() => {
      if (!reply.sent) {
        sendJson(reply, 500, { error: 'no answer' });
        firstSent();
      }
    });
  await sent;
  return reply;
}
