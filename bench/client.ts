/**
 * Issue #2, client side: a cache miss against raw undici on the same route, single-flight under a
 * burst of 1,000 lookups, and batch against single calls. Everything runs against the stand-in
 * Web3.bio on 127.0.0.1.
 */
import { Agent, request } from 'undici';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { DEFAULT_USER_AGENT, Web3BioClient } from '../src/web3bio/client.ts';
import { addBenchProfiles } from './profiles.ts';
import {
  type BenchTable,
  formatNumber,
  formatRatio,
  median,
  medianOfRounds,
  rotate,
  type Summary,
  summarize,
  verdict,
} from './stats.ts';

export interface ClientBenchOptions {
  /** A short smoke run: one round, fewer iterations, a faster stand-in upstream. */
  quick?: boolean;
  /** Rounds per measurement; default 5 (quick: 1). */
  rounds?: number;
  /** Stand-in upstream latency for the burst and batch suites, ms; default 50 (quick: 5). */
  upstreamLatencyMs?: number;
  /** Told what is running, for progress output. */
  progress?: (line: string) => void;
}

/** The client's default: the transport's pool size and its concurrency limit. */
const CONCURRENCY = 8;
const MISS_RATIO_TARGET = 1.3;
const BURST_CALLS = 1_000;
const BURST_IDENTITIES = 50;
const BATCH_IDENTITIES = 300;
const BATCH_REQUEST_TARGET = 10;
/** The same headers the client sends, so raw undici asks for exactly the same thing. */
const RAW_HEADERS = {
  accept: 'application/json, text/plain;q=0.9, */*;q=0.8',
  'user-agent': DEFAULT_USER_AGENT,
};

/** A pool with the settings of the client's own: one definition, used by both contenders. */
function keepAliveAgent(): Agent {
  return new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: CONCURRENCY });
}

/** A client with a cold cache and no rate limiter on `agent`. */
function benchClient(baseUrl: string, agent: Agent): Web3BioClient {
  return new Web3BioClient({ baseUrl, dispatcher: agent, rateLimit: null, concurrency: CONCURRENCY });
}

/** Run every suite of this file; one table each. */
export async function runClientBench(options: ClientBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const rounds = options.rounds ?? (quick ? 1 : 5);
  const latencyMs = options.upstreamLatencyMs ?? (quick ? 5 : 50);
  const progress = options.progress ?? (() => {});
  progress('client: cache miss vs raw undici');
  const miss = await cacheMissTable(rounds, quick);
  const fake = await startFakeWeb3Bio({ latencyMs: 0 });
  try {
    const identities = addBenchProfiles(fake.world, 0, BATCH_IDENTITIES);
    progress('client: 1,000 concurrent lookups');
    const burst = await burstTable(fake, identities.slice(0, BURST_IDENTITIES), rounds, latencyMs);
    progress('client: batch vs single calls');
    const batch = await batchTable(fake, identities, rounds, latencyMs);
    return [miss, burst, batch];
  } finally {
    await fake.close();
  }
}

type Operation = (identity: string) => Promise<unknown>;

interface Contender {
  name: string;
  op: Operation;
}

/** One round: `total` operations, sequentially or by `workers` workers each on its own identity. */
async function measureRound(
  op: Operation,
  identities: readonly string[],
  total: number,
  workers: number,
): Promise<{ latency: Summary; perSecond: number }> {
  const samples: number[] = [];
  const perWorker = Math.ceil(total / workers);
  const started = performance.now();
  await Promise.all(
    Array.from({ length: workers }, async (_, worker) => {
      const identity = identities[worker % identities.length] ?? '';
      for (let i = 0; i < perWorker; i++) {
        const t0 = performance.now();
        await op(identity);
        samples.push((performance.now() - t0) * 1_000);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return { latency: summarize(samples), perSecond: (samples.length / elapsedMs) * 1_000 };
}

async function cacheMissTable(rounds: number, quick: boolean): Promise<BenchTable> {
  // A small world of its own: the stand-in's lookups scan every profile, and its time is in both latencies.
  const fake = await startFakeWeb3Bio({ latencyMs: 0 });
  const identities = addBenchProfiles(fake.world, 0, CONCURRENCY);
  const clientAgent = keepAliveAgent();
  const rawAgent = keepAliveAgent();
  const client = benchClient(fake.url, clientAgent);
  const contenders: Contender[] = [
    // `fresh` bypasses the cache entry; each worker keeps to its own identity so single-flight never joins calls.
    { name: 'client', op: (identity) => client.getProfiles(identity, { fresh: true }) },
    {
      name: 'raw undici',
      op: async (identity) => {
        const response = await request(`${fake.url}/profile/${identity}`, {
          dispatcher: rawAgent,
          headers: RAW_HEADERS,
        });
        const data: unknown = await response.body.json();
        if (response.statusCode !== 200) throw new Error(`raw request: HTTP ${response.statusCode}`);
        return data;
      },
    },
  ];
  const modes = [
    { name: 'sequential', workers: 1, total: quick ? 200 : 1_500 },
    { name: `concurrency ${CONCURRENCY}`, workers: CONCURRENCY, total: quick ? 400 : 4_000 },
  ];
  const rows: string[][] = [];
  try {
    for (const contender of contenders) {
      await measureRound(contender.op, identities, quick ? 100 : 500, CONCURRENCY);
    }
    for (const mode of modes) {
      const results = new Map<string, { latency: Summary[]; perSecond: number[] }>(
        contenders.map((c) => [c.name, { latency: [], perSecond: [] }]),
      );
      const p50Ratios: number[] = [];
      const p99Ratios: number[] = [];
      const p50Overheads: number[] = [];
      for (let round = 0; round < rounds; round++) {
        const byName = new Map<string, Summary>();
        for (const contender of rotate(contenders, round)) {
          fake.requests.length = 0;
          const result = await measureRound(contender.op, identities, mode.total, mode.workers);
          byName.set(contender.name, result.latency);
          results.get(contender.name)?.latency.push(result.latency);
          results.get(contender.name)?.perSecond.push(result.perSecond);
        }
        const ours = byName.get('client');
        const theirs = byName.get('raw undici');
        if (ours && theirs) {
          p50Ratios.push(ours.p50 / theirs.p50);
          p99Ratios.push(ours.p99 / theirs.p99);
          p50Overheads.push(ours.p50 - theirs.p50);
        }
      }
      const p50Ratio = median(p50Ratios);
      for (const contender of contenders) {
        const result = results.get(contender.name);
        if (!result) continue;
        const latency = medianOfRounds(result.latency);
        const isClient = contender.name === 'client';
        rows.push([
          mode.name,
          contender.name,
          formatNumber(latency.p50),
          formatNumber(latency.p99),
          formatNumber(median(result.perSecond), 0),
          isClient ? `${formatNumber(p50Ratio, 2)}×` : '1.00×',
          isClient ? `${formatNumber(median(p99Ratios), 2)}×` : '1.00×',
          isClient ? formatNumber(median(p50Overheads)) : '',
          isClient ? `p50 ≤ ${MISS_RATIO_TARGET}× raw` : '',
          isClient ? verdict(p50Ratio <= MISS_RATIO_TARGET) : '',
        ]);
      }
    }
  } finally {
    await client.close();
    await clientAgent.close();
    await rawAgent.close();
    await fake.close();
  }
  return {
    suite:
      'Cache miss: client.getProfiles (fresh: true) vs raw undici request() on the same route (issue #2)',
    method: `${rounds} round(s), order rotated; ${modes.map((m) => `${m.name}: ${formatNumber(m.total)} requests`).join(', ')} per contender per round; stand-in (in this process, 8 identities in its world) latency 0 ms; rate limiter off; same keep-alive Agent settings (${CONCURRENCY} connections); raw = request() + body.json(); figures are medians of rounds, ratios and overhead (client p50 − raw p50) the median of per-round values`,
    targets: [`client p50 ≤ ${MISS_RATIO_TARGET}× raw undici (sequential and concurrency ${CONCURRENCY})`],
    columns: [
      'Mode',
      'Contender',
      'p50 µs',
      'p99 µs',
      'req/s',
      'p50 ratio',
      'p99 ratio',
      'p50 overhead µs',
      'Target',
      'Result',
    ],
    rows,
  };
}

async function burstTable(
  fake: FakeWeb3Bio,
  identities: readonly string[],
  rounds: number,
  latencyMs: number,
): Promise<BenchTable> {
  fake.setLatency(latencyMs);
  const requests: number[] = [];
  const walls: number[] = [];
  const failures: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const agent = keepAliveAgent();
    const client = benchClient(fake.url, agent);
    fake.requests.length = 0;
    const started = performance.now();
    const settled = await Promise.allSettled(
      Array.from({ length: BURST_CALLS }, (_, i) =>
        client.getProfiles(identities[i % identities.length] ?? ''),
      ),
    );
    walls.push(performance.now() - started);
    requests.push(fake.requests.length);
    failures.push(settled.filter((s) => s.status === 'rejected').length);
    await client.close();
    await agent.close();
  }
  const worst = Math.max(...requests);
  const ok = worst === identities.length && Math.max(...failures) === 0;
  return {
    suite: `Single-flight: ${formatNumber(BURST_CALLS)} concurrent getProfiles over ${identities.length} distinct identities, cold cache (issue #2)`,
    method: `${rounds} round(s), a new client each; stand-in latency ${latencyMs} ms; client concurrency ${CONCURRENCY}; medians of rounds (upstream requests also as the worst round)`,
    targets: [`upstream requests = ${identities.length}`],
    columns: [
      'Case',
      'Calls',
      'Identities',
      'Upstream requests (median)',
      'Upstream requests (worst)',
      'Wall ms',
      'Failed calls',
      'Target',
      'Result',
    ],
    rows: [
      [
        'concurrent burst',
        formatNumber(BURST_CALLS),
        String(identities.length),
        formatNumber(median(requests)),
        formatNumber(worst),
        formatNumber(median(walls)),
        formatNumber(Math.max(...failures)),
        `= ${identities.length} requests`,
        verdict(ok),
      ],
    ],
  };
}

async function batchTable(
  fake: FakeWeb3Bio,
  identities: readonly string[],
  rounds: number,
  latencyMs: number,
): Promise<BenchTable> {
  fake.setLatency(latencyMs);
  type Way = { name: string; run: (client: Web3BioClient) => Promise<number> };
  const ways: Way[] = [
    {
      name: 'batch (getProfilesBatch)',
      run: async (client) => {
        const entries = await client.getProfilesBatch(identities.map((name) => `ens,${name}`));
        return entries.filter((entry) => entry.result !== null).length;
      },
    },
    {
      name: 'single calls (getPlatformProfile)',
      run: async (client) => {
        const settled = await Promise.allSettled(
          identities.map((name) => client.getPlatformProfile('ens', name)),
        );
        return settled.filter((s) => s.status === 'fulfilled').length;
      },
    },
  ];
  const stats = new Map(
    ways.map((way) => [way.name, { requests: [] as number[], walls: [] as number[], found: [] as number[] }]),
  );
  for (let round = 0; round < rounds; round++) {
    for (const way of rotate(ways, round)) {
      const agent = keepAliveAgent();
      const client = benchClient(fake.url, agent);
      fake.requests.length = 0;
      const started = performance.now();
      const found = await way.run(client);
      const stat = stats.get(way.name);
      stat?.walls.push(performance.now() - started);
      stat?.requests.push(fake.requests.length);
      stat?.found.push(found);
      await client.close();
      await agent.close();
    }
  }
  const singleWall = median(stats.get(ways[1]?.name ?? '')?.walls ?? []);
  const rows = ways.map((way, index) => {
    const stat = stats.get(way.name);
    const worst = Math.max(...(stat?.requests ?? []));
    const wall = median(stat?.walls ?? []);
    const isBatch = index === 0;
    const resolvedAll = Math.min(...(stat?.found ?? [])) === identities.length;
    return [
      way.name,
      String(identities.length),
      formatNumber(median(stat?.requests ?? [])),
      formatNumber(wall),
      formatRatio(wall, singleWall),
      `${formatNumber(Math.min(...(stat?.found ?? [])))}/${identities.length}`,
      isBatch ? `≤ ${BATCH_REQUEST_TARGET} requests` : '',
      isBatch ? verdict(worst <= BATCH_REQUEST_TARGET && resolvedAll) : '',
    ];
  });
  return {
    suite: `Batch: ${identities.length} identities through getProfilesBatch vs ${identities.length} getPlatformProfile calls, cold cache (issue #2)`,
    method: `${rounds} round(s), order rotated, a new client each; stand-in latency ${latencyMs} ms; client concurrency ${CONCURRENCY}; medians of rounds`,
    targets: [`batch: ≤ ${BATCH_REQUEST_TARGET} upstream requests`],
    columns: [
      'Way',
      'Identities',
      'Upstream requests',
      'Wall ms',
      'Wall vs singles',
      'Resolved',
      'Target',
      'Result',
    ],
    rows,
  };
}
