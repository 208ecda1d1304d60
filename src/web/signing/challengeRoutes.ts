/**
 * The challenge routes the signing page and the Linked Roles page share: the exact message to sign, and
 * the signature, with the same checks in the same order (cheap ones before any body or chain-node work),
 * the same per-client and per-challenge refusal limits, and the same answers.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  buildChallengeMessage,
  isChallengeNonce,
  isLinkedRoleChallenge,
  isSolanaChallenge,
  type NonceRecord,
  type NonceStore,
  restartHint,
  type SiweConfig,
  siwsFields,
  type VerifyFailureReason,
  verifyChallenge,
  verifyFailureMessage,
} from '../../gating/proofs/siwe.ts';
import { readBody, sendJson } from '../responses.ts';

/** The subset of a pino logger the pages use. */
export interface PageLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/** A JSON answer: status and body. */
export interface JsonAnswer {
  status: number;
  body: { ok: boolean; message: string } & Record<string, unknown>;
}

/** Counts refused attempts per client address in a sliding window (in memory, per process). */
export class FailureWindow {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #hits = new Map<string, number[]>();
  constructor(limit: number, windowMs: number) {
    this.#limit = limit;
    this.#windowMs = windowMs;
  }
  blocked(client: string, now: number): boolean {
    return this.#recent(client, now).length >= this.#limit;
  }
  count(client: string, now: number): void {
    const hits = this.#recent(client, now);
    hits.push(now);
    this.#hits.set(client, hits);
    if (this.#hits.size > 10_000) this.#hits.delete(this.#hits.keys().next().value ?? '');
  }
  #recent(client: string, now: number): number[] {
    return (this.#hits.get(client) ?? []).filter((t) => now - t < this.#windowMs);
  }
}

export interface SignatureRoutesOptions {
  store: NonceStore;
  siwe: SiweConfig;
  log: PageLogger;
  /** Refused signatures per client address. */
  failures: FailureWindow;
  /** Refused signatures per challenge before it is burned. */
  maxFailuresPerChallenge: number;
  /** Which challenges these routes serve: the Linked Roles page's (true) or `/verify`'s. */
  linkedRoles: boolean;
  /** Undefined when this browser may use the challenge; otherwise the answer refusing it. */
  refuse(req: IncomingMessage, record: NonceRecord): JsonAnswer | undefined;
}

/** Refusals the store counts against a challenge: a wrong or forged signature, not a page reload. */
const COUNTED_FAILURES = new Set<VerifyFailureReason>([
  'tampered',
  'wrong_domain',
  'wrong_address',
  'bad_signature',
  'malformed',
]);

const STATUS_BY_REASON: Record<VerifyFailureReason, number> = {
  unknown_nonce: 404,
  expired: 410,
  used: 410,
  malformed: 400,
  tampered: 422,
  wrong_domain: 422,
  wrong_address: 422,
  bad_signature: 422,
};

const MAX_BODY_BYTES = 8 * 1024;
const SIGNATURE_SHAPE = /^0x[0-9a-fA-F]+$/;

/** The challenge behind a link if it can still be signed here, else why not. */
export async function openChallenge(
  o: Pick<SignatureRoutesOptions, 'store' | 'siwe' | 'linkedRoles'>,
  nonce: string,
): Promise<{ record: NonceRecord } | { refusal: 'unknown_nonce' | 'used' | 'expired' }> {
  const record = isChallengeNonce(nonce) ? await o.store.getNonce(nonce) : undefined;
  if (!record || isLinkedRoleChallenge(record) !== o.linkedRoles) return { refusal: 'unknown_nonce' };
  if (record.usedAt !== null) return { refusal: 'used' };
  if (record.expiresAt <= (o.siwe.now ?? Date.now)()) return { refusal: 'expired' };
  return { record };
}

/** `GET …/{nonce}/message`: the exact text to sign (and the `solana:signIn` fields for Solana). */
export async function sendChallengeMessage(
  o: SignatureRoutesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  nonce: string,
): Promise<void> {
  const challenge = await openChallenge(o, nonce);
  if (!('record' in challenge)) return sendFailure(o, res, challenge.refusal);
  const refused = o.refuse(req, challenge.record);
  if (refused) return sendJson(res, refused.status, refused.body);
  const record = challenge.record;
  sendJson(res, 200, {
    message: buildChallengeMessage(o.siwe, record),
    ...(isSolanaChallenge(record) ? { signIn: siwsFields(o.siwe, record) } : {}),
  });
}

/**
 * `POST …/{nonce}` with `{ signature, message? }`: verified, and only when valid the nonce is consumed
 * and `complete` decides the answer (it may still refuse). Refused signatures count against the client
 * and the challenge.
 */
export async function receiveSignature(
  o: SignatureRoutesOptions,
  req: IncomingMessage,
  res: ServerResponse,
  nonce: string,
  complete: (result: { record: NonceRecord; address: string }) => Promise<JsonAnswer>,
): Promise<void> {
  // Cheap checks first: the client's refusal count and the nonce's shape, before any body or RPC work.
  const client = req.socket.remoteAddress ?? 'unknown';
  const now = (o.siwe.now ?? Date.now)();
  if (o.failures.blocked(client, now)) {
    req.resume();
    res.setHeader('retry-after', '600');
    return sendJson(res, 429, {
      ok: false,
      reason: 'too_many_attempts',
      message: 'Too many refused signatures from this address. Wait a few minutes, then try again.',
    });
  }
  if (!isChallengeNonce(nonce)) {
    req.resume();
    return sendFailure(o, res, 'unknown_nonce');
  }
  const contentType = req.headers['content-type'] ?? '';
  if (!/^application\/json\s*(;|$)/i.test(contentType)) {
    req.resume();
    return sendJson(res, 415, { ok: false, reason: 'malformed', message: 'Send JSON.' });
  }
  const raw = (await readBody(req, MAX_BODY_BYTES))?.toString('utf8');
  if (raw === undefined) {
    res.setHeader('connection', 'close');
    return sendJson(res, 413, { ok: false, reason: 'malformed', message: 'The request is too large.' });
  }
  const body = parseSignatureBody(raw);
  if (!body) return sendFailure(o, res, 'malformed');
  const open = await openChallenge(o, nonce);
  const refused = 'record' in open ? o.refuse(req, open.record) : undefined;
  if (refused) {
    o.log.warn({ nonce: nonce.slice(0, 8), client }, 'signature sent from a browser that may not use it');
    return sendJson(res, refused.status, refused.body);
  }

  const outcome = await verifyChallenge(o.store, o.siwe, { nonce, ...body, linkedRoles: o.linkedRoles });
  const logFields = { nonce: nonce.slice(0, 8), signature: shorten(body.signature) };
  if (!outcome.ok) {
    o.log.info({ ...logFields, reason: outcome.reason, client }, 'wallet signature refused');
    if (COUNTED_FAILURES.has(outcome.reason)) {
      o.failures.count(client, now);
      const attempts = await o.store.countFailedAttempt(nonce, o.maxFailuresPerChallenge, now);
      if (attempts !== undefined && attempts >= o.maxFailuresPerChallenge) {
        o.log.warn({ ...logFields, attempts }, 'challenge burned after too many refused signatures');
        return sendJson(res, 410, {
          ok: false,
          reason: 'used',
          message: `${outcome.message} This link is now used up after ${attempts} refused signatures. ${restartHint(o.linkedRoles)} for a new one.`,
        });
      }
    }
    return sendJson(res, STATUS_BY_REASON[outcome.reason], {
      ok: false,
      reason: outcome.reason,
      message: outcome.message,
    });
  }

  const { record, address } = outcome;
  o.log.info({ ...logFields, guildId: record.guildId, userId: record.userId }, 'wallet signature verified');
  let answer: JsonAnswer;
  try {
    answer = await complete({ record, address });
  } catch (error) {
    o.log.error({ ...logFields, err: errorSummary(error) }, 'completing a valid signature failed');
    answer = {
      status: 500,
      body: {
        ok: false,
        reason: 'internal',
        message: `Your signature was valid, but linking failed on our side. ${restartHint(o.linkedRoles)} to try again.`,
      },
    };
  }
  sendJson(res, answer.status, answer.body);
}

function parseSignatureBody(raw: string): { signature: `0x${string}`; message?: string } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const { signature, message } = parsed as Record<string, unknown>;
  if (typeof signature !== 'string' || !SIGNATURE_SHAPE.test(signature)) return undefined;
  if (message !== undefined && typeof message !== 'string') return undefined;
  return message === undefined
    ? { signature: signature as `0x${string}` }
    : { signature: signature as `0x${string}`, message };
}

function sendFailure(
  o: Pick<SignatureRoutesOptions, 'linkedRoles'>,
  res: ServerResponse,
  reason: VerifyFailureReason,
): void {
  sendJson(res, STATUS_BY_REASON[reason], {
    ok: false,
    reason,
    message: verifyFailureMessage(reason, o.linkedRoles),
  });
}

/** Enough of a signature to correlate log lines, never the whole thing. */
function shorten(signature: string): string {
  return `${signature.slice(0, 10)}…(${signature.length} chars)`;
}

export function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error
    ? { name: error.name, message: error.message.slice(0, 200) }
    : { name: 'unknown', message: String(error).slice(0, 200) };
}
