/**
 * What the routes that receive Discord's signed POSTs (`/interactions`, the webhook events) check before
 * a byte of the body is read, in an onRequest hook: a client refused too often lately is turned away
 * (429); the signature headers must be present and well-formed and the timestamp within the window
 * (else 401, counted against the client); the declared length must fit the route's body limit (413);
 * and the body must fit in what the client and this process may still have in flight (503 with
 * Retry-After). Each of these answers closes the connection, so the body is never waited for. What is
 * admitted is read by signedBody.ts, which takes the bytes as they arrive and gives the body a deadline.
 */
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { LRUCache } from 'lru-cache';
import { growingLru } from '../cache/growingLru.ts';
import { checkSignatureHeaders, header } from './discordSignature.ts';
import { clientKey, type RefusalCounter } from './limits.ts';
import { sendJson, type WebLogger } from './responses.ts';
import type { DeliveryLedger } from './seenDeliveries.ts';

/**
 * Bytes of request bodies this process holds on the routes that read signed bodies: about 5,000 ordinary
 * interactions (3 KiB each), or 32 bodies at the interaction limit. Slow uploads past it are refused
 * instead of held: 300 of them at 1 MiB each held 301 MiB before (issue #26).
 */
export const MAX_BYTES_IN_FLIGHT = 16 * 1024 * 1024;
/**
 * What one client (an address, IPv6 by its /64; a forwarded client behind TRUST_PROXY) may hold of it:
 * an eighth, four bodies at the interaction limit or about 680 ordinary interactions at once. One address
 * stalling 32 uploads held the whole budget before, and every delivery of Discord's got 503 (issue #33).
 */
export const DEFAULT_BYTES_PER_CLIENT = 2 * 1024 * 1024;
/** What a refusal for a full budget asks the sender to wait, s. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** One request's share of the budget: it grows as the body arrives. */
export interface BodyBytes {
  /** Reserves `bytes` more for this request; false (nothing reserved) when the client or the process is full. */
  take(bytes: number): boolean;
}

/**
 * The bytes in flight, per process and per client, given back when a request's response is finished or
 * its connection closes. The process's budget counts the bytes that arrived, not what was declared, so a
 * request that sends nothing holds none of it. A client's share counts what its requests declared (or
 * what arrived, when more): its stalled requests then fill only its own share, and a flood of them is
 * refused at its headers, unread, rather than admitted and read a chunk each (which cost a replica 31 to
 * 41 MiB more RSS under the 300-upload floods of the benchmark).
 */
export class BytesInFlight {
  readonly #max: number;
  readonly #perClient: number;
  readonly #byClient = new Map<string, number>();
  #held = 0;

  constructor(max = MAX_BYTES_IN_FLIGHT, perClient = DEFAULT_BYTES_PER_CLIENT) {
    this.#max = max;
    this.#perClient = Math.min(perClient, max);
  }

  /** Whether a body of `bytes` would fit now, in `client`'s share and in the process's budget (nothing reserved). */
  fits(client: string, bytes: number): boolean {
    return this.#held + bytes <= this.#max && this.heldBy(client) + bytes <= this.#perClient;
  }

  /**
   * The reservation of one request of `client`'s that declared `declared` bytes (0 when chunked): counted
   * against the client's share at once, against the process's as the body arrives; given back once
   * `reply` closes ('close' comes once: `on`, which costs less than `once`'s wrapper).
   */
  open(client: string, reply: FastifyReply, declared: number): BodyBytes {
    let claimed = declared;
    let received = 0;
    let open = true;
    this.#claim(client, declared);
    reply.raw.on('close', () => {
      open = false;
      this.#held -= received;
      this.#claim(client, -claimed);
    });
    return {
      take: (bytes) => {
        if (!open || this.#held + bytes > this.#max) return false;
        const more = Math.max(0, received + bytes - claimed);
        if (more > 0 && this.heldBy(client) + more > this.#perClient) return false;
        received += bytes;
        this.#held += bytes;
        claimed += more;
        this.#claim(client, more);
        return true;
      },
    };
  }

  #claim(client: string, bytes: number): void {
    if (bytes === 0) return;
    const now = this.heldBy(client) + bytes;
    if (now <= 0) this.#byClient.delete(client);
    else this.#byClient.set(client, now);
  }

  /** Bytes of bodies that arrived and are held now. */
  get held(): number {
    return this.#held;
  }

  /** Bytes counted against `client`'s share now: what its open requests declared, or received when more. */
  heldBy(client: string): number {
    return this.#byClient.get(client) ?? 0;
  }
}

/**
 * What the web app lends the routes that receive Discord's signed POSTs, one of each per process: the
 * refusal count, the deliveries acted on, the bytes in flight, and how long a body may take.
 */
export interface DeliveryGuards {
  refusals: RefusalCounter;
  /** In this process, or shared through Redis (seenDeliveries.ts). */
  ledger: DeliveryLedger;
  budget: BytesInFlight;
  /** How long a body may take to arrive once its headers are in, ms (DELIVERY_BODY_TIMEOUT_MS). */
  bodyTimeoutMs: number;
}

/** DELIVERY_BODY_TIMEOUT_MS's default: Discord sends the whole body at once, and wants its answer within 3 s. */
export const DEFAULT_BODY_TIMEOUT_MS = 3_000;

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
  bodyTimeoutMs: number;
  refusals: RefusalCounter;
  suspects: Suspects;
  logger: WebLogger;
  /** The log line of a refused delivery. */
  refusedMessage: string;
  /** The 401's body. */
  refusedBody: unknown;
  now: () => number;
}

type RefusalOptions = Pick<
  DeliveryGateOptions,
  'route' | 'refusals' | 'suspects' | 'logger' | 'refusedMessage'
>;

/**
 * Logs a refused delivery and counts it against the client, so a client that keeps sending what Discord
 * never sends is soon turned away unchecked.
 */
export function countRefusal(request: FastifyRequest, o: RefusalOptions, reason: string): Promise<void> {
  o.suspects.set(clientKey(request), true);
  o.logger.warn({ route: o.route, refusal: reason, client: request.ip }, o.refusedMessage);
  return o.refusals.count(request);
}

/** A refused delivery: logged, counted against the client (`countRefusal`), and answered 401. */
export function refuseDelivery(
  request: FastifyRequest,
  reply: FastifyReply,
  o: RefusalOptions & Pick<DeliveryGateOptions, 'refusedBody'>,
  reason: string,
): void {
  countRefusal(request, o, reason)
    .then(() => sendJson(reply, 401, o.refusedBody))
    .catch((error: unknown) => void reply.send(error));
}

/** Each admitted request's share of the bytes in flight, which its body reader takes from (signedBody.ts). */
const bodyBytes = new WeakMap<FastifyRequest, BodyBytes>();

/** The share the gate opened for `request`; none (nothing may be read) when it did not admit it. */
export function bodyBytesOf(request: FastifyRequest): BodyBytes {
  return bodyBytes.get(request) ?? { take: () => false };
}

/** Logs, at most every 10 s, that bodies were refused for a full budget (the client's share or the process's). */
export function fullBudgetWarning(o: Pick<DeliveryGateOptions, 'route' | 'budget' | 'logger' | 'now'>) {
  let warnedAt = Number.NEGATIVE_INFINITY;
  return (request: FastifyRequest): void => {
    const now = o.now();
    if (now - warnedAt <= 10_000) return;
    warnedAt = now;
    o.logger.warn(
      {
        route: o.route,
        heldBytes: o.budget.held,
        client: request.ip,
        clientBytes: o.budget.heldBy(clientKey(request)),
      },
      "request bodies in flight at the cap (the client's share or the process's): refused with 503 meanwhile",
    );
  };
}

/** The busy answer (503 with Retry-After), its connection closed. */
export function busy(reply: FastifyReply): FastifyReply {
  return closing(reply).header('retry-after', String(BUSY_RETRY_AFTER_SECONDS));
}

/** The route's onRequest hook (see the module's doc). */
export function deliveryGate(o: DeliveryGateOptions): onRequestHookHandler {
  const warnFull = fullBudgetWarning(o);
  const admit = (request: FastifyRequest, reply: FastifyReply, done: () => void, client: string) => {
    const check = checkSignatureHeaders({
      signature: header(request, 'x-signature-ed25519'),
      timestamp: header(request, 'x-signature-timestamp'),
      now: o.now(),
    });
    if (check !== 'ok') {
      refuseDelivery(request, closing(reply), o, check);
      return;
    }
    const length = bodyLength(request);
    if (length > o.bodyLimit) {
      sendJson(closing(reply), 413, { error: 'request body too large' });
      return;
    }
    // A declared length that does not fit now is refused before it is read. What is admitted counts
    // against the client's share at once and against the process's as its bytes come (the body reader).
    if (!o.budget.fits(client, length)) {
      warnFull(request);
      sendJson(busy(reply), 503, { error: 'busy' });
      return;
    }
    bodyBytes.set(request, o.budget.open(client, reply, length));
    done();
  };
  return (request, reply, done) => {
    const client = clientKey(request);
    if (o.suspects.size === 0 || !o.suspects.has(client)) {
      admit(request, reply, done, client);
      return;
    }
    o.refusals
      .wait(request)
      .then((wait) => {
        if (wait === undefined) admit(request, reply, done, client);
        else
          sendJson(closing(reply).header('retry-after', String(wait)), 429, {
            error: 'too many refused deliveries',
          });
      })
      .catch((error: unknown) => void reply.send(error));
  };
}

/** The answer ends the connection: its unread body is not waited for. */
export function closing(reply: FastifyReply): FastifyReply {
  return reply.header('connection', 'close');
}

/**
 * The body's length as declared: Content-Length; with chunked transfer (no length said), nothing (the
 * body reader counts what comes against the limit); no body at all, 0. A malformed length counts as too
 * large.
 */
function bodyLength(request: FastifyRequest): number {
  const declared = request.headers['content-length'];
  if (declared === undefined) return 0;
  return /^\d{1,15}$/.test(declared) ? Number(declared) : Number.POSITIVE_INFINITY;
}
