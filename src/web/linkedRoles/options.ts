/** What the Linked Roles routes work with. */
import type { LinkedRolePagesSetup } from '../../gating/linkedRoles/linkedRoleService.ts';
import type { SiweConfig } from '../../gating/proofs/challengeMessage.ts';
import type { NonceStore } from '../../gating/proofs/siwe.ts';
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
}
