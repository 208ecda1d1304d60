/**
 * The challenge routes the signing page and the Linked Roles page share: the exact message to sign, and
 * the signature, with the same checks in the same order (cheap ones before any chain-node work), the
 * same per-challenge refusal limit, and the same answers. Per-client limits are the routes' (limits.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  buildChallengeMessage,
  isLinkedRoleChallenge,
  isSolanaChallenge,
  type SiweConfig,
  siwsFields,
} from '../../gating/proofs/challengeMessage.ts';
import {
  isChallengeNonce,
  type NonceRecord,
  type NonceStore,
  type VerifyFailureDetail,
  type VerifyFailureReason,
  verifyChallenge,
} from '../../gating/proofs/siwe.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import { sendTooManyRefused, type WebLimiters } from '../limits.ts';
import { errorSummary, sendJson, type WebLogger } from '../responses.ts';

/** A JSON answer: status and body. */
export interface JsonAnswer {
  status: number;
  body: { ok: boolean; message: string } & Record<string, unknown>;
}

export interface SignatureRoutesOptions {
  store: NonceStore;
  siwe: SiweConfig;
  log: WebLogger;
  /** Refused signatures per client (the challenge's own count is the store's). */
  limits: Pick<WebLimiters, 'refusedWait' | 'countRefused'>;
  /** Refused signatures per challenge before it is burned. */
  maxFailuresPerChallenge: number;
  /** Which challenges these routes serve: the Linked Roles page's (true) or `/verify`'s. */
  linkedRoles: boolean;
  /** The language of the answers to this request. */
  localeOf(request: FastifyRequest): string;
  /** Undefined when this browser may use the challenge; otherwise the answer refusing it. */
  refuse(request: FastifyRequest, record: NonceRecord): JsonAnswer | undefined;
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

const MESSAGE_BY_REASON: Record<VerifyFailureReason, MessageKey> = {
  unknown_nonce: 'web.signature.unknownNonce',
  expired: 'web.signature.expired',
  used: 'web.signature.used',
  malformed: 'web.signature.malformed',
  tampered: 'web.signature.tampered',
  wrong_domain: 'web.signature.wrongDomain',
  wrong_address: 'web.signature.wrongAddress',
  bad_signature: 'web.signature.badSignature',
};

/** How long a challenge lasts, as its refusals say it. */
const CHALLENGE_MINUTES = 10;

/** What the member is told for a refusal, in `locale`; `linkedRoles` picks where to start again. */
export function refusalMessage(
  locale: string,
  reason: VerifyFailureReason,
  linkedRoles: boolean,
  detail?: VerifyFailureDetail,
): string {
  if (detail?.kind === 'chain_unavailable') return t(locale, 'web.signature.chainUnavailable');
  if (detail?.kind === 'signed_by')
    return t(locale, 'web.signature.signedBy', { signer: detail.signer, expected: detail.expected });
  return t(locale, MESSAGE_BY_REASON[reason], {
    linkedRoles: String(linkedRoles),
    minutes: CHALLENGE_MINUTES,
  });
}

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
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const challenge = await openChallenge(o, nonce);
  if (!('record' in challenge)) return sendFailure(o, request, reply, challenge.refusal);
  const refused = o.refuse(request, challenge.record);
  if (refused) return sendJson(reply, refused.status, refused.body);
  const record = challenge.record;
  return sendJson(reply, 200, {
    message: buildChallengeMessage(o.siwe, record),
    ...(isSolanaChallenge(record) ? { signIn: siwsFields(o.siwe, record) } : {}),
  });
}

/**
 * `POST …/{nonce}` with `{ signature, message? }` (the raw JSON text as the body): verified, and only
 * when valid the nonce is consumed and `complete` decides the answer (it may still refuse). Refused
 * signatures count against the challenge.
 */
export async function receiveSignature(
  o: SignatureRoutesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
  complete: (result: { record: NonceRecord; address: string }) => Promise<JsonAnswer>,
): Promise<FastifyReply> {
  // Cheap checks first: the client's refusal count and the nonce's shape, before any chain-node work.
  const client = request.ip;
  const now = (o.siwe.now ?? Date.now)();
  const locale = o.localeOf(request);
  const wait = await o.limits.refusedWait(request);
  if (wait !== undefined) return sendTooManyRefused(reply, wait, locale);
  if (!isChallengeNonce(nonce)) return sendFailure(o, request, reply, 'unknown_nonce');
  if (!/^application\/json\s*(;|$)/i.test(request.headers['content-type'] ?? ''))
    return sendJson(reply, 415, {
      ok: false,
      reason: 'malformed',
      message: t(locale, 'web.signature.sendJson'),
    });
  const body = typeof request.body === 'string' ? parseSignatureBody(request.body) : undefined;
  if (!body) return sendFailure(o, request, reply, 'malformed');
  const open = await openChallenge(o, nonce);
  const refused = 'record' in open ? o.refuse(request, open.record) : undefined;
  if (refused) {
    o.log.warn({ nonce: nonce.slice(0, 8), client }, 'signature sent from a browser that may not use it');
    return sendJson(reply, refused.status, refused.body);
  }

  const outcome = await verifyChallenge(o.store, o.siwe, { nonce, ...body, linkedRoles: o.linkedRoles });
  const logFields = { nonce: nonce.slice(0, 8), signature: shorten(body.signature) };
  if (!outcome.ok) {
    const refusal = refusalMessage(locale, outcome.reason, o.linkedRoles, outcome.detail);
    o.log.info({ ...logFields, reason: outcome.reason, client }, 'wallet signature refused');
    if (COUNTED_FAILURES.has(outcome.reason)) {
      await o.limits.countRefused(request);
      const attempts = await o.store.countFailedAttempt(nonce, o.maxFailuresPerChallenge, now);
      if (attempts !== undefined && attempts >= o.maxFailuresPerChallenge) {
        o.log.warn({ ...logFields, attempts }, 'challenge burned after too many refused signatures');
        return sendJson(reply, 410, {
          ok: false,
          reason: 'used',
          message: t(locale, 'web.signature.burned', {
            refusal,
            attempts,
            linkedRoles: String(o.linkedRoles),
          }),
        });
      }
    }
    return sendJson(reply, STATUS_BY_REASON[outcome.reason], {
      ok: false,
      reason: outcome.reason,
      message: refusal,
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
        message: t(locale, 'web.signature.internal', { linkedRoles: String(o.linkedRoles) }),
      },
    };
  }
  return sendJson(reply, answer.status, answer.body);
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
  o: Pick<SignatureRoutesOptions, 'linkedRoles' | 'localeOf'>,
  request: FastifyRequest,
  reply: FastifyReply,
  reason: VerifyFailureReason,
): FastifyReply {
  return sendJson(reply, STATUS_BY_REASON[reason], {
    ok: false,
    reason,
    message: refusalMessage(o.localeOf(request), reason, o.linkedRoles),
  });
}

/** Enough of a signature to correlate log lines, never the whole thing. */
function shorten(signature: string): string {
  return `${signature.slice(0, 10)}…(${signature.length} chars)`;
}
