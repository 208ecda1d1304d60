/** Sign In With Farcaster flows: the store's part (`farcaster_flows`, migration 18). */
import type { JsonValue } from './proofTypes.ts';

/**
 * `new`: made by `/verify` (or the Linked Roles page), no relay channel yet; `open`: a channel is open and
 * watched; `approved`: the member's Farcaster app approved and the approval checked out, the proof not
 * made yet; `done`: the proof was made (or refused by the registry); `refused`: the last approval was
 * refused (another FID, domain, nonce…), and the member may start again until the flow is burned.
 */
export type FarcasterFlowState = 'new' | 'open' | 'approved' | 'done' | 'refused';

/** One Sign In With Farcaster attempt, bound to a member, a server (or Linked Roles) and a FID. */
export interface FarcasterFlow {
  /** 128 random bits as hex: the page's key and the signed message's nonce. */
  nonce: string;
  /** The server, or `LINKED_ROLES_SCOPE` for the Linked Roles page. */
  guildId: string;
  userId: string;
  /** The member's Discord username and the server's name when the flow was made, shown on the page. */
  userName: string | null;
  guildName: string | null;
  /** The identity as the member named it, normalised (`dwr.farcaster`, `farcaster,#3`). */
  identity: string;
  /** The identity's own FID, as Web3.bio reported it. */
  fid: number;
  createdAt: number;
  expiresAt: number;
  state: FarcasterFlowState;
  /** The relay channel now open for it (its token is a bearer secret: never shown or logged). */
  channelToken: string | null;
  /** The approval link of that channel. */
  channelUrl: string | null;
  /** Once approved: the address that signed (lower-cased) and how it holds the FID. */
  signer: string | null;
  authMethod: 'custody' | 'authAddress' | null;
  /** `refused`: why (`{ reason }`); `done`: what the proof came to. */
  outcome: JsonValue | null;
  /** Approvals refused so far; the flow is burned at the limit. */
  refusals: number;
  updatedAt: number;
  /**
   * A Linked Roles flow's Discord grant, sealed with TOKEN_ENCRYPTION_KEY (migration 21): the server
   * writes the role connection with it once the approval holds, page open or not. Cleared with the outcome.
   */
  sealedGrant?: string | null;
}

export type NewFarcasterFlow = Pick<
  FarcasterFlow,
  | 'nonce'
  | 'guildId'
  | 'userId'
  | 'userName'
  | 'guildName'
  | 'identity'
  | 'fid'
  | 'createdAt'
  | 'expiresAt'
  | 'sealedGrant'
>;

/** What reading a channel came to. */
export type FarcasterSettlement =
  | { state: 'approved'; signer: string; authMethod: 'custody' | 'authAddress' }
  /** `counted`: a refusal the member's approval caused (not a chain outage), counted toward the burn. */
  | { state: 'refused'; outcome: JsonValue; counted: boolean };

export interface FarcasterFlowStore {
  /**
   * Store a new flow. With `maxOpenPerUser`, in the same transaction the account's other unfinished
   * flows beyond the newest `maxOpenPerUser - 1` are deleted (their pages then say they expired).
   * Returns how many were deleted.
   */
  createFarcasterFlow(
    flow: NewFarcasterFlow,
    options?: { maxOpenPerUser?: number; now?: number },
  ): Promise<number>;
  getFarcasterFlow(nonce: string): Promise<FarcasterFlow | undefined>;
  /**
   * A channel opened for the flow (a retry replaces the one before): only while it is not approved or
   * done, unexpired at `at`, and refused fewer than `maxRefusals` times. Undefined otherwise.
   */
  openFarcasterChannel(
    nonce: string,
    channel: { token: string; url: string },
    at: number,
    maxRefusals: number,
  ): Promise<FarcasterFlow | undefined>;
  /**
   * What the channel `channelToken` came to, recorded only while the flow is open on that very channel:
   * of two readers of one approval, one settles it. Undefined when it was not open on it.
   */
  settleFarcasterFlow(
    nonce: string,
    channelToken: string,
    settlement: FarcasterSettlement,
    at: number,
  ): Promise<FarcasterFlow | undefined>;
  /** Claim an approved flow to make its proof (approved → done): once. Undefined when not approved. */
  claimFarcasterApproval(nonce: string, at: number): Promise<FarcasterFlow | undefined>;
  /** What the proof of a claimed flow came to; the flow's sealed grant, if any, is dropped with it. */
  recordFarcasterOutcome(nonce: string, outcome: JsonValue, at: number): Promise<void>;
  /** Delete flows that expired at or before `before`; returns how many. */
  deleteExpiredFarcasterFlows(before: number): Promise<number>;
}
