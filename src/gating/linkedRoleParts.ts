/** Linked Roles on their own, as the gating service and the shard manager both build them. */
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import type { Logger } from '../ops/log.ts';
import type { GatingStore } from '../store/types.ts';
import { type LinkedRolePagesSetup, LinkedRoleService } from './linkedRoles/linkedRoleService.ts';
import type { RecheckScheduler } from './rechecks/scheduler.ts';
import type { Evaluator } from './rules/evaluation.ts';
import type { Timer } from './serviceLifecycle.ts';

/**
 * Linked Roles on their own: the service and what its pages need. The gating service builds them, and so
 * does the shard manager, whose HTTP server serves the pages and which runs their re-check.
 */
export function createLinkedRoles(o: {
  store: GatingStore;
  evaluator: Evaluator;
  logger: Logger;
  now: () => number;
  confirmMs?: number | undefined;
  oauth: DiscordOAuthConfig;
  key: Buffer;
}): { service: LinkedRoleService; pages: LinkedRolePagesSetup } {
  const service = new LinkedRoleService({
    store: o.store,
    evaluator: o.evaluator,
    logger: o.logger.child({ part: 'linked-roles' }),
    now: o.now,
    oauth: o.oauth,
    key: o.key,
    ...(o.confirmMs === undefined ? {} : { confirmMs: o.confirmMs }),
  });
  return { service, pages: { oauth: o.oauth, key: o.key, evaluator: o.evaluator, service } };
}

/** The periodic Linked Roles re-check, as a timer. */
export function linkedRoleRechecks(
  service: LinkedRoleService,
  scheduler: RecheckScheduler,
  logger: Logger,
): Timer {
  return {
    start: () =>
      scheduler.start(async () => {
        const counts = await service.recheckAll();
        logger.info({ counts }, 'linked roles re-checked');
      }),
    stop: () => scheduler.stop(),
  };
}
