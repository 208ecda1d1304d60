/**
 * `/farcaster/{nonce}`: the Sign in with Farcaster page of a `/verify` flow, behind the same Discord
 * sign-in as the signing page (DISCORD_CLIENT_SECRET): a page forwarded to someone else says whose it is
 * and opens nothing. `POST …/start` opens the relay channel (again, after a refusal), `GET …/status`
 * is what the page's script asks while it waits. The bot's server reads the channel, checks the
 * approval and, once it holds, makes the proof through `onVerified` as for a wallet signature.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DiscordOAuthConfig } from '../../discord/oauth.ts';
import { isLinkedRoleChallenge, type SiweConfig, siteOf } from '../../gating/proofs/challengeMessage.ts';
import { optimismChain } from '../../gating/proofs/farcasterChain.ts';
import { FarcasterRelay } from '../../gating/proofs/farcasterRelay.ts';
import {
  approvalAsSignedProof,
  type FarcasterConfig,
  FarcasterSignIns,
  finishApprovedFlow,
} from '../../gating/proofs/farcasterSignIn.ts';
import type { NonceRecord, NonceStore } from '../../gating/proofs/siwe.ts';
import type { SignatureLinkResult } from '../../gating/types.ts';
import { t } from '../../i18n/index.ts';
import type { FarcasterFlow, FarcasterFlowStore, GatingStore, JsonValue } from '../../store/types.ts';
import type { WebLimiters } from '../limits.ts';
import { requestLocale } from '../locale.ts';
import { type FlowDoneOutcome, pageState, renderFarcasterPage } from '../pages/farcasterPage.ts';
import { renderVerifyPage } from '../pages/verifyPage.ts';
import {
  publicPath,
  redirect,
  refuseOtherMethods,
  sendHtml,
  sendJson,
  type WebLogger,
} from '../responses.ts';
import { hasSignedIn, signInFirst, type VerifySignInOptions } from '../signing/signIn.ts';

export interface FarcasterRoutesOptions {
  farcaster: FarcasterConfig;
  store: NonceStore & Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'> & FarcasterFlowStore;
  siwe: SiweConfig;
  /** The Discord sign-in in front of every page: without it the routes are never registered (app.ts). */
  oauth: DiscordOAuthConfig;
  logger: WebLogger;
  limits: WebLimiters;
  /** Makes the proof of an approved flow, as for a valid wallet signature. */
  onVerified: (result: { record: NonceRecord; address: string }) => Promise<SignatureLinkResult>;
  maxFailuresPerChallenge: number;
}

interface NonceParams {
  nonce: string;
}

/** The relay, the chain and the flows, for this process's pages (the Linked Roles page uses them too). */
export function createFarcasterSignIns(o: FarcasterRoutesOptions): FarcasterSignIns {
  const now = o.siwe.now ?? Date.now;
  let warned = false;
  return new FarcasterSignIns({
    store: o.store,
    siwe: o.siwe,
    relay: new FarcasterRelay(o.farcaster.relayUrl),
    ...(o.farcaster.pollMs ? { pollMs: o.farcaster.pollMs } : {}),
    chain: optimismChain(o.farcaster.rpcUrl, (problem) => {
      if (problem.kind === 'wrong_chain') {
        if (!warned)
          o.logger.error(
            { chainId: problem.chainId },
            'OPTIMISM_RPC_URL is not an OP Mainnet node: Farcaster sign-ins cannot be checked',
          );
        warned = true;
      } else o.logger.warn({ err: chainError(problem.err) }, 'OPTIMISM_RPC_URL did not answer');
    }),
    logger: o.logger,
    onApproved: (flow) =>
      finishApprovedFlow(
        o.store,
        flow,
        async (claimed) => (await o.onVerified(approvalAsSignedProof(claimed))) as unknown as JsonValue,
        now,
      ),
  });
}

export function registerFarcasterRoutes(
  app: FastifyInstance,
  o: FarcasterRoutesOptions,
  signIns: FarcasterSignIns,
): void {
  const signIn: VerifySignInOptions = {
    oauth: o.oauth,
    store: o.store,
    now: o.siwe.now ?? Date.now,
    logger: o.logger,
    maxFailuresPerChallenge: o.maxFailuresPerChallenge,
  };
  app.get<{ Params: NonceParams }>('/farcaster/:nonce', (request, reply) =>
    page(o, signIns, signIn, request, reply, request.params.nonce),
  );
  app.post<{ Params: NonceParams }>('/farcaster/:nonce/start', { bodyLimit: 1_024 }, (request, reply) =>
    start(o, signIns, signIn, request, reply, request.params.nonce),
  );
  app.get<{ Params: NonceParams }>('/farcaster/:nonce/status', (request, reply) =>
    status(signIns, signIn, request, reply, request.params.nonce),
  );
  app.addHook('onClose', async () => signIns.stop());
  refuseOtherMethods(app, '/farcaster/:nonce', 'GET, HEAD');
  refuseOtherMethods(app, '/farcaster/:nonce/start', 'POST');
  refuseOtherMethods(app, '/farcaster/:nonce/status', 'GET, HEAD');
}

/** A `/verify` flow (a Linked Roles one is served on its own page only), unless unknown or expired. */
async function flowOf(signIns: FarcasterSignIns, nonce: string): Promise<FarcasterFlow | undefined> {
  const flow = await signIns.flow(nonce);
  return flow && !isLinkedRoleChallenge(flow) ? flow : undefined;
}

function signedIn(signIn: VerifySignInOptions, request: FastifyRequest, flow: FarcasterFlow): boolean {
  return hasSignedIn(signIn, request, { ...flow, purpose: 'farcaster' });
}

function expired(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const locale = requestLocale(request);
  return sendHtml(reply, 410, (cspNonce) => renderVerifyPage({ kind: 'expired' }, cspNonce, locale), {
    locale,
  });
}

async function page(
  o: FarcasterRoutesOptions,
  signIns: FarcasterSignIns,
  signIn: VerifySignInOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const flow = await flowOf(signIns, nonce);
  if (!flow) return expired(request, reply);
  if (!signedIn(signIn, request, flow))
    return signInFirst(signIn, o.limits, request, reply, { ...flow, purpose: 'farcaster' });
  const view = await signIns.view(nonce);
  if (!view) return expired(request, reply);
  return sendPage(o, signIns, request, reply, 200, view.flow, { relayDown: view.relayDown });
}

/** What the page says beyond the flow: the relay down, too many starts. */
export interface PageNotes {
  relayDown?: boolean;
  relayDownStart?: boolean;
  slowDownSeconds?: number;
}

/** A flow's page at `self` (its start form and status URL beside it), in `locale`. */
export function sendFarcasterPage(
  reply: FastifyReply,
  code: number,
  page: { siwe: SiweConfig; signIns: FarcasterSignIns; self: string; locale: string },
  flow: FarcasterFlow,
  notes: PageNotes = {},
): FastifyReply {
  const { self, locale } = page;
  return sendHtml(
    reply,
    code,
    (cspNonce) =>
      renderFarcasterPage(
        {
          flow,
          domain: siteOf(page.siwe).domain,
          paths: { self, start: `${self}/start`, status: `${self}/status` },
          canStart: page.signIns.canStart(flow),
          ...notes,
          ...(flow.state === 'done' && flow.outcome !== null ? { done: doneOutcome(flow.outcome) } : {}),
        },
        cspNonce,
        locale,
      ),
    { locale, formAction: 'self' },
  );
}

async function start(
  o: FarcasterRoutesOptions,
  signIns: FarcasterSignIns,
  signIn: VerifySignInOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const flow = await flowOf(signIns, nonce);
  if (!flow) return expired(request, reply);
  if (!signedIn(signIn, request, flow)) {
    o.logger.warn(
      { nonce: nonce.slice(0, 8) },
      'farcaster sign-in started from a browser that may not use it',
    );
    return sendJson(reply, 401, {
      ok: false,
      reason: 'sign_in',
      message: t(requestLocale(request), 'web.link.signInFirst'),
    });
  }
  // Each start opens a channel on the relay (Farcaster's public one by default): limited per client.
  const wait = await o.limits.farcasterStarts(request);
  if (wait !== undefined) {
    reply.header('retry-after', String(wait));
    return sendPage(o, signIns, request, reply, 429, flow, { slowDownSeconds: wait });
  }
  const started = await signIns.start(flow);
  if ('flow' in started) return redirect(reply, publicPath(o.siwe.publicUrl, `/farcaster/${nonce}`));
  const now = (await signIns.flow(nonce)) ?? flow;
  return sendPage(o, signIns, request, reply, started.problem === 'relay_unavailable' ? 502 : 409, now, {
    relayDownStart: started.problem === 'relay_unavailable',
  });
}

async function status(
  signIns: FarcasterSignIns,
  signIn: VerifySignInOptions,
  request: FastifyRequest,
  reply: FastifyReply,
  nonce: string,
): Promise<FastifyReply> {
  const flow = await flowOf(signIns, nonce);
  if (!flow) return sendJson(reply, 410, { ok: false, state: 'expired' });
  if (!signedIn(signIn, request, flow))
    return sendJson(reply, 401, { ok: false, reason: 'sign_in', state: 'sign_in' });
  const view = await signIns.view(nonce);
  if (!view) return sendJson(reply, 410, { ok: false, state: 'expired' });
  return sendJson(reply, 200, { ok: true, state: pageState(view.flow, view.relayDown) });
}

function sendPage(
  o: Pick<FarcasterRoutesOptions, 'siwe'>,
  signIns: FarcasterSignIns,
  request: FastifyRequest,
  reply: FastifyReply,
  code: number,
  flow: FarcasterFlow,
  notes: PageNotes,
): FastifyReply {
  const self = publicPath(o.siwe.publicUrl, `/farcaster/${flow.nonce}`);
  return sendFarcasterPage(
    reply,
    code,
    { siwe: o.siwe, signIns, self, locale: requestLocale(request) },
    flow,
    notes,
  );
}

/** What `onVerified` answered for a finished flow, as the page words it. */
function doneOutcome(outcome: JsonValue): FlowDoneOutcome {
  const o = (outcome ?? {}) as { ok?: unknown; queued?: unknown; refusal?: { code?: unknown } };
  if (o.ok === true) return o.queued === true ? { kind: 'queued' } : { kind: 'verified' };
  const code = o.refusal?.code;
  return typeof code === 'string' ? { kind: 'refused', code } : { kind: 'failed' };
}

/**
 * A chain-node error for the log: its name and viem's short message only. Its full message names the
 * node's URL, and OPTIMISM_RPC_URL often carries an API key in its path.
 */
function chainError(error: unknown): { name: string; message?: string } {
  if (!(error instanceof Error)) return { name: 'unknown' };
  const short = (error as { shortMessage?: unknown }).shortMessage;
  return typeof short === 'string'
    ? { name: error.name, message: short.slice(0, 120) }
    : { name: error.name };
}
