/**
 * The body reader of the routes that receive Discord's signed POSTs (`/interactions`, the webhook
 * events), after deliveryGate.ts admitted the headers: it takes each chunk's bytes from the request's
 * share of the bytes in flight as the chunk arrives (past the client's share or the process's, 503 with
 * Retry-After), stops at the route's body limit (413), and gives the whole body DELIVERY_BODY_TIMEOUT_MS
 * to arrive: Discord sends it at once, so one that does not come in time is refused (408) and counted
 * against the client like a bad signature, toward its lock-out. Each of these answers closes the
 * connection (issue #33: one address stalling 32 uploads held the whole budget, uncounted).
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Deadline, DeadlineQueue } from '../discord/deadlineQueue.ts';
import {
  BUSY_RETRY_AFTER_SECONDS,
  bodyBytesOf,
  countRefusal,
  type DeliveryGateOptions,
  fullBudgetWarning,
} from './deliveryGate.ts';
import { sendJson } from './responses.ts';

/** A body refused while it was being read: answered by the app's error handler, the connection closed. */
export class UnreadBody extends Error {
  readonly statusCode: 400 | 408 | 413 | 503;
  readonly body: { error: string };

  constructor(statusCode: 400 | 408 | 413 | 503, error: string) {
    super(error);
    this.statusCode = statusCode;
    this.body = { error };
  }

  /** The answer: the status and body, Retry-After when busy, and the connection closed. */
  answer(reply: FastifyReply): FastifyReply {
    reply.header('connection', 'close');
    if (this.statusCode === 503) reply.header('retry-after', String(BUSY_RETRY_AFTER_SECONDS));
    return sendJson(reply, this.statusCode, this.body);
  }
}

type Done = (error: Error | null, body?: Buffer) => void;

/** The content-type parser of a signed route (its raw body, as sent, for the signature check). */
export function signedBodyReader(o: DeliveryGateOptions) {
  const warnFull = fullBudgetWarning(o);
  // One timer for every body this route is reading (they share the timeout), not one per request.
  const deadlines = new DeadlineQueue(o.bodyTimeoutMs);
  return (request: FastifyRequest, payload: IncomingMessage, done: Done): void => {
    const bytes = bodyBytesOf(request);
    const chunks: Buffer[] = [];
    let received = 0;
    let finished = false;
    const deadline: Deadline = {
      at: 0,
      expire: () => {
        if (finished) return;
        finished = true;
        payload.pause();
        chunks.length = 0;
        // Counted before the answer, so the client's next request already meets its count.
        countRefusal(request, o, 'body_timeout')
          .catch(() => {})
          .finally(() => done(new UnreadBody(408, 'request body not received in time')));
      },
    };
    const finish = (error: Error | null) => {
      if (finished) return;
      finished = true;
      deadlines.delete(deadline);
      if (error === null) return done(null, Buffer.concat(chunks, received));
      // Read no more of a refused body while its answer goes out (Node drains the rest once it has).
      payload.pause();
      chunks.length = 0;
      done(error);
    };
    deadlines.add(deadline);
    payload.on('data', (chunk: Buffer) => {
      if (finished) return;
      received += chunk.length;
      if (received > o.bodyLimit) finish(new UnreadBody(413, 'request body too large'));
      else if (bytes.take(chunk.length)) chunks.push(chunk);
      else {
        warnFull(request);
        finish(new UnreadBody(503, 'busy'));
      }
    });
    payload.on('end', () => finish(null));
    // The client went before its body was in: there is no one to answer, and nothing to count. ('close'
    // comes after every body too: the error is made only when it is needed, as making one costs a stack.
    // 'end' and 'close' come once, and `finish` acts once: `on`, as `once` wraps each listener.)
    const gone = () => {
      if (!finished) finish(new UnreadBody(400, 'request closed before its body was read'));
    };
    payload.on('error', gone);
    payload.on('close', gone);
  };
}
