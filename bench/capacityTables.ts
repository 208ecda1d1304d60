/** The capacity benchmark's two tables (bench/capacity.ts): processes and memory; the cycle, REST and interactions. */
import { CAPACITY_GUILD, linearFit, SHARED_EVERY } from './capacityPlan.ts';
import { type BenchTable, formatNumber } from './stats.ts';

/** What one row of bench/capacity.ts measured. */
export interface CapacityRow {
  guilds: number;
  shardCount: number;
  worldBuildMs: number;
  seedMs: number;
  readyMs: number;
  /** After the cycle: each manager's own, each shard process's, each replica's, the proxy's. */
  rss: { managers: number[]; shards: number[]; replicas: number[]; proxy: number };
  identities: number;
  cycle: { upstream: number; discord: number; ms: number; routes: [string, number][] };
  startDiscordRequests: number;
  discord429s: number;
  interactions: {
    answered: number;
    failures: number;
    perSecond: number;
    replicaCpuSeconds: number;
    /** The signed requests ran out before the time was up. */
    ranOut: boolean;
  };
  postgresBytes: number;
  redis: { keys: number; bytes: number };
  loadAverage: string;
}

const MIB = 1024 * 1024;
const mib = (bytes: number) => formatNumber(bytes / MIB, 0);
const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);
const list = (values: readonly number[]) => values.map(mib).join(', ');

/** Every process of the row: managers, shard processes, replicas, the proxy. */
export function totalRss(row: CapacityRow): number {
  return sum(row.rss.managers) + sum(row.rss.shards) + sum(row.rss.replicas) + row.rss.proxy;
}

export function capacityTables(
  rows: readonly CapacityRow[],
  o: { durationMs: number; concurrency: number; discordPerSecond: number },
): BenchTable[] {
  const shape = CAPACITY_GUILD;
  const world = `servers of ${shape.members} members (${shape.roles} roles, ${shape.channels} channels, ${shape.emojis} emojis), ${shape.linked} of them with a proven identity holding the human role, the first of the ${shape.linked} proving an identity shared by ${SHARED_EVERY} servers in a row (so ${shape.linked - 1} + 1/${SHARED_EVERY} distinct identities a server)`;
  const layout = `the REST proxy (PROCESS_ROLE=rest-proxy), two shard managers (PROCESS_ROLE=gateway, INTERACTIONS=http, SHARD_COUNT = 2 × ⌈servers / 2,500⌉, SHARD_IDS one half each, all of a manager's shards in one shard process, SHARD_SPAWN_DELAY_SECONDS=0: the identify queue in Redis spaces them 5 s apart, max_concurrency 1) and two web replicas (PROCESS_ROLE=web), each started as npm start starts it (dist/ built by scripts/build.ts, npm start's V8 flags), every process's Discord REST through the proxy; gating on, PostgreSQL (a database of the run's own), the local Redis, a Web3.bio API key (no upstream limit)`;
  const shardFit =
    rows.length >= 2 ? linearFit(rows.map((r) => ({ x: r.guilds, y: sum(r.rss.shards) }))) : undefined;
  const memory: BenchTable = {
    suite: 'Capacity: processes and memory by server count, as an operator runs the bot (issue #37)',
    method: `one run per row, rows one after the other; the stand-in Discord (enforcing a global ${o.discordPerSecond} requests a second per bot token) and Web3.bio in a process of their own holding ${world}; ${layout}; "ready" = spawning both managers → both logged "all shards ready"; RSS = VmRSS from /proc after the re-check cycle, no forced GC; per 1,000 servers = the shard processes' RSS summed over the servers (their floor included); PostgreSQL = pg_database_size after the cycle; Redis = the run's keys (SCAN of its prefix) and their MEMORY USAGE summed, after the cycle (before the interactions: the cache, not the deliveries claimed); load average (1, 5, 15 min) when the cycle ended`,
    targets: [],
    columns: [
      'Servers',
      'Members / proven / distinct identities',
      'Shards',
      'Ready s',
      'Shard processes MiB',
      'Managers MiB',
      'Replicas MiB',
      'Proxy MiB',
      'All processes MiB',
      'Shard processes MiB per 1,000 servers',
      'PostgreSQL MiB',
      'Redis keys / MiB',
      'Load average',
    ],
    rows: rows.map((row) => [
      formatNumber(row.guilds),
      `${formatNumber(row.guilds * shape.members)} / ${formatNumber(row.guilds * shape.linked)} / ${formatNumber(row.identities)}`,
      formatNumber(row.shardCount),
      formatNumber(row.readyMs / 1_000, 1),
      list(row.rss.shards),
      list(row.rss.managers),
      list(row.rss.replicas),
      mib(row.rss.proxy),
      mib(totalRss(row)),
      formatNumber(sum(row.rss.shards) / MIB / (row.guilds / 1_000), 1),
      mib(row.postgresBytes),
      `${formatNumber(row.redis.keys)} / ${formatNumber(row.redis.bytes / MIB, 1)}`,
      row.loadAverage,
    ]),
    notes: shardFit
      ? [
          `Least-squares line through the rows: the shard processes together take ${formatNumber((shardFit.slope * 1_000) / MIB, 1)} MiB per 1,000 servers on top of ${formatNumber(shardFit.intercept / MIB, 0)} MiB (two processes' floor).`,
        ]
      : [],
  };
  const work: BenchTable = {
    suite: 'Capacity: a full re-check cycle, Discord REST and interactions by server count (issue #37)',
    method: `the same runs as the table above; the cycle: the seeding's due checks deleted (saving a proof leaves one at its time), every server made due at once once all shards were ready (last_full_sync_at one GATING_RECHECK_HOURS ago, the interval twice what the member-list walks take at Discord's pace so the cycle is one cycle), timed from the first to the last "guild re-checked" line of both managers, with the requests the stand-in Web3.bio and Discord saw meanwhile; Discord REST at start = from spawning the managers to ready; 429s = every 429 the stand-in Discord answered in the run; interactions: signed cached /whois (each a fresh interaction id, signed before the round) POSTed to both replicas at once for ${formatNumber(o.durationMs / 1_000)} s, ${o.concurrency} in flight per replica on keep-alive connections, after a 1 s warm-up; per CPU second = interactions answered ÷ the two replicas' user + system CPU seconds in the round (/proc/<pid>/stat): the interactions one core serves`,
    targets: [],
    columns: [
      'Servers',
      'Distinct identities',
      'Cycle upstream requests',
      'Cycle s',
      'Discord REST at start',
      'Discord REST in cycle',
      'Discord 429s',
      'Interactions',
      'interactions/s',
      'Replica CPU s',
      'interactions per CPU second',
      'non-200 / wrong',
    ],
    notes: rows.map(
      (row) =>
        `Discord requests in the cycle of ${formatNumber(row.guilds)} servers, by route: ${row.cycle.routes.map(([route, n]) => `${route} ${formatNumber(n)}`).join('; ')}.`,
    ),
    rows: rows.map((row) => [
      formatNumber(row.guilds),
      formatNumber(row.identities),
      formatNumber(row.cycle.upstream),
      formatNumber(row.cycle.ms / 1_000, 1),
      formatNumber(row.startDiscordRequests),
      formatNumber(row.cycle.discord),
      formatNumber(row.discord429s),
      `${formatNumber(row.interactions.answered)}${row.interactions.ranOut ? ' (ran out)' : ''}`,
      formatNumber(row.interactions.perSecond),
      formatNumber(row.interactions.replicaCpuSeconds, 1),
      formatNumber(row.interactions.answered / row.interactions.replicaCpuSeconds),
      formatNumber(row.interactions.failures),
    ]),
  };
  return [memory, work];
}
