/**
 * Sign in with Farcaster on the Linked Roles page, finished by the server: the flow keeps the member's
 * Discord grant sealed (bound to the member and the flow), and once the approval holds, whoever sees it
 * first (this process's watch of the relay channel, or a page's read on any replica) claims the flow in
 * the store, once, and writes the role connection with that grant, exactly as a wallet signature is
 * connected. The grant is dropped with the outcome, or with the flow when it expires.
 */
import type { TokenGrant } from '../../discord/oauth.ts';
import type { Logger } from '../../ops/log.ts';
import type { FarcasterFlow, FarcasterFlowStore, JsonValue } from '../../store/types.ts';
import { fidIdentity, finishApprovedFlow } from '../proofs/farcasterSignIn.ts';
import type { ConnectOutcome, LinkedRoleService } from './linkedRoleService.ts';
import { openToken, sealToken } from './linkedRoles.ts';

/** What a Linked Roles flow came to, as its stored outcome: the connection's kind, or why none. */
export type FlowConnection =
  | { kind: Exclude<ConnectOutcome['kind'], 'connected'> }
  | { kind: 'connected'; uncounted: JsonValue }
  /** The grant could not be read (a flow made before migration 21, or another key): nothing written. */
  | { kind: 'failed' };

export interface FarcasterConnectionOptions {
  service: Pick<LinkedRoleService, 'connect'>;
  store: Pick<FarcasterFlowStore, 'claimFarcasterApproval' | 'recordFarcasterOutcome'>;
  /** TOKEN_ENCRYPTION_KEY as bytes. */
  key: Buffer;
  logger: Pick<Logger, 'info' | 'warn'>;
  now: () => number;
}

/** The sealing context: a grant sealed for one member's flow opens for no other member or flow. */
function grantContext(flow: Pick<FarcasterFlow, 'nonce' | 'userId'>): string {
  return `linked-role-farcaster\u0000${flow.userId}\u0000${flow.nonce}`;
}

/** The member's grant, sealed for the flow they are making. */
export function sealFlowGrant(
  key: Buffer,
  grant: TokenGrant,
  flow: Pick<FarcasterFlow, 'nonce' | 'userId'>,
): string {
  return sealToken(key, JSON.stringify(grant), grantContext(flow));
}

/** The grant a flow keeps, when it keeps one sealed for its own member and nonce. */
export function openFlowGrant(key: Buffer, flow: FarcasterFlow): TokenGrant | undefined {
  if (!flow.sealedGrant) return undefined;
  const text = openToken(key, flow.sealedGrant, grantContext(flow));
  return text === undefined ? undefined : (JSON.parse(text) as TokenGrant);
}

/** The outcome a finished Linked Roles flow recorded, or undefined while it is being connected. */
export function flowConnectionOf(flow: Pick<FarcasterFlow, 'state' | 'outcome'>): FlowConnection | undefined {
  if (flow.state !== 'done' || flow.outcome === null) return undefined;
  const kind = (flow.outcome as { kind?: unknown }).kind;
  return typeof kind === 'string' ? (flow.outcome as FlowConnection) : { kind: 'failed' };
}

/**
 * Connects an approved Linked Roles flow once (the store's claim): the FID and its signer for the member
 * who made the flow, with the grant they gave; nothing when it expired or the claim went elsewhere.
 */
export async function connectApprovedFlow(o: FarcasterConnectionOptions, flow: FarcasterFlow): Promise<void> {
  if (flow.expiresAt <= o.now()) return;
  await finishApprovedFlow(o.store, flow, (claimed) => connectClaimed(o, claimed), o.now);
}

async function connectClaimed(o: FarcasterConnectionOptions, claimed: FarcasterFlow): Promise<JsonValue> {
  const grant = openFlowGrant(o.key, claimed);
  const log = { userId: claimed.userId, nonce: claimed.nonce.slice(0, 8) };
  if (!grant || claimed.signer === null) {
    o.logger.warn(log, 'linked role farcaster sign-in: no grant kept with the flow, nothing written');
    return { kind: 'failed' } satisfies FlowConnection;
  }
  const outcome = await o.service
    .connect(
      claimed.userId,
      grant,
      {
        identity: fidIdentity(claimed.fid),
        platform: 'farcaster',
        address: claimed.signer,
        proofMethod: 'signature',
      },
      // A holding another account signed for after this flow was made is not taken over.
      { challengeIssuedAt: claimed.createdAt },
    )
    .catch((error: unknown) => {
      o.logger.warn({ ...log, err: String(error).slice(0, 200) }, 'linked role write failed');
      return { kind: 'pending' as const, why: 'discord_failed' as const };
    });
  o.logger.info({ ...log, outcome: outcome.kind }, 'linked role farcaster sign-in finished by the server');
  if (outcome.kind !== 'connected') return { kind: outcome.kind };
  return { kind: 'connected', uncounted: outcome.uncounted as unknown as JsonValue };
}
