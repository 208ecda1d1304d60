/**
 * Sign In With Farcaster flows: `/verify` (or the Linked Roles page) makes a one-time, 10-minute flow
 * bound to the member, the server (or Linked Roles) and the identity's FID; on the bot's page the
 * member starts it and the bot's server opens a channel on the relay, then watches it. When the member's
 * Farcaster app approves, the signed message is checked (farcasterMessage.ts) and its signer's standing
 * read from the chain (farcasterChain.ts): the flow is then approved, or refused with the reason, and a
 * refused one may be started again (a new channel) until it is burned. An approved flow becomes a proof
 * exactly as a wallet signature does: the FID (as `farcaster,#<fid>`) and the signer, by signature.
 */

import { randomBytes } from 'node:crypto';
import type {
  FarcasterFlow,
  FarcasterFlowStore,
  FarcasterSettlement,
  JsonValue,
  NonceRecord,
} from '../../store/types.ts';
import {
  baseUrl,
  isLinkedRoleChallenge,
  LINKED_ROLES_SCOPE,
  type SiweConfig,
  siteOf,
  ttl,
} from './challengeMessage.ts';
import type { FarcasterChain } from './farcasterChain.ts';
import {
  type ApprovalRefusal,
  checkSignInMessage,
  requestIdOf,
  type SignInRequest,
} from './farcasterMessage.ts';
import { ChannelGoneError, type FarcasterRelay, RelayUnavailableError } from './farcasterRelay.ts';
import { fidIdentity } from './proofKeys.ts';
import { MAX_OPEN_CHALLENGES_PER_USER } from './siwe.ts';

/** FARCASTER_RELAY_URL and OPTIMISM_RPC_URL: the Farcaster sign-in is offered only with both. */
export interface FarcasterConfig {
  relayUrl: string;
  rpcUrl: string;
  /** How often a watched flow's channel is read (default 1.5 s; not configuration: the tests shorten it). */
  pollMs?: number;
}

/** Which page made a flow: `/verify` (a server's) or the Linked Roles page (every server). */
export type FlowKind = 'verify' | 'linked-role';

/** Why a flow's last approval did not prove anything: an approval refusal, or the channel was lost. */
export type FlowRefusal = ApprovalRefusal | 'channel_gone';

/** Refused approvals (the member's doing) before a flow is burned. */
export const MAX_FLOW_REFUSALS = 5;
/** How often an open channel is read while its page is open or its flow watched. */
const DEFAULT_POLL_MS = 1_500;
const NONCE = /^[0-9a-f]{32}$/;

/** True when `value` has the shape of a flow's nonce (cheap check before any lookup). */
export function isFlowNonce(value: string): boolean {
  return NONCE.test(value);
}

/** The FID a Farcaster profile's `social.uid` carries, when it is one. */
export function fidOf(uid: unknown): number | null {
  const n = typeof uid === 'string' && /^\d{1,16}$/.test(uid) ? Number(uid) : uid;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** The page of a flow, below PUBLIC_URL: the member opens it, and the signed message's URI names it. */
export function flowPageUrl(
  cfg: Pick<SiweConfig, 'publicUrl'>,
  flow: Pick<FarcasterFlow, 'nonce' | 'guildId'>,
): string {
  const section = isLinkedRoleChallenge(flow) ? '/linked-role/farcaster' : '/farcaster';
  return `${baseUrl(cfg)}${section}/${flow.nonce}`;
}

/**
 * Makes and stores a flow; returns its page. At most MAX_OPEN_CHALLENGES_PER_USER unfinished flows per
 * account: a new one replaces the oldest.
 */
export async function createFarcasterFlow(
  store: Pick<FarcasterFlowStore, 'createFarcasterFlow'>,
  cfg: SiweConfig,
  input: {
    guildId: string;
    userId: string;
    userName: string | null;
    guildName: string | null;
    identity: string;
    fid: number;
    /** A Linked Roles flow: seals the member's grant for it, for the server to write with once approved. */
    sealGrant?: (nonce: string) => string;
  },
): Promise<{ nonce: string; url: string; expiresAt: number }> {
  if (!/^\d{1,20}$/.test(input.userId) || !/^\d{1,20}$/.test(input.guildId))
    throw new TypeError('guildId and userId must be Discord snowflakes');
  if (!Number.isSafeInteger(input.fid) || input.fid <= 0)
    throw new TypeError('fid must be a positive integer');
  const nonce = randomBytes(16).toString('hex');
  const now = (cfg.now ?? Date.now)();
  const { sealGrant, ...fields } = input;
  const flow = {
    ...fields,
    nonce,
    createdAt: now,
    expiresAt: now + ttl(cfg),
    sealedGrant: sealGrant?.(nonce),
  };
  await store.createFarcasterFlow(flow, { maxOpenPerUser: MAX_OPEN_CHALLENGES_PER_USER, now });
  return { nonce, url: flowPageUrl(cfg, flow), expiresAt: flow.expiresAt };
}

/** What the bot asks of a flow's approval (and tells the relay when it opens the channel). */
export function signInRequestOf(cfg: SiweConfig, flow: FarcasterFlow): SignInRequest {
  return {
    domain: siteOf(cfg).domain,
    uri: flowPageUrl(cfg, flow),
    nonce: flow.nonce,
    requestId: requestIdOf(flow.userId, flow.guildId, flow.guildId === LINKED_ROLES_SCOPE),
    fid: flow.fid,
    createdAt: flow.createdAt,
    expiresAt: flow.expiresAt,
  };
}

/**
 * An approved flow as the proof a wallet signature makes (the record the signed-proof path carries):
 * the FID as the identity, its signer as the address, the flow's expiry and so its start.
 */
export function approvalAsSignedProof(flow: FarcasterFlow): { record: NonceRecord; address: string } {
  if (flow.signer === null || flow.authMethod === null) throw new TypeError('the flow is not approved');
  return {
    record: {
      nonce: flow.nonce,
      guildId: flow.guildId,
      userId: flow.userId,
      userName: flow.userName,
      guildName: flow.guildName,
      identity: fidIdentity(flow.fid),
      address: flow.signer,
      expiresAt: flow.expiresAt,
      usedAt: flow.updatedAt,
      failedAttempts: flow.refusals,
      farcaster: { fid: flow.fid, authMethod: flow.authMethod },
    },
    address: flow.signer,
  };
}

interface FlowLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface FarcasterSignInsOptions {
  store: FarcasterFlowStore;
  siwe: SiweConfig;
  relay: Pick<FarcasterRelay, 'open' | 'status'>;
  chain: FarcasterChain;
  logger: FlowLogger;
  /** Called once a /verify flow is approved, to make its proof (a Linked Roles one: `handleApprovals`). */
  onApproved?: (flow: FarcasterFlow) => Promise<void>;
  pollMs?: number;
}

/** A flow as its page needs it, and whether the relay failed on the last read. */
export interface FlowView {
  flow: FarcasterFlow;
  relayDown: boolean;
}

/**
 * Opens channels and watches them, in the web process: one read of a channel at a time per flow, and a
 * background watch per flow opened here (a page on another replica, or after a restart, reads it itself).
 */
export class FarcasterSignIns {
  readonly #o: FarcasterSignInsOptions;
  readonly #now: () => number;
  readonly #reading = new Map<string, Promise<FlowView | undefined>>();
  readonly #watched = new Set<string>();
  readonly #relayDown = new Set<string>();
  readonly #handlers = new Map<FlowKind, (flow: FarcasterFlow) => Promise<void>>();
  #stopped = false;

  constructor(options: FarcasterSignInsOptions) {
    this.#o = options;
    this.#now = options.siwe.now ?? Date.now;
    if (options.onApproved) this.#handlers.set('verify', options.onApproved);
  }

  /** What finishes (claims once, then proves) an approved flow of `kind`, by a watch or any page's read. */
  handleApprovals(kind: FlowKind, handler: (flow: FarcasterFlow) => Promise<void>): void {
    this.#handlers.set(kind, handler);
  }

  get store(): FarcasterFlowStore {
    return this.#o.store;
  }

  /** The flow behind a page, unless it is unknown or expired. */
  async flow(nonce: string): Promise<FarcasterFlow | undefined> {
    if (!isFlowNonce(nonce)) return undefined;
    const flow = await this.#o.store.getFarcasterFlow(nonce);
    return flow && flow.expiresAt > this.#now() ? flow : undefined;
  }

  /** Whether the member may (re)start the flow now: not approved or done, not burned. */
  canStart(flow: FarcasterFlow): boolean {
    return (
      (flow.state === 'new' || flow.state === 'open' || flow.state === 'refused') &&
      flow.refusals < MAX_FLOW_REFUSALS
    );
  }

  /** Opens a relay channel for the flow (a new one on a retry) and watches it. */
  async start(
    flow: FarcasterFlow,
  ): Promise<{ flow: FarcasterFlow } | { problem: 'relay_unavailable' | 'closed' }> {
    if (!this.canStart(flow)) return { problem: 'closed' };
    const asked = signInRequestOf(this.#o.siwe, flow);
    let opened: { channelToken: string; url: string };
    try {
      opened = await this.#o.relay.open({
        siweUri: asked.uri,
        domain: asked.domain,
        nonce: asked.nonce,
        requestId: asked.requestId,
        expirationTime: new Date(asked.expiresAt).toISOString(),
      });
    } catch (error) {
      if (!(error instanceof RelayUnavailableError)) throw error;
      this.#o.logger.warn({ nonce: short(flow.nonce), err: error }, 'farcaster relay: no channel opened');
      return { problem: 'relay_unavailable' };
    }
    const updated = await this.#o.store.openFarcasterChannel(
      flow.nonce,
      { token: opened.channelToken, url: opened.url },
      this.#now(),
      MAX_FLOW_REFUSALS,
    );
    if (!updated) return { problem: 'closed' };
    this.#relayDown.delete(flow.nonce);
    this.#o.logger.info(
      { nonce: short(flow.nonce), userId: flow.userId },
      'farcaster sign-in channel opened',
    );
    this.#watch(flow.nonce);
    return { flow: updated };
  }

  /**
   * The flow now: an open one is read from the relay first (unless this process watches it already),
   * and one found approved is finished by its kind's handler.
   */
  async view(nonce: string): Promise<FlowView | undefined> {
    const flow = await this.flow(nonce);
    if (!flow) return undefined;
    if (flow.state === 'open' && !this.#watched.has(nonce)) return this.#read(nonce);
    if (flow.state === 'approved') await this.#approved(flow);
    const now = await this.flow(nonce);
    return now ? { flow: now, relayDown: this.#relayDown.has(nonce) } : undefined;
  }

  /** Stop watching (the process is stopping). */
  stop(): void {
    this.#stopped = true;
  }

  /** Reads the channel once (one read per flow at a time in this process). */
  #read(nonce: string): Promise<FlowView | undefined> {
    let reading = this.#reading.get(nonce);
    if (!reading) {
      reading = this.#readOnce(nonce).finally(() => this.#reading.delete(nonce));
      this.#reading.set(nonce, reading);
    }
    return reading;
  }

  async #readOnce(nonce: string): Promise<FlowView | undefined> {
    const flow = await this.flow(nonce);
    if (!flow) return undefined;
    if (flow.state !== 'open' || flow.channelToken === null) return { flow, relayDown: false };
    const token = flow.channelToken;
    let settlement: FarcasterSettlement | null;
    try {
      const status = await this.#o.relay.status(token);
      if (status.state === 'pending') {
        this.#relayDown.delete(nonce);
        return { flow, relayDown: false };
      }
      settlement = await this.#judge(flow, status.message, status.signature);
    } catch (error) {
      if (error instanceof ChannelGoneError) {
        settlement = { state: 'refused', outcome: { reason: 'channel_gone' }, counted: false };
      } else if (error instanceof RelayUnavailableError) {
        if (!this.#relayDown.has(nonce))
          this.#o.logger.warn({ nonce: short(nonce), err: error }, 'farcaster relay: channel not read');
        this.#relayDown.add(nonce);
        return { flow, relayDown: true };
      } else throw error;
    }
    this.#relayDown.delete(nonce);
    const settled = await this.#o.store.settleFarcasterFlow(nonce, token, settlement, this.#now());
    // Another reader (another replica) settled it first: the store says what it came to.
    const current = settled ?? (await this.flow(nonce));
    if (!current) return undefined;
    if (settled) {
      const log = { nonce: short(nonce), userId: flow.userId, guildId: flow.guildId, fid: flow.fid };
      if (settlement.state === 'approved')
        this.#o.logger.info({ ...log, authMethod: settlement.authMethod }, 'farcaster sign-in approved');
      else this.#o.logger.info({ ...log, outcome: settlement.outcome }, 'farcaster sign-in refused');
    }
    if (current.state === 'approved') await this.#approved(current);
    return { flow: (await this.flow(nonce)) ?? current, relayDown: false };
  }

  /** Whether the approval proves the FID: the message's fields, its signature, then the chain. */
  async #judge(flow: FarcasterFlow, message: unknown, signature: unknown): Promise<FarcasterSettlement> {
    const refused = (reason: FlowRefusal, counted = true): FarcasterSettlement => ({
      state: 'refused',
      outcome: { reason },
      counted,
    });
    const checked = await checkSignInMessage(
      signInRequestOf(this.#o.siwe, flow),
      message,
      signature,
      this.#now(),
    );
    if (!checked.ok) return refused(checked.reason);
    const standing = await this.#o.chain.standing(flow.fid, checked.checked.signer);
    if (standing === 'unavailable') return refused('chain_unavailable', false);
    if (standing === 'not_authorized') return refused('not_authorized');
    return { state: 'approved', signer: checked.checked.signer, authMethod: standing };
  }

  async #approved(flow: FarcasterFlow): Promise<void> {
    const handler = this.#handlers.get(isLinkedRoleChallenge(flow) ? 'linked-role' : 'verify');
    if (!handler) return;
    try {
      await handler(flow);
    } catch (error) {
      this.#o.logger.error({ nonce: short(flow.nonce), err: error }, 'farcaster proof failed');
    }
  }

  /** Reads the flow's channel every `pollMs` while it is open, unexpired, and the process runs. */
  #watch(nonce: string): void {
    if (this.#watched.has(nonce)) return;
    this.#watched.add(nonce);
    const pollMs = this.#o.pollMs ?? DEFAULT_POLL_MS;
    const loop = async () => {
      try {
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, pollMs).unref());
          if (this.#stopped) return;
          const view = await this.#read(nonce);
          if (view?.flow.state !== 'open') return;
        }
      } catch (error) {
        this.#o.logger.error({ nonce: short(nonce), err: error }, 'farcaster watch stopped');
      } finally {
        this.#watched.delete(nonce);
      }
    };
    void loop();
  }
}

/** Makes an approved flow a proof once (claimed in the store), keeping what it came to. */
export async function finishApprovedFlow(
  store: Pick<FarcasterFlowStore, 'claimFarcasterApproval' | 'recordFarcasterOutcome'>,
  flow: FarcasterFlow,
  prove: (claimed: FarcasterFlow) => Promise<JsonValue>,
  now: () => number,
): Promise<void> {
  const claimed = await store.claimFarcasterApproval(flow.nonce, now());
  if (!claimed) return;
  let outcome: JsonValue;
  try {
    outcome = await prove(claimed);
  } catch (error) {
    outcome = { ok: false, failed: true };
    await store.recordFarcasterOutcome(flow.nonce, outcome, now());
    throw error;
  }
  await store.recordFarcasterOutcome(flow.nonce, outcome, now());
}

function short(nonce: string): string {
  return nonce.slice(0, 8);
}

export { fidIdentity };
