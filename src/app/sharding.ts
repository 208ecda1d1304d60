/**
 * Running for many servers. With SHARD_COUNT (a number, or `auto` for what Discord's `GET /gateway/bot`
 * recommends), `npm start` becomes a shard manager: discord-hybrid-sharding's ClusterManager spawns
 * processes of SHARDS_PER_PROCESS shards each, running this same entry point, and respawns one that dies.
 * The manager serves the HTTP side once per machine: the signing page and OAuth callback (a verified
 * signature reaches the shard that owns its guild through the store, see gating/signedProofs.ts), the
 * Linked Roles pages and their re-check, `/healthz`, `/readyz` (every shard process ready) and `/metrics`
 * (the sum of every process). Commands are deployed once, by `npm run deploy-commands`, never at start.
 */
import type { ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { type Client, REST, Routes } from 'discord.js';
import type { RESTGetAPIGatewayBotResult } from 'discord-api-types/v10';
import { ClusterClient, ClusterManager, getInfo } from 'discord-hybrid-sharding';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import {
  type ForgottenLookups,
  type LookupToRemember,
  NOTHING_FORGOTTEN,
  type RecentLookups,
} from '../cache/recentLookups.ts';
import { DEFAULT_DISCORD_API_URL } from '../discord/oauth.ts';
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import type { OpsServers } from '../web/listeners.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import type { Bot, ShardSlice } from './bot.ts';
import { recordGatewayPings } from './botMetrics.ts';
import type { Config } from './config.ts';
import { parseShardIds } from './shardIds.ts';
import { startWebTier, type WebTier } from './webTier.ts';

/**
 * The IPC messages between the manager and its shard processes. `forget-lookups`: a shard process asks
 * the manager to forget a member's recent lookups everywhere; `forget-lookups-here`: the manager asks each
 * shard process to forget them in its own memory.
 */
type ShardMessage =
  | { kind: 'metrics' }
  | { kind: 'signed-proof'; guildId: string }
  | { kind: 'dashboard-request'; guildId: string }
  | { kind: 'forget-lookups'; userId: string }
  | { kind: 'forget-lookups-here'; userId: string };

/** A shard process's answer to `forget-lookups-here`, and the manager's to `forget-lookups`. */
type ForgetAnswer = { forgotten: ForgottenLookups } | { unreached: number };

/** The window SHARD_RESTARTS_PER_HOUR counts respawns of a shard process in. */
const RESTART_WINDOW_MS = 60 * 60_000;

/** How long the manager waits for each shard process to forget, and a shard process for the manager. */
const FORGET_TIMEOUT_MS = 5_000;

/** In a process the shard manager spawned: its number and shards; undefined in a plain `npm start`. */
export function shardProcessSlice(
  env: NodeJS.ProcessEnv = process.env,
): { processId: number; shards: ShardSlice } | undefined {
  if (env.CLUSTER_MANAGER_MODE !== 'process') return undefined;
  const info = getInfo();
  // With SHARD_IDS (inherited from the manager), the processes of every machine share the member-list budget.
  const machine = env.SHARD_IDS ? parseShardIds(env.SHARD_IDS) : undefined;
  const machines = machine?.ok ? info.TOTAL_SHARDS / machine.ids.length : 1;
  const processes = Math.ceil(info.CLUSTER_COUNT * machines);
  return { processId: info.CLUSTER, shards: { ids: info.SHARD_LIST, count: info.TOTAL_SHARDS, processes } };
}

/** SHARD_COUNT as a number: `auto` asks Discord (`GET /gateway/bot` at DISCORD_API_URL). */
export async function resolveShardCount(
  config: Pick<Config, 'SHARD_COUNT' | 'DISCORD_TOKEN' | 'DISCORD_API_URL'>,
): Promise<number> {
  if (typeof config.SHARD_COUNT === 'number') return config.SHARD_COUNT;
  const rest = new REST({ api: config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL }).setToken(
    config.DISCORD_TOKEN,
  );
  const answer = (await rest.get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult;
  return Math.max(1, answer.shards);
}

/** Shards per process: SHARDS_PER_PROCESS, else the shards spread over one process per CPU core. */
export function shardsPerProcess(
  count: number,
  configured: number | undefined,
  cores = availableParallelism(),
): number {
  return Math.min(count, configured ?? Math.ceil(count / Math.max(1, cores)));
}

export interface ShardManager {
  /** Where the verification server listens, when gating or Linked Roles are on. */
  verifyUrl?: string;
  /** Where the ops server listens (HTTP_PORT without gating, or METRICS_PORT). */
  http: OpsServers;
  /** Whether every shard process is ready. */
  ready(): boolean;
  /** Stop the HTTP side, then each shard process (SIGTERM, so it drains; SIGKILL after `graceMs`). */
  stop(graceMs?: number): Promise<void>;
}

/** Spawn the shard processes (`entry` is this entry point) and serve the HTTP side once. */
export async function startShardManager(o: {
  config: Config;
  logger: Logger;
  metrics: BotMetrics;
  web3bio: Web3BioClient;
  entry: string;
}): Promise<ShardManager> {
  const { config, logger } = o;
  const count = await resolveShardCount(config);
  const mine = config.SHARD_IDS ?? [...Array(count).keys()];
  const perProcess = shardsPerProcess(mine.length, config.SHARDS_PER_PROCESS);
  const processes = Math.ceil(mine.length / perProcess);
  const manager = new ClusterManager(o.entry, {
    totalShards: count,
    shardsPerClusters: perProcess,
    // This machine's shards; each process numbered by its first shard, so numbers differ between machines.
    ...(config.SHARD_IDS
      ? { shardList: mine, clusterList: chunked(mine, perProcess).map((shards) => shards[0] ?? 0) }
      : {}),
    mode: 'process',
    token: config.DISCORD_TOKEN,
    execArgv: process.execArgv,
    respawn: true,
    // Per shard process; the library starts counting its hour again once the process is ready.
    restarts: { max: config.SHARD_RESTARTS_PER_HOUR, interval: RESTART_WINDOW_MS },
  });
  const started = Date.now();
  // The logger scrubs every configured secret (the token included) from its entries.
  manager.on('debug', (message: string) => logger.debug({ message }, 'shard manager'));
  manager.on('clusterCreate', (cluster) => {
    cluster.on('death', () => {
      const which = { process: cluster.id, shards: cluster.shardList };
      // As the library decides (Cluster#_handleExit, which emits `death` first): stopping, over the limit, or respawning.
      if (!manager.respawn) logger.info(which, 'shard process stopped');
      else if (cluster.restarts.current >= cluster.restarts.max)
        logger.error(
          { ...which, restartsPerHour: config.SHARD_RESTARTS_PER_HOUR },
          'shard process exited; restart limit reached',
        );
      else logger.warn(which, 'shard process exited; respawning');
    });
    cluster.on('ready', () => {
      logger.info({ process: cluster.id, shards: cluster.shardList }, 'shard process ready');
      if (allReady(manager, processes))
        logger.info({ shards: count, processes, ms: Date.now() - started }, 'all shards ready');
    });
  });
  logger.info(
    {
      shards: count,
      ...(config.SHARD_IDS ? { shardIds: config.SHARD_IDS } : {}),
      shardsPerProcess: perProcess,
      processes,
      restartsPerHour: config.SHARD_RESTARTS_PER_HOUR,
    },
    'starting shards',
  );
  manager.on('clientRequest', (raw) => {
    const message = raw as unknown as ShardMessage & { reply(answer: object): Promise<void> };
    if (message.kind !== 'forget-lookups') return;
    forgetInEveryProcess(manager, message.userId)
      .then((answer) => message.reply(answer))
      .catch((error: unknown) => logger.warn({ err: error }, 'could not answer a forget-lookups request'));
  });

  const http = await startManagerHttp({ ...o, manager, processes });
  manager
    .spawn({ amount: count, delay: config.SHARD_SPAWN_DELAY_SECONDS * 1_000, timeout: 5 * 60_000 })
    .catch((error: unknown) =>
      logger.error({ err: error }, 'a shard process did not get ready; it keeps being respawned'),
    );

  return {
    ...(http.verifyServer ? { verifyUrl: http.verifyServer.url } : {}),
    http: http.ops,
    ready: () => allReady(manager, processes),
    async stop(graceMs = 15_000) {
      manager.respawn = false;
      await http.close();
      await stopShardProcesses(manager, graceMs);
    },
  };
}

/** The manager's HTTP side: verification pages (proofs handed to the shards), Linked Roles, ops. */
function startManagerHttp(o: {
  config: Config;
  logger: Logger;
  metrics: BotMetrics;
  web3bio: Web3BioClient;
  manager: ClusterManager;
  processes: number;
}): Promise<WebTier> {
  const { manager } = o;
  return startWebTier({
    ...o,
    // A sharded gateway worker (INTERACTIONS=http, PROCESS_ROLE=gateway) leaves the pages to the web replicas.
    pages: o.config.PROCESS_ROLE !== 'gateway',
    linkedRoleRechecks: true,
    nudge: (guildId) => {
      const message: ShardMessage = { kind: 'signed-proof', guildId };
      manager.broadcast(message as never).catch(() => undefined);
    },
    nudgeDashboard: (guildId) => {
      const message: ShardMessage = { kind: 'dashboard-request', guildId };
      manager.broadcast(message as never).catch(() => undefined);
    },
    readiness: {
      shards: () => {
        if (!allReady(manager, o.processes)) throw new Error('not every shard process is ready');
      },
    },
    registry: {
      contentType: o.metrics.registry.contentType,
      metrics: () => summedMetrics(manager, o.metrics),
    },
  });
}

/** `list` in runs of `size`, as the manager gives them to its processes. */
function chunked<T>(list: readonly T[], size: number): T[][] {
  return Array.from({ length: Math.ceil(list.length / size) }, (_, i) =>
    list.slice(i * size, (i + 1) * size),
  );
}

function allReady(manager: ClusterManager, processes: number): boolean {
  const clusters = [...manager.clusters.values()];
  return clusters.length === processes && clusters.every((cluster) => cluster.ready);
}

/** The manager's own metrics plus every shard process's, summed per series (a process that does not answer is left out). */
async function summedMetrics(manager: ClusterManager, metrics: BotMetrics): Promise<string> {
  const request: ShardMessage = { kind: 'metrics' };
  const answers = await Promise.all(
    [...manager.clusters.values()].map((cluster) =>
      (
        cluster.request({ ...request, options: { timeout: 2_000 } }) as Promise<{
          metrics: MetricObjectWithValues<MetricValue<string>>[];
        }>
      )
        .then((answer) => answer.metrics)
        .catch(() => null),
    ),
  );
  const all = [await metrics.registry.getMetricsAsJSON(), ...answers.filter((a) => a !== null)];
  return AggregatorRegistry.aggregate(all).metrics();
}

/**
 * Every ready shard process forgets the member's lookups in its memory; their counts summed. A process not
 * ready (starting, respawning) has taken no interaction since it started, so it holds nothing of theirs;
 * a ready one that does not answer makes the whole answer `unreached`.
 */
async function forgetInEveryProcess(manager: ClusterManager, userId: string): Promise<ForgetAnswer> {
  const request: ShardMessage = { kind: 'forget-lookups-here', userId };
  const answers = await Promise.all(
    [...manager.clusters.values()]
      .filter((cluster) => cluster.ready)
      .map((cluster) =>
        (cluster.request({ ...request, options: { timeout: FORGET_TIMEOUT_MS } }) as Promise<ForgetAnswer>)
          .then((answer) => ('forgotten' in answer ? answer.forgotten : null))
          .catch(() => null),
      ),
  );
  const unreached = answers.filter((a) => a === null).length;
  if (unreached > 0) return { unreached };
  return {
    forgotten: answers.reduce<ForgottenLookups>(
      (sum, a) => ({
        lookups: sum.lookups + (a?.lookups ?? 0),
        publicLookups: sum.publicLookups + (a?.publicLookups ?? 0),
        servers: sum.servers + (a?.servers ?? 0),
      }),
      NOTHING_FORGOTTEN,
    ),
  };
}

/**
 * The recent lookups of a shard process without Redis: kept in its own memory (each process has the
 * lookups made through its shards), and forgotten in every shard process at once, through the manager.
 */
export class ShardRecentLookups implements RecentLookups {
  readonly #local: RecentLookups;
  #cluster: ClusterClient<Client> | null = null;

  constructor(local: RecentLookups) {
    this.#local = local;
  }

  /** From now on, forget through the manager (joinShardManager). */
  join(cluster: ClusterClient<Client>): void {
    this.#cluster = cluster;
  }

  remember(lookup: LookupToRemember): Promise<void> {
    return this.#local.remember(lookup);
  }

  ofUser(userId: string): Promise<string[]> {
    return this.#local.ofUser(userId);
  }

  ofGuild(guildId: string): Promise<string[]> {
    return this.#local.ofGuild(guildId);
  }

  /** In every shard process; rejects when one that is running did not confirm. */
  async forgetUser(userId: string): Promise<ForgottenLookups> {
    if (!this.#cluster) return this.#local.forgetUser(userId);
    const request: ShardMessage = { kind: 'forget-lookups', userId };
    const answer = (await this.#cluster.request({
      ...request,
      options: { timeout: FORGET_TIMEOUT_MS * 2 },
    })) as ForgetAnswer;
    if ('unreached' in answer)
      throw new Error(`${answer.unreached} shard process(es) did not confirm forgetting the lookups`);
    return answer.forgotten;
  }

  /** This process's own lists only (the manager's `forget-lookups-here`). */
  forgetHere(userId: string): Promise<ForgottenLookups> {
    return this.#local.forgetUser(userId);
  }

  close(): Promise<void> {
    return this.#local.close();
  }
}

/** SIGTERM to every shard process (each drains and stops), SIGKILL to those still running after `graceMs`. */
async function stopShardProcesses(manager: ClusterManager, graceMs: number): Promise<void> {
  const children = [...manager.clusters.values()]
    .map((cluster) => cluster.thread?.process)
    .filter((child): child is ChildProcess => child !== undefined && child !== null && 'pid' in child)
    .filter((child) => child.exitCode === null && child.signalCode === null);
  const exited = children.map((child) => new Promise<void>((resolve) => child.once('exit', () => resolve())));
  for (const child of children) child.kill('SIGTERM');
  const timer = setTimeout(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  }, graceMs);
  await Promise.all(exited);
  clearTimeout(timer);
}

/**
 * In a shard process: tell the manager when the bot is ready, answer its metrics requests (with fresh
 * gateway pings), look for signed proofs and dashboard requests when it says one is waiting, and (without Redis) forget a
 * member's recent lookups here when it asks, and everywhere through it (`lookups`).
 */
export function joinShardManager(bot: Bot, logger: Logger, lookups?: ShardRecentLookups): void {
  const cluster = new ClusterClient(bot.client);
  lookups?.join(cluster);
  cluster.on('message', (raw) => {
    const message = raw as ShardMessage & { reply?(answer: object): Promise<void> };
    if (message.kind === 'signed-proof') bot.gating?.service.nudgeSignedProofs();
    else if (message.kind === 'dashboard-request') bot.gating?.service.nudgeDashboard();
    else if (message.kind === 'forget-lookups-here' && message.reply) {
      const answered = (answer: ForgetAnswer) => message.reply?.(answer);
      (lookups ? lookups.forgetHere(message.userId) : Promise.resolve(NOTHING_FORGOTTEN))
        .then((forgotten) => answered({ forgotten }))
        .catch((error: unknown) => logger.warn({ err: error }, 'could not forget lookups here'));
    } else if (message.kind === 'metrics' && message.reply) {
      recordGatewayPings(bot.client, bot.metrics);
      bot.metrics.registry
        .getMetricsAsJSON()
        .then((all) => message.reply?.({ metrics: all }))
        .catch((error: unknown) => logger.warn({ err: error }, 'could not answer the metrics request'));
    }
  });
  cluster.triggerReady();
}
