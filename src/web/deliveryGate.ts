/**
 * What the routes that receive Discord's signed POSTs (`/interactions`, the webhook events) check before
 * a byte of the body is read, in an onRequest hook: a client refused too often lately is turned away
 * (429); the signature headers must be present and well-formed and the timestamp within the window
 * (else 401, counted against the client); the declared length must fit the route's body limit (413);
 * and the body must fit in what this process lets be in flight at once (503 with Retry-After). Each of
 * these answers closes the connection, so the body is never waited for.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { LRUCache } from 'lru-cache';
import { growingLru } from '../cache/growingLru.ts';
import { checkSignatureHeaders, header } from './discordSignature.ts';
import { clientKey, type RefusalCounter } from './limits.ts';
import { sendJson, type WebLogger } from './responses.ts';
import type { DeliveryLedger } from './seenDeliveries.ts';

/**
 * Bytes of request bodies this process holds (or is about to) on the routes that read signed bodies:
 * about 5,000 ordinary interactions (3 KiB each), or 32 bodies at the interaction limit. Slow uploads
 * past it are refused instead of held: 300 of them at 1 MiB each held 301 MiB before (issue #26).
 */
export const MAX_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/** What a refusal for a full budget asks the sender to wait, s. */
const BUSY_RETRY_AFTER_SECONDS = 1;

/** The bytes in flight: reserved for a request's declared length before its body is read, released when it ends. */
export class BytesInFlight {
  readonly #max: number;
  #held = 0;

  constructor(max = MAX_BYTES_IN_FLIGHT) {
    this.#max = max;
  }

  /**
   * Reserves `bytes` for this request until its response is finished or its connection closes; false
   * (nothing reserved) when that would pass the cap.
   */
  reserve(reply: FastifyReply, bytes: number): boolean {
    if (bytes === 0) return true;
    if (this.#held + bytes > this.#max) return false;
    this.#held += bytes;
    // 'close' comes once, when the response is done or the socket went first.
    reply.raw.once('close', () => {
      this.#held -= bytes;
    });
    return true;
  }

  /** Bytes reserved now. */
  get held(): number {
    return this.#held;
  }
}

/**
 * What the web app lends the routes that receive Discord's signed POSTs, one of each per process: the
 * refusal count, the deliveries acted on, the bytes in flight.
 */
export interface DeliveryGuards {
  refusals: RefusalCounter;
  /** In this process, or shared through Redis (seenDeliveries.ts). */
  ledger: DeliveryLedger;
  budget: BytesInFlight;
}

/** The clients whose deliveries were refused lately: only theirs pay the refusal count's lookup (Redis with REDIS_URL). */
export type Suspects = LRUCache<string, true>;

export function suspectList(): Suspects {
  return growingLru<string, true>({ maxEntries: 10_000, ttl: 60_000 });
}

export interface DeliveryGateOptions {
  /** For logs. */
  route: string;
  /** The largest body the route reads. */
  bodyLimit: number;
  budget: BytesInFlight;
  refusals: RefusalCounter;
  suspects: Suspects;
  logger: WebLogger;
  /** The log line of a refused delivery. */
  refusedMessage: string;
  /** The 401's body. */
  refusedBody: unknown;
  now: () => number;
}

/**
 * A refused delivery: logged, counted against the client (so a client that keeps sending what Discord
 * never sends is soon turned away unchecked), and answered 401.
 */
export function refuseDelivery(
  request: FastifyRequest,
  reply: FastifyReply,
  o: Pick<
    DeliveryGateOptions,
    'route' | 'refusals' | 'suspects' | 'logger' | 'refusedMessage' | 'refusedBody'
  >,
  reason: string,
): void {
  o.suspects.set(clientKey(request), true);
  o.logger.warn({ route: o.route, refusal: reason, client: request.ip }, o.refusedMessage);
  o.refusals
    .count(request)
    .then(() => sendJson(reply, 401, o.refusedBody))
    .catch((error: unknown) => void reply.send(error));
}

/** The route's onRequest hook (see the module's doc). */
export function deliveryGate(o: DeliveryGateOptions): onRequestHookHandler {
  let warnedFullAt = Number.NEGATIVE_INFINITY;
  const admit = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
    const now = o.now();
    const check = checkSignatureHeaders({
      signature: header(request, 'x-signature-ed25519'),
      timestamp: header(request, 'x-signature-timestamp'),
      now,
    });
    if (check !== 'ok') {
      refuseDelivery(request, closing(reply), o, check);
      return;
    }
    const length = bodyLength(request, o.bodyLimit);
    if (length > o.bodyLimit) {
      sendJson(closing(reply), 413, { error: 'request body too large' });
      return;
    }
    if (!o.budget.reserve(reply, length)) {
      if (now - warnedFullAt > 10_000) {
        warnedFullAt = now;
        o.logger.warn(
          { route: o.route, heldBytes: o.budget.held },
          'request bodies in flight at the cap: deliveries refused with 503 meanwhile',
        );
      }
      sendJson(closing(reply).header('retry-after', String(BUSY_RETRY_AFTER_SECONDS)), 503, {
        error: 'busy',
      });
      return;
    }
    done();
  };
  return (request, reply, done) => {
    if (o.suspects.size === 0 || !o.suspects.has(clientKey(request))) {
      admit(request, reply, done);
      return;
    }
    o.refusals
      .wait(request)
      .then((wait) => {
        if (wait === undefined) admit(request, reply, done);
        else
          sendJson(closing(reply).header('retry-after', String(wait)), 429, {
            error: 'too many refused deliveries',
          });
      })
      .catch((error: unknown) => void reply.send(error));
  };
}

/** The answer ends the connection: its unread body is not waited for. */
function closing(reply: FastifyReply): FastifyReply {
  return reply.header('connection', 'close');
}

/**
 * The body's length as declared: Content-Length; with chunked transfer (no length said), the whole limit,
 * which the body parser then enforces; no body at all, 0. A malformed length counts as too large.
 */
function bodyLength(request: FastifyRequest, limit: number): number {
  const declared = request.headers['content-length'];
  if (declared === undefined) return request.headers['transfer-encoding'] === undefined ? 0 : limit;
  return /^\d{1,15}$/.test(declared) ? Number(declared) : Number.POSITIVE_INFINITY;
}
