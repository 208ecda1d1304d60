/**
 * A dashboard page served by a process that does not own the guild (the shard manager, a web replica, or
 * a gateway process of other shards) hands the request to the owner through the store: it queues the
 * request under a random id, nudges the owner where it can (IPC to shard processes), and waits a bounded
 * time for the answer. Each gateway process runs an inbox that claims the requests of its own shards (the
 * filter is in SQL), runs them under a lease it renews while they run, and writes the answer. A request
 * nobody claims within REQUEST_MAX_AGE_MS is never run; rows are deleted after that. No discord.js here:
 * a web replica loads this.
 */
import { randomBytes } from 'node:crypto';
import { CoalescedPoller } from '../../ops/coalescedPoller.ts';
import type { Logger } from '../../ops/log.ts';
import type { DashboardStore, JsonValue, ShardFilter } from '../../store/types.ts';
import type { DashboardAnswer, DashboardOperations, DashboardRequest, DashboardResult } from './types.ts';

/** How long a page waits for the owning process's answer before saying so. */
export const DASHBOARD_WAIT_MS = 8_000;
/** A request older than this is never claimed: its page gave up long ago (it said the request might run late). */
export const REQUEST_MAX_AGE_MS = 2 * 60_000;
/** How often a gateway process looks for requests when nobody nudges it (replicas on other machines). */
export const DEFAULT_REQUEST_POLL_MS = 250;
const CONCURRENCY = 4;
const PRUNE_EVERY_MS = 60_000;

type QueueStore = Pick<DashboardStore, 'enqueueDashboardRequest' | 'dashboardRequestResult'>;

/** Hands requests to the owning process through the store, waiting up to `waitMs` for each answer. */
export function queuedOperations(o: {
  store: QueueStore;
  nudge?: (guildId: string) => void;
  waitMs?: number;
  pollMs?: number;
}): DashboardOperations {
  return {
    async run(request) {
      const id = randomBytes(16).toString('base64url');
      await o.store.enqueueDashboardRequest({
        id,
        guildId: request.guildId,
        request: request as unknown as JsonValue,
      });
      o.nudge?.(request.guildId);
      const deadline = Date.now() + (o.waitMs ?? DASHBOARD_WAIT_MS);
      for (;;) {
        const result = await o.store.dashboardRequestResult(id);
        if (result !== null && result !== undefined)
          return { kind: 'answered', result: result as unknown as DashboardResult };
        if (Date.now() >= deadline) return { kind: 'timeout' };
        await new Promise((resolve) => setTimeout(resolve, o.pollMs ?? 50));
      }
    },
  };
}

/**
 * Runs a request here when this process owns the guild (`owns`), else through `queue`. A local run that
 * throws answers `failed` (logged), as the inbox does for a queued one.
 */
export function localFirstOperations(o: {
  owns: (guildId: string) => boolean;
  run: (request: DashboardRequest) => Promise<DashboardResult>;
  queue: DashboardOperations;
  logger: Logger;
}): DashboardOperations {
  return {
    async run(request): Promise<DashboardAnswer> {
      if (!o.owns(request.guildId)) return o.queue.run(request);
      return { kind: 'answered', result: await runLogged(o.run, request, o.logger) };
    },
  };
}

async function runLogged(
  run: (request: DashboardRequest) => Promise<DashboardResult>,
  request: DashboardRequest,
  logger: Logger,
): Promise<DashboardResult> {
  try {
    return await run(request);
  } catch (error) {
    logger.error({ err: error, guildId: request.guildId, op: request.op }, 'dashboard request failed');
    return { kind: 'failed' };
  }
}

const OPS = new Set([
  'status',
  'standing',
  'rulePreview',
  'ruleApply',
  'ruleRemove',
  'exemptAdd',
  'exemptRemove',
  'confirmRemovals',
  'keepHeld',
]);

/** A stored request that reads as one (the store is ours, but a row from another version may differ). */
function asRequest(value: JsonValue, guildId: string): DashboardRequest | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  if (typeof value.op !== 'string' || !OPS.has(value.op) || value.guildId !== guildId) return null;
  if (value.op !== 'status' && typeof value.actorId !== 'string') return null;
  return value as unknown as DashboardRequest;
}

export interface DashboardRequestInboxOptions {
  store: Pick<
    DashboardStore,
    'claimDashboardRequests' | 'renewDashboardRequest' | 'finishDashboardRequest' | 'deleteDashboardRequests'
  >;
  logger: Logger;
  /** The guilds this process serves (its shards), read at each look; null for every guild. */
  shards: () => ShardFilter | null;
  run: (request: DashboardRequest) => Promise<DashboardResult>;
  /** The store's lease on a claim: renewed at a third of it while the request runs. */
  leaseMs: number;
  pollMs?: number;
  now?: () => number;
}

/** A gateway process's side: claims its shards' dashboard requests and answers them. */
export class DashboardRequestInbox extends CoalescedPoller {
  readonly #o: DashboardRequestInboxOptions & { now: () => number };
  #prunedAt = 0;

  constructor(options: DashboardRequestInboxOptions) {
    super({
      pollMs: options.pollMs ?? DEFAULT_REQUEST_POLL_MS,
      logger: options.logger,
      what: 'dashboard request inbox',
    });
    this.#o = { now: Date.now, ...options };
  }

  protected async look(): Promise<void> {
    const { store, now } = this.#o;
    if (now() - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now();
      await store.deleteDashboardRequests(now() - REQUEST_MAX_AGE_MS * 5);
    }
    for (;;) {
      if (this.stopping) return;
      const claimed = await store.claimDashboardRequests(
        this.#o.shards(),
        CONCURRENCY,
        now() - REQUEST_MAX_AGE_MS,
      );
      if (claimed.length === 0) return;
      await Promise.all(claimed.map((claim) => this.#answer(claim)));
    }
  }

  async #answer(
    claim: Awaited<ReturnType<DashboardRequestInboxOptions['store']['claimDashboardRequests']>>[number],
  ) {
    const { store, logger, leaseMs } = this.#o;
    const renewal = setInterval(
      () => {
        store.renewDashboardRequest(claim.id, claim.claimToken).catch((error: unknown) => {
          logger.warn({ err: error, requestId: claim.id }, 'could not renew a dashboard request');
        });
      },
      Math.max(10, Math.floor(leaseMs / 3)),
    );
    renewal.unref();
    try {
      const request = asRequest(claim.request, claim.guildId);
      const result: DashboardResult = request
        ? await runLogged(this.#o.run, request, logger)
        : { kind: 'failed' };
      await store.finishDashboardRequest(claim.id, claim.claimToken, result as unknown as JsonValue);
      logger.info(
        { requestId: claim.id, guildId: claim.guildId, op: request?.op, result: result.kind },
        'dashboard request answered',
      );
    } finally {
      clearInterval(renewal);
    }
  }
}
