/**
 * Issue #2, cache side: the latency of a warm cache hit through the client, and the memory a cached
 * profile costs (heap per entry, and RSS with 50,000 profiles offered to the default-bounded store).
 * The memory figures come from a fresh child process run with --expose-gc, so nothing else is on its heap.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, MemoryStore } from '../src/cache/memoryStore.ts';
import type { StoredEntry } from '../src/cache/types.ts';
import { DEFAULT_TTL_MS, Web3BioClient } from '../src/web3bio/client.ts';
import { parseResponse, RawProfileList, toProfile } from '../src/web3bio/schemas.ts';
import type { Profile } from '../src/web3bio/types.ts';
import { benchIdentity, benchWireProfiles } from './profiles.ts';
import {
  type BenchTable,
  type Cell,
  formatBytes,
  formatNumber,
  median,
  medianOfRounds,
  type Summary,
  summarize,
  verdict,
} from './stats.ts';

export interface CacheBenchOptions {
  /** A short smoke run: one round, fewer calls, a smaller memory probe. */
  quick?: boolean;
  /** Rounds per measurement; default 5 for the hit latency, 3 for memory (quick: 1). */
  rounds?: number;
  progress?: (line: string) => void;
}

const HIT_P99_TARGET_US = 50;
const HIT_IDENTITY = 'vitalik.eth';
/** What the store keeps a profile answer for: its fresh time plus the default stale-if-error window. */
const RETAIN_MS = DEFAULT_TTL_MS.profile + 24 * 60 * 60_000;
const FILL_ENTRIES = 50_000;
const PROBE_FLAG = '--memory-probe';

/** Run the cache suites; one table each. */
export async function runCacheBench(options: CacheBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const progress = options.progress ?? (() => {});
  progress('cache: warm hit latency');
  const hit = await cacheHitTable(options.rounds ?? (quick ? 1 : 5), quick ? 5_000 : 50_000);
  progress('cache: memory per profile (child processes with --expose-gc)');
  const memory = await memoryTable(options.rounds ?? (quick ? 1 : 3), quick ? 5_000 : FILL_ENTRIES);
  return [hit, memory];
}

async function cacheHitTable(rounds: number, calls: number): Promise<BenchTable> {
  const fake = await startFakeWeb3Bio();
  const client = new Web3BioClient({ baseUrl: fake.url, rateLimit: null });
  try {
    const first = await client.getProfiles(HIT_IDENTITY);
    const second = await client.getProfiles(HIT_IDENTITY);
    if (first.cached || !second.cached)
      throw new Error('cache hit bench: the second lookup was not a cache hit');
    for (let i = 0; i < calls; i++) await client.getProfiles(HIT_IDENTITY);
    const latencies: Summary[] = [];
    const perSecond: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const samples = new Float64Array(calls);
      for (let i = 0; i < calls; i++) {
        const t0 = performance.now();
        await client.getProfiles(HIT_IDENTITY);
        samples[i] = (performance.now() - t0) * 1_000;
      }
      latencies.push(summarize(Array.from(samples)));
      // Throughput without the clock reads in the loop.
      const started = performance.now();
      for (let i = 0; i < calls; i++) await client.getProfiles(HIT_IDENTITY);
      perSecond.push((calls / (performance.now() - started)) * 1_000);
    }
    const upstream = fake.requests.length;
    const latency = medianOfRounds(latencies);
    const worstP99 = Math.max(...latencies.map((l) => l.p99));
    return {
      suite: `Cache hit: client.getProfiles('${HIT_IDENTITY}') on a warm cache (issue #2)`,
      method: `${rounds} round(s) × ${formatNumber(calls)} sequential calls each timed, then ${formatNumber(calls)} untimed for ops/s; default client (MemoryStore); medians of rounds`,
      targets: [`p99 < ${HIT_P99_TARGET_US} µs`],
      columns: [
        'Case',
        'p50 µs',
        'p90 µs',
        'p99 µs',
        'p99 µs (worst round)',
        'max µs',
        'ops/s',
        'Upstream requests',
        'Target',
        'Result',
      ],
      rows: [
        [
          'warm hit',
          formatNumber(latency.p50, 2),
          formatNumber(latency.p90, 2),
          formatNumber(latency.p99, 2),
          formatNumber(worstP99, 2),
          formatNumber(latency.max, 0),
          formatNumber(median(perSecond), 0),
          String(upstream),
          `p99 < ${HIT_P99_TARGET_US} µs`,
          verdict(latency.p99 < HIT_P99_TARGET_US),
        ],
      ],
    };
  } finally {
    await client.close();
    await fake.close();
  }
}

/** Which store a probe fills: the default bounds, or the entry-count bound alone (bytes unbounded). */
export type ProbeBound = 'default' | 'entries-only';

/** What one probe process measured after offering `offered` entries to a fresh MemoryStore. */
export interface MemoryProbe {
  /** Profiles per cached answer (the universal answer: ens, farcaster, lens). */
  profilesPerEntry: number;
  offered: number;
  kept: number;
  calculatedSize: number;
  /** heapUsed after gc, minus before filling. */
  heapGrowth: number;
  rssBefore: number;
  rssAfter: number;
}

/** The universal answer of bench identity `index` as the client caches it. */
function cachedAnswer(index: number): Profile[] {
  return parseResponse(RawProfileList, benchWireProfiles(index), 'bench').map(toProfile);
}

function entryFor(index: number): StoredEntry {
  const fetchedAt = Date.now();
  return {
    value: cachedAnswer(index),
    negative: false,
    fetchedAt,
    expiresAt: fetchedAt + DEFAULT_TTL_MS.profile,
  };
}

function settledHeap(gc: () => void): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** Runs inside the probe process (started with --expose-gc). */
async function probeMemory(bound: ProbeBound, offered: number): Promise<MemoryProbe> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the memory probe needs node --expose-gc');
  // Warm the code paths so their one-time allocations are not counted as entries.
  for (let i = 0; i < 200; i++) entryFor(i);
  const store =
    bound === 'default'
      ? new MemoryStore()
      : new MemoryStore({ maxEntries: DEFAULT_MAX_ENTRIES, maxBytes: Number.MAX_SAFE_INTEGER });
  const heapBefore = settledHeap(gc);
  const rssBefore = process.memoryUsage().rss;
  for (let i = 0; i < offered; i++) {
    await store.set(`profile:*:${benchIdentity(i)}`, entryFor(i), RETAIN_MS);
  }
  return {
    profilesPerEntry: cachedAnswer(0).length,
    offered,
    kept: store.size,
    calculatedSize: store.calculatedSize,
    heapGrowth: settledHeap(gc) - heapBefore,
    rssBefore,
    rssAfter: process.memoryUsage().rss,
  };
}

async function runProbe(bound: ProbeBound, offered: number): Promise<MemoryProbe> {
  const file = fileURLToPath(import.meta.url);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', file, PROBE_FLAG, bound, String(offered)],
    { maxBuffer: 1024 * 1024, timeout: 180_000 },
  );
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as MemoryProbe;
}

async function memoryTable(rounds: number, offered: number): Promise<BenchTable> {
  const probes: Record<ProbeBound, MemoryProbe[]> = { default: [], 'entries-only': [] };
  for (let round = 0; round < rounds; round++) {
    for (const bound of ['default', 'entries-only'] as const)
      probes[bound].push(await runProbe(bound, offered));
  }
  const of = (bound: ProbeBound, pick: (probe: MemoryProbe) => number) => median(probes[bound].map(pick));
  const profilesPerEntry = of('default', (p) => p.profilesPerEntry);
  // Per entry from the store holding every offered entry (bytes unbounded).
  const heapPerEntry = of('entries-only', (p) => p.heapGrowth / p.kept);
  const estimatePerEntry = of('entries-only', (p) => p.calculatedSize / p.kept);
  const limit = formatBytes(DEFAULT_MAX_BYTES);
  const bounds = (bound: ProbeBound): Cell[][] => {
    const calculated = of(bound, (p) => p.calculatedSize);
    const heap = of(bound, (p) => p.heapGrowth);
    const checked = bound === 'default';
    return [
      [
        `${bound}: entries kept of ${formatNumber(offered)} offered`,
        formatNumber(of(bound, (p) => p.kept)),
        '',
        '',
      ],
      [
        `${bound}: calculatedSize`,
        formatBytes(calculated),
        checked ? `≤ ${limit}` : '',
        checked ? verdict(calculated <= DEFAULT_MAX_BYTES) : '',
      ],
      [
        `${bound}: heap held by the entries (growth after gc)`,
        formatBytes(heap),
        checked ? `≤ ${limit}` : '',
        checked ? verdict(heap <= DEFAULT_MAX_BYTES) : '',
      ],
      [
        `${bound}: RSS before → after filling`,
        `${formatBytes(of(bound, (p) => p.rssBefore))} → ${formatBytes(of(bound, (p) => p.rssAfter))}`,
        '',
        '',
      ],
    ];
  };
  return {
    suite: `Memory: heap per cached profile, and RSS with ${formatNumber(offered)} profile answers offered to a MemoryStore (issue #2)`,
    method: `${rounds} round(s), each store filled in a fresh \`node --expose-gc\` process; an entry is one cached universal answer (${formatNumber(profilesPerEntry)} profiles, the shape of vitalik.eth's, names and address varied) built through the client's schema and mapping; "default" = the configured bound (${limit} / ${formatNumber(DEFAULT_MAX_ENTRIES)} entries), "entries-only" = ${formatNumber(DEFAULT_MAX_ENTRIES)} entries with the byte bound lifted; heap = heapUsed after gc minus before filling; medians of rounds`,
    targets: [`default: calculatedSize ≤ ${limit}`, `default: heap held by the kept entries ≤ ${limit}`],
    columns: ['Measure', 'Value', 'Target', 'Result'],
    rows: [
      ['heap per cached entry (measured)', formatBytes(heapPerEntry), '', ''],
      ['heap per cached profile (measured)', formatBytes(heapPerEntry / profilesPerEntry), '', ''],
      ["store's estimate per entry (estimateEntryBytes)", formatBytes(estimatePerEntry), '', ''],
      ['measured ÷ estimate', `${formatNumber(heapPerEntry / estimatePerEntry, 2)}×`, '', ''],
      ...bounds('default'),
      ...bounds('entries-only'),
    ],
  };
}

if (import.meta.main && process.argv[2] === PROBE_FLAG) {
  const bound: ProbeBound = process.argv[3] === 'entries-only' ? 'entries-only' : 'default';
  console.log(JSON.stringify(await probeMemory(bound, Number(process.argv[4]))));
}
