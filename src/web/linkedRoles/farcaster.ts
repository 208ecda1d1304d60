/**
 * Sign in with Farcaster on the Linked Roles page: for a Farcaster name or FID, a flow for Linked Roles
 * (every server) bound to this page's session, served at `/linked-role/farcaster/{nonce}` with the same
 * page as `/verify`'s; only the browser (and Discord account) that asked for it may see, start or finish
 * it. The flow keeps the session's grant sealed, and the server connects an approved flow itself
 * (`connectApprovedFlow`, as `/verify`'s are finished: when its watch or any page's read sees the
 * approval), exactly as a wallet signature is: the FID (`farcaster,#<fid>`) and its signer. The page
 * then only shows what it came to.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  connectApprovedFlow,
  type FlowConnection,
  flowConnectionOf,
  sealFlowGrant,
} from '../../gating/linkedRoles/farcasterConnections.ts';
import { LINKED_ROLES_SCOPE } from '../../gating/proofs/challengeMessage.ts';
import {
  createFarcasterFlow,
  type FarcasterSignIns,
  fidIdentity,
  fidOf,
} from '../../gating/proofs/farcasterSignIn.ts';
import type { UncountedCredential } from '../../gating/rules/credentialSubjects.ts';
import type { FarcasterFlow } from '../../store/types.ts';
import type { ParsedIdentity } from '../../web3bio/identity.ts';
import { type PageNotes, sendFarcasterPage } from '../farcaster/routes.ts';
import { pageState } from '../pages/farcasterPage.ts';
import { failed, type ProveProblem, sendLinkedRolePage, startPath } from '../pages/linkedRolePage.ts';
import { redirect, refuseOtherMethods, sendJson } from '../responses.ts';
import { type LinkedRolePagesOptions, proofFreshness } from './options.ts';
import { type LinkedRoleSession, readSession, sessionLocale, writeSession } from './session.ts';

/**
 * After "Sign in with Farcaster": a flow for the identity's FID, kept in the session, and the browser sent
 * to its page. Returns the problem instead when the identity is not a Farcaster account Web3.bio knows.
 */
export async function startFarcaster(
  o: LinkedRolePagesOptions,
  signIns: FarcasterSignIns,
  request: FastifyRequest,
  reply: FastifyReply,
  session: LinkedRoleSession,
  parsed: ParsedIdentity,
): Promise<ProveProblem | undefined> {
  if (parsed.kind !== 'farcaster' && parsed.kind !== 'farcaster-fid') return 'not_farcaster';
  const read = await o.evaluator.readRecord(parsed, await proofFreshness(o, request, session.userId));
  if (read.failed) return 'lookup_failed';
  const fid = fidOf(read.profiles.find((p) => p.platform === 'farcaster')?.social?.uid);
  if (fid === null || (parsed.kind === 'farcaster-fid' && parsed.identity !== fidIdentity(fid)))
    return 'not_farcaster';
  const flow = await createFarcasterFlow(signIns.store, o.siwe, {
    guildId: LINKED_ROLES_SCOPE,
    userId: session.userId,
    userName: session.username,
    guildName: null,
    identity: parsed.identity,
    fid,
    sealGrant: (nonce) => sealFlowGrant(o.key, session.grant, { nonce, userId: session.userId }),
  });
  writeSession(o, reply, {
    ...session,
    farcaster: flow.nonce,
    until: Math.max(session.until, flow.expiresAt),
  });
  o.logger.info(
    { userId: session.userId, nonce: flow.nonce.slice(0, 8) },
    'linked role: farcaster sign-in made',
  );
  redirect(reply, pagePath(o, flow.nonce));
  return undefined;
}

interface NonceParams {
  nonce: string;
}

export function registerLinkedRoleFarcaster(
  app: FastifyInstance,
  o: LinkedRolePagesOptions,
  signIns: FarcasterSignIns,
): void {
  const base = '/linked-role/farcaster/:nonce';
  const connections = { service: o.service, store: signIns.store, key: o.key, logger: o.logger, now: o.now };
  signIns.handleApprovals('linked-role', (flow) => connectApprovedFlow(connections, flow));
  app.get<{ Params: NonceParams }>(base, (request, reply) =>
    page(o, signIns, request, reply, request.params.nonce),
  );
  app.post<{ Params: NonceParams }>(`${base}/start`, { bodyLimit: 1_024 }, async (request, reply) => {
    const gate = await gated(o, signIns, request, request.params.nonce);
    if ('refused' in gate) return gate.refused(reply);
    const wait = await o.limits.farcasterStarts(request);
    if (wait !== undefined) {
      reply.header('retry-after', String(wait));
      return sendPage(o, signIns, request, reply, 429, gate.flow, { slowDownSeconds: wait });
    }
    const started = await signIns.start(gate.flow);
    if ('flow' in started) return redirect(reply, pagePath(o, gate.flow.nonce));
    const now = (await signIns.flow(gate.flow.nonce)) ?? gate.flow;
    return sendPage(o, signIns, request, reply, started.problem === 'relay_unavailable' ? 502 : 409, now, {
      relayDownStart: started.problem === 'relay_unavailable',
    });
  });
  app.get<{ Params: NonceParams }>(`${base}/status`, async (request, reply) => {
    const gate = await gated(o, signIns, request, request.params.nonce);
    if ('refused' in gate) return sendJson(reply, 401, { ok: false, state: 'other_account' });
    const view = await signIns.view(gate.flow.nonce);
    if (!view) return sendJson(reply, 410, { ok: false, state: 'expired' });
    return sendJson(reply, 200, { ok: true, state: pageState(view.flow, view.relayDown) });
  });
  refuseOtherMethods(app, base, 'GET, HEAD');
  refuseOtherMethods(app, `${base}/start`, 'POST');
  refuseOtherMethods(app, `${base}/status`, 'GET, HEAD');
}

function pagePath(o: LinkedRolePagesOptions, nonce: string): string {
  return `${startPath(o.oauth.publicUrl)}/farcaster/${nonce}`;
}

/** The flow, when this browser's session made it for its account; else the refusal to send. */
async function gated(
  o: LinkedRolePagesOptions,
  signIns: FarcasterSignIns,
  request: FastifyRequest,
  nonce: string,
): Promise<
  { flow: FarcasterFlow; session: LinkedRoleSession } | { refused: (reply: FastifyReply) => FastifyReply }
> {
  const session = readSession(o, request);
  const locale = sessionLocale(request, session);
  const flow = await signIns.flow(nonce);
  if (!flow || flow.guildId !== LINKED_ROLES_SCOPE)
    return { refused: (reply) => failed(o.oauth.publicUrl, reply, 410, 'link_expired', locale) };
  if (!session || session.farcaster !== nonce || session.userId !== flow.userId) {
    o.logger.warn(
      { nonce: nonce.slice(0, 8), linkUserId: flow.userId, signedInUserId: session?.userId ?? null },
      'linked role farcaster sign-in opened by another browser or account: refused',
    );
    return { refused: (reply) => failed(o.oauth.publicUrl, reply, 403, 'other_account', locale) };
  }
  return { flow, session };
}

async function page(
  o: LinkedRolePagesOptions,
  signIns: FarcasterSignIns,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const gate = await gated(o, signIns, request, nonce);
  if ('refused' in gate) return gate.refused(reply);
  const view = await signIns.view(nonce);
  if (!view)
    return failed(o.oauth.publicUrl, reply, 410, 'link_expired', sessionLocale(request, gate.session));
  const done = flowConnectionOf(view.flow);
  if (done) return finished(o, request, reply, gate.session, view.flow, done);
  return sendPage(o, signIns, request, reply, 200, view.flow, { relayDown: view.relayDown });
}

/** What the server's connection of the flow came to (on any load after it, the same page). */
function finished(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: LinkedRoleSession,
  flow: FarcasterFlow,
  done: FlowConnection,
): Promise<FastifyReply> | FastifyReply {
  const locale = sessionLocale(request, session);
  if (done.kind === 'refused') return failed(o.oauth.publicUrl, reply, 409, 'farcaster_taken', locale);
  if (done.kind === 'lookup_failed' || done.kind === 'pending')
    return failed(o.oauth.publicUrl, reply, 502, 'write_pending', locale);
  if (done.kind !== 'connected') return failed(o.oauth.publicUrl, reply, 502, 'failed', locale);
  // A flow connected before the outcome kept its uncounted credentials recorded none.
  const uncounted = Array.isArray(done.uncounted) ? (done.uncounted as unknown as UncountedCredential[]) : [];
  return connected(o, request, reply, session, flow, uncounted);
}

/** A connected flow: what Discord holds for the member now, and what does not count. */
async function connected(
  o: LinkedRolePagesOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  session: LinkedRoleSession,
  flow: FarcasterFlow,
  uncounted: UncountedCredential[],
): Promise<FastifyReply> {
  const locale = sessionLocale(request, session);
  const status = await o.service.status(session.userId);
  if (!status || status.identity !== fidIdentity(flow.fid) || status.releasedReason)
    return failed(o.oauth.publicUrl, reply, 410, 'link_used', locale);
  return sendLinkedRolePage(
    reply,
    200,
    {
      kind: 'connected',
      identity: status.identity,
      proof: 'farcaster',
      metadata: status.metadata ?? {},
      uncounted,
    },
    locale,
  );
}

function sendPage(
  o: LinkedRolePagesOptions,
  signIns: FarcasterSignIns,
  request: FastifyRequest,
  reply: FastifyReply,
  code: number,
  flow: FarcasterFlow,
  notes: PageNotes,
): FastifyReply {
  const locale = sessionLocale(request, readSession(o, request));
  const page = { siwe: o.siwe, signIns, self: pagePath(o, flow.nonce), locale };
  return sendFarcasterPage(reply, code, page, flow, notes);
}
