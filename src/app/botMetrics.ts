/**
 * The bot's metrics read from discord.js and the gating store: gateway pings, the role queue and
 * re-check staleness at each scrape, each guild re-check, and role edits as Discord answered them.
 */
import type { Client, RESTEvents } from 'discord.js';

/** `RESTEvents.Response`, named by its value so a web replica (which reads the store gauges here) loads no REST library. */
const REST_RESPONSE = 'response' as RESTEvents.Response;

import { cycleHealth, type UpstreamQuota } from '../gating/rechecks/cycleHealth.ts';
import type { RecheckEvent } from '../gating/rechecks/guildRechecks.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import type { GatingStore } from '../store/types.ts';
import type { OpsChecks } from '../web/listeners.ts';
import type { ReadinessCheck } from '../web/ops.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import type { Config } from './config.ts';

/** Each shard's last heartbeat round trip, as a gauge (read at each scrape). */
export function recordGatewayPings(client: Client, metrics: BotMetrics): void {
  for (const [id, shard] of client.ws.shards) {
    if (shard.ping >= 0) metrics.gatewayPingSeconds.set({ shard: String(id) }, shard.ping / 1_000);
  }
}

/**
 * Gauges read from the store at each scrape: the role-change queue's depth and age, and how long ago the
 * least recently re-checked enabled guild had its last full pass (a guild never re-checked counts from
 * when its settings were saved).
 */
export async function scrapeGatingStore(
  store: GatingStore,
  metrics: BotMetrics,
  cycles?: RecheckCycleScrape,
): Promise<void> {
  if (cycles) await scrapeRecheckCycles(store, metrics, cycles);
  const [depth, oldestAt, guilds] = await Promise.all([
    store.pendingRoleChanges(),
    store.oldestOpenRoleChangeAt(),
    store.listGuildSettings({ enabledOnly: true }),
  ]);
  const now = Date.now();
  metrics.roleQueueDepth.set(depth);
  metrics.roleQueueOldestSeconds.set(oldestAt === null ? 0 : Math.max(0, (now - oldestAt) / 1_000));
  const lastPasses = guilds.map((g) => g.lastFullSyncAt ?? g.updatedAt);
  metrics.recheckOldestSeconds.set(
    lastPasses.length === 0 ? 0 : Math.max(0, (now - Math.min(...lastPasses)) / 1_000),
  );
}

/** The re-check interval and Web3.bio quota a cycle's health is weighed against (issue #37). */
export interface RecheckCycleScrape {
  intervalMs: number;
  quota: UpstreamQuota;
}

/** With gating on: what the re-check cycle gauges weigh a cycle against (the interval and the quota). */
export function recheckCycleScrape(
  config: Pick<Config, 'GATING_ENABLED' | 'GATING_RECHECK_HOURS'>,
  web3bio: Pick<Web3BioClient, 'rateLimit'>,
): RecheckCycleScrape | undefined {
  if (!config.GATING_ENABLED) return undefined;
  return { intervalMs: config.GATING_RECHECK_HOURS * 3_600_000, quota: web3bio.rateLimit };
}

/** The current and previous re-check cycles' counts (every process's passes), and whether it keeps up. */
async function scrapeRecheckCycles(
  store: GatingStore,
  metrics: BotMetrics,
  { intervalMs, quota }: RecheckCycleScrape,
): Promise<void> {
  const cycles = await store.recheckCycle(Date.now(), intervalMs);
  const labelled = [['current', cycles.current] as const, ['previous', cycles.previous] as const];
  for (const [cycle, counts] of labelled) {
    if (!counts) continue;
    const health = cycleHealth({ current: counts, previous: null }, intervalMs, quota);
    metrics.recheckCycleUpstreamRequests.set({ cycle }, counts.upstreamRequests);
    metrics.recheckCycleReusedChecks.set({ cycle }, counts.reusedChecks);
    metrics.recheckCycleSeconds.set({ cycle }, health.passSeconds);
    metrics.recheckCycleQuotaSeconds.set({ cycle }, health.quotaSeconds);
  }
  metrics.recheckCycleKeepingUp.set(cycleHealth(cycles, intervalMs, quota).keepingUp ? 1 : 0);
}

/** One guild's re-check, counted. */
export function countRecheck(metrics: BotMetrics, event: RecheckEvent): void {
  const outcome = event.result === undefined ? 'failed' : event.result.elsewhere ? 'elsewhere' : 'done';
  metrics.rechecks.inc({ cause: event.cause, outcome });
  if (event.result) metrics.recheckMembers.inc({ cause: event.cause }, event.result.members);
  if (outcome !== 'elsewhere') metrics.recheckSeconds.observe({ cause: event.cause }, event.ms / 1_000);
}

const ROLE_EDIT_PATH = /^\/guilds\/\d+\/members\/\d+\/roles\/\d+$/;

/**
 * Counts role edits as Discord answers them (`gating_role_edits_total{result}`), read from discord.js's
 * REST responses, so the gating code needs no metrics of its own. A retried 429 counts once per answer.
 */
export function countRoleEdits(client: Client, metrics: BotMetrics): void {
  client.rest.on(REST_RESPONSE, (request, response) => {
    if (request.method !== 'PUT' && request.method !== 'DELETE') return;
    if (!ROLE_EDIT_PATH.test(request.path)) return;
    metrics.roleEdits.inc({ result: roleEditResult(request.method, response.status) });
  });
}

export function roleEditResult(method: string, status: number): string {
  if (status >= 200 && status < 300) return method === 'PUT' ? 'added' : 'removed';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'unknown';
  if (status === 429) return 'rate_limited';
  return 'failed';
}

/** `/readyz` and the gauges read at each scrape, for one bot process. */
export function botOpsChecks(
  client: Client,
  gating: { store: GatingStore } | undefined,
  metrics: BotMetrics,
  cycles: RecheckCycleScrape | undefined,
): OpsChecks {
  const readiness: Record<string, ReadinessCheck> = {
    gateway: () => {
      if (!client.isReady()) throw new Error('gateway not ready');
    },
  };
  if (gating) readiness.store = async () => void (await gating.store.pendingRoleChanges());
  const beforeScrape = async () => {
    recordGatewayPings(client, metrics);
    if (gating) await scrapeGatingStore(gating.store, metrics, cycles);
  };
  return { readiness, beforeScrape, registry: metrics.registry, publicPort: !gating };
}
