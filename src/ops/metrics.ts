/**
 * The bot's Prometheus metrics (prom-client), in one registry per bot so tests and several bots in one
 * process never share counters. Lower layers do not import this: they take plain callbacks
 * (`TransportObserver`, the cache's `onLookup`/`onRead`, the router's `onAnswered`) that wiring points here.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface BotMetrics {
  readonly registry: Registry;
  /** Interactions answered, by command (or component handler) and outcome (`ok` or the error kind). */
  readonly interactions: Counter<'command' | 'outcome'>;
  /** From receipt to the answer being ready (before it is sent), seconds. */
  readonly answerSeconds: Histogram<'command'>;
  /** Upstream attempts by endpoint and status (or `timeout`, `network`, `aborted`). */
  readonly upstreamRequests: Counter<'endpoint' | 'status'>;
  readonly upstreamSeconds: Histogram<'endpoint'>;
  /** Reads by tier (`l1`, `l2`, or `all` for the lookup as a whole) and result. */
  readonly cacheLookups: Counter<'tier' | 'result'>;
  readonly limiterWaitSeconds: Histogram;
  /** 1 while the upstream rate limit is shared through Redis, 0 while on the local fallback. */
  readonly limiterShared: Gauge;
  /** Role changes waiting in the durable queue, and the age of the oldest; the gating side sets or collects them. */
  readonly roleQueueDepth: Gauge;
  readonly roleQueueOldestSeconds: Gauge;
  /** Role edits sent to Discord, by result (`added`, `removed`, `forbidden`, `failed`, …): the gating side increments. */
  readonly roleEdits: Counter<'result'>;
  /** Gateway heartbeat round trip per shard, seconds (collected on scrape). */
  readonly gatewayPingSeconds: Gauge<'shard'>;
  /** Guild re-checks by cause (`periodic`, `setup`, `recheck`…) and outcome (`done`, `elsewhere`, `failed`). */
  readonly rechecks: Counter<'cause' | 'outcome'>;
  /** Members evaluated by guild re-checks, by cause: its rate is the re-check's progress. */
  readonly recheckMembers: Counter<'cause'>;
  readonly recheckSeconds: Histogram<'cause'>;
  /** Since the least recently re-checked enabled guild's last full pass (collected on scrape). */
  readonly recheckOldestSeconds: Gauge;
  /** A re-check cycle's credential requests upstream, by cycle (`current`, `previous`): read from the store. */
  readonly recheckCycleUpstreamRequests: Gauge<'cycle'>;
  /** A cycle's credential reads answered by another server's check of the identity in the cycle. */
  readonly recheckCycleReusedChecks: Gauge<'cycle'>;
  /** A cycle's guild passes, their lengths summed, seconds. */
  readonly recheckCycleSeconds: Gauge<'cycle'>;
  /** What a cycle's upstream requests take at the configured Web3.bio quota, seconds (0 without one). */
  readonly recheckCycleQuotaSeconds: Gauge<'cycle'>;
  /** 1 when the last finished cycle's passes and its requests at the quota each fit in the interval. */
  readonly recheckCycleKeepingUp: Gauge;
}

const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(options: { defaultMetrics?: boolean } = {}): BotMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    interactions: new Counter({
      name: 'bot_interactions_total',
      help: 'Interactions answered, by command and outcome',
      labelNames: ['command', 'outcome'],
      registers,
    }),
    answerSeconds: new Histogram({
      name: 'bot_answer_seconds',
      help: 'Time from receiving an interaction to its answer being ready',
      labelNames: ['command'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    upstreamRequests: new Counter({
      name: 'web3bio_requests_total',
      help: 'Web3.bio request attempts, by endpoint and HTTP status or failure',
      labelNames: ['endpoint', 'status'],
      registers,
    }),
    upstreamSeconds: new Histogram({
      name: 'web3bio_request_seconds',
      help: 'Web3.bio request attempt duration',
      labelNames: ['endpoint'],
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    cacheLookups: new Counter({
      name: 'cache_lookups_total',
      help: 'Cache reads by tier (l1, l2; all = the lookup as a whole) and result (hit, miss, stale, shared_fill)',
      labelNames: ['tier', 'result'],
      registers,
    }),
    limiterWaitSeconds: new Histogram({
      name: 'web3bio_rate_limiter_wait_seconds',
      help: 'Time a request waited for the upstream rate limiter',
      buckets: [0, 0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    limiterShared: new Gauge({
      name: 'web3bio_rate_limiter_shared',
      help: '1 while the upstream rate limit is shared through Redis, 0 while on the local fallback',
      registers,
    }),
    roleQueueDepth: new Gauge({
      name: 'gating_role_queue_depth',
      help: 'Role changes waiting in the durable queue',
      registers,
    }),
    roleQueueOldestSeconds: new Gauge({
      name: 'gating_role_queue_oldest_seconds',
      help: 'Age of the oldest role change waiting in the queue',
      registers,
    }),
    roleEdits: new Counter({
      name: 'gating_role_edits_total',
      help: 'Role edits sent to Discord, by result',
      labelNames: ['result'],
      registers,
    }),
    gatewayPingSeconds: new Gauge({
      name: 'discord_gateway_ping_seconds',
      help: 'Gateway heartbeat round trip per shard',
      labelNames: ['shard'],
      registers,
    }),
    rechecks: new Counter({
      name: 'gating_rechecks_total',
      help: 'Guild re-checks, by cause and outcome',
      labelNames: ['cause', 'outcome'],
      registers,
    }),
    recheckMembers: new Counter({
      name: 'gating_recheck_members_total',
      help: 'Members evaluated by guild re-checks, by cause',
      labelNames: ['cause'],
      registers,
    }),
    recheckSeconds: new Histogram({
      name: 'gating_recheck_seconds',
      help: 'Duration of one guild re-check',
      labelNames: ['cause'],
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
      registers,
    }),
    recheckOldestSeconds: new Gauge({
      name: 'gating_recheck_oldest_seconds',
      help: 'Time since the least recently re-checked enabled guild was last fully re-checked',
      registers,
    }),
    ...recheckCycleGauges(registers),
  };
}

function recheckCycleGauges(registers: Registry[]) {
  // Read from the store, the same in every process: a shard manager's sum over its processes takes the highest.
  const aggregator = 'max' as const;
  const byCycle = (name: string, help: string) =>
    new Gauge({ name, help, labelNames: ['cycle'] as const, registers, aggregator });
  return {
    recheckCycleUpstreamRequests: byCycle(
      'gating_recheck_cycle_upstream_requests',
      'Credential requests a re-check cycle sent upstream (current or previous cycle, every process)',
    ),
    recheckCycleReusedChecks: byCycle(
      'gating_recheck_cycle_reused_checks',
      "Credential reads of a re-check cycle answered by another server's check of the identity in the cycle",
    ),
    recheckCycleSeconds: byCycle('gating_recheck_cycle_seconds', "A re-check cycle's guild passes, summed"),
    recheckCycleQuotaSeconds: byCycle(
      'gating_recheck_cycle_quota_seconds',
      "What a re-check cycle's upstream requests take at the configured Web3.bio quota",
    ),
    recheckCycleKeepingUp: new Gauge({
      name: 'gating_recheck_cycle_keeping_up',
      help: "1 when the last finished cycle's passes and its requests at the quota each fit in GATING_RECHECK_HOURS",
      registers,
      aggregator,
    }),
  };
}
