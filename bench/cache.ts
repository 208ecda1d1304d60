/**
 * Issue #2, cache side: the latency of a warm cache hit through the client, and the memory a cached
 * profile costs (heap per entry, and RSS with 50,000 profiles offered to the default-bounded store).
 * The memory figures come from a fresh child process run with --expose-gc, so nothing else is on its heap.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_ENTRIES, MemoryStore } from '../src/cache/memoryStore.ts';
import type { StoredEntry } from '../src/cache/types.ts';
import { DEFAULT_TTL_MS, Web3BioClient } from '../src/web3bio/client.ts';
import { parseResponse, RawProfileList, toProfile } from '../src/web3bio/schemas.ts';
import type { Profile } from '../src/web3bio/types.ts';
import { startFakeWeb3Bio } from '../test/fakes/web3bio/server.ts';
import { benchIdentity, benchWireProfiles } from './profiles.ts';
import {
  type BenchTable,
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
  const memory = await memoryTable(
    options.rounds ?? (quick ? 1 : 3),
    quick ? 1_000 : 5_000,
    quick ? 5_000 : FILL_ENTRIES,
  );
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

/** What one probe process measured. */
export interface MemoryProbe {
  /** Profiles per cached answer (the universal answer: ens, farcaster, lens). */
  profilesPerEntry: number;
  /** Unbounded store with `sampleEntries` entries: heap growth per entry after gc. */
  heapPerEntry: number;
  /** The store's own estimate per entry (`calculatedSize / size`). */
  estimatePerEntry: number;
  /** Default-bounded store offered `fillEntries` entries. */
  fill: {
    offered: number;
    kept: number;
    calculatedSize: number;
    heapGrowth: number;
    rssBefore: number;
    rssAfter: number;
  };
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
async function probeMemory(sampleEntries: number, fillEntries: number): Promise<MemoryProbe> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) throw new Error('the memory probe needs node --expose-gc');
  // Warm the code paths so their one-time allocations are not counted as entries.
  for (let i = 0; i < 200; i++) entryFor(i);

  const unbounded = new MemoryStore({ maxEntries: sampleEntries, maxBytes: Number.MAX_SAFE_INTEGER });
  const heapBefore = settledHeap(gc);
  for (let i = 0; i < sampleEntries; i++) {
    await unbounded.set(`profile:*:${benchIdentity(i)}`, entryFor(i), RETAIN_MS);
  }
  const heapPerEntry = (settledHeap(gc) - heapBefore) / sampleEntries;
  const estimatePerEntry = unbounded.calculatedSize / unbounded.size;
  await unbounded.close();

  const bounded = new MemoryStore();
  const fillHeapBefore = settledHeap(gc);
  const rssBefore = process.memoryUsage().rss;
  for (let i = 0; i < fillEntries; i++) {
    await bounded.set(`profile:*:${benchIdentity(i)}`, entryFor(i), RETAIN_MS);
  }
  const heapGrowth = settledHeap(gc) - fillHeapBefore;
  return {
    profilesPerEntry: cachedAnswer(0).length,
    heapPerEntry,
    estimatePerEntry,
    fill: {
      offered: fillEntries,
      kept: bounded.size,
      calculatedSize: bounded.calculatedSize,
      heapGrowth,
      rssBefore,
      rssAfter: process.memoryUsage().rss,
    },
  };
}

async function runProbe(sampleEntries: number, fillEntries: number): Promise<MemoryProbe> {
  const file = fileURLToPath(import.meta.url);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--expose-gc', file, PROBE_FLAG, String(sampleEntries), String(fillEntries)],
    { maxBuffer: 1024 * 1024, timeout: 120_000 },
  );
  const last = stdout.trim().split('\n').at(-1) ?? '';
  return JSON.parse(last) as MemoryProbe;
}

async function memoryTable(rounds: number, sampleEntries: number, fillEntries: number): Promise<BenchTable> {
  const probes: MemoryProbe[] = [];
  for (let round = 0; round < rounds; round++) probes.push(await runProbe(sampleEntries, fillEntries));
  const of = (pick: (probe: MemoryProbe) => number) => median(probes.map(pick));
  const profilesPerEntry = of((p) => p.profilesPerEntry);
  const heapPerEntry = of((p) => p.heapPerEntry);
  const estimatePerEntry = of((p) => p.estimatePerEntry);
  const kept = of((p) => p.fill.kept);
  const calculatedSize = of((p) => p.fill.calculatedSize);
  const heapGrowth = of((p) => p.fill.heapGrowth);
  const rssBefore = of((p) => p.fill.rssBefore);
  const rssAfter = of((p) => p.fill.rssAfter);
  const bound = `${formatBytes(DEFAULT_MAX_BYTES)} / ${formatNumber(DEFAULT_MAX_ENTRIES)} entries`;
  return {
    suite:
      'Memory: heap per cached profile, and RSS with 50,000 profiles offered to the default-bounded MemoryStore (issue #2)',
    method: `${rounds} round(s), each a fresh \`node --expose-gc\` process; an entry is one cached universal answer (${formatNumber(profilesPerEntry)} profiles, the shape of vitalik.eth's, names and address varied), built through the client's schema and mapping; heap per entry from ${formatNumber(sampleEntries)} entries in an unbounded store (heapUsed after gc, minus before); medians of rounds`,
    targets: [
      `calculatedSize ≤ ${formatBytes(DEFAULT_MAX_BYTES)}`,
      `heap held by the kept entries ≤ ${formatBytes(DEFAULT_MAX_BYTES)}`,
    ],
    columns: ['Measure', 'Value', 'Target', 'Result'],
    rows: [
      ['heap per cached entry (measured)', formatBytes(heapPerEntry), '', ''],
      ['heap per cached profile (measured)', formatBytes(heapPerEntry / profilesPerEntry), '', ''],
      ["store's estimate per entry (estimateEntryBytes)", formatBytes(estimatePerEntry), '', ''],
      ['measured ÷ estimate', `${formatNumber(heapPerEntry / estimatePerEntry, 2)}×`, '', ''],
      [`entries offered (bound ${bound})`, formatNumber(of((p) => p.fill.offered)), '', ''],
      ['entries kept', formatNumber(kept), '', ''],
      [
        'calculatedSize',
        formatBytes(calculatedSize),
        `≤ ${formatBytes(DEFAULT_MAX_BYTES)}`,
        verdict(calculatedSize <= DEFAULT_MAX_BYTES),
      ],
      [
        'heap growth with the kept entries (after gc)',
        formatBytes(heapGrowth),
        `≤ ${formatBytes(DEFAULT_MAX_BYTES)}`,
        verdict(heapGrowth <= DEFAULT_MAX_BYTES),
      ],
      ['RSS before filling', formatBytes(rssBefore), '', ''],
      ['RSS after filling', formatBytes(rssAfter), '', ''],
    ],
  };
}

if (import.meta.main && process.argv[2] === PROBE_FLAG) {
  const sampleEntries = Number(process.argv[3]);
  const fillEntries = Number(process.argv[4]);
  console.log(JSON.stringify(await probeMemory(sampleEntries, fillEntries)));
}
