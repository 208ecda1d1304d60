/** What the Linked Roles routes work with. */
import type { FastifyRequest } from 'fastify';
import type { LinkedRolePagesSetup } from '../../gating/linkedRoles/linkedRoleService.ts';
import type { SiweConfig } from '../../gating/proofs/challengeMessage.ts';
import type { FarcasterSignIns } from '../../gating/proofs/farcasterSignIn.ts';
import type { NonceStore } from '../../gating/proofs/siwe.ts';
import { PROVE_READ_MAX_AGE_MS } from '../../gating/rules/recordReads.ts';
import type { GatingStore } from '../../store/types.ts';
import type { WebLimiters } from '../limits.ts';
import type { WebLogger } from '../responses.ts';

export interface LinkedRolePagesOptions extends LinkedRolePagesSetup {
  store: Pick<GatingStore, 'createOAuthState' | 'consumeOAuthState'> & NonceStore;
  siwe: SiweConfig;
  logger: WebLogger;
  now: () => number;
  limits: WebLimiters;
  maxFailuresPerChallenge: number;
  /** With OPTIMISM_RPC_URL: the page offers Sign in with Farcaster (`farcaster.ts`). */
  farcaster?: FarcasterSignIns | undefined;
}

/** How a proof reads the record: fresh on the account's first proof in the window, else from the cache. */
export async function proofFreshness(
  o: Pick<LinkedRolePagesOptions, 'limits'>,
  request: FastifyRequest,
  userId: string,
): Promise<true | { maxAgeMs: number }> {
  return (await o.limits.freshRead(request, userId)) ? true : { maxAgeMs: PROVE_READ_MAX_AGE_MS };
}
