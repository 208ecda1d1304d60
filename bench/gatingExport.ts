/**
 * `/gating export` for a large server (issue #19, #27): 100,000 linked members, each with a gated role and
 * its audit event, in a SQLite store on disk. Each case runs in a fresh process started with npm start's
 * V8 flags (bench/gatingExportWorker.ts): the streamed export writes the three files by the code the
 * command runs and uploads them as the bot does (one multipart request to a stand-in webhook route in
 * this process); the baseline only holds the members' links in one array (what streaming avoids).
 * Measured: time, and each process's extra memory while the case runs (RSS and heap, sampled every 10 ms,
 * above what they were just before), in several rounds; both seeds: links never re-checked, and links
 * re-checked (each keeps the credentials of its last check, as a running bot's do).
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { fileURLToPath } from 'node:url';
import { npmStartCommand } from '../scripts/npmStart.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import { nextMessage } from './childProcess.ts';
import { type ExportCaseResult, GUILD, ROLE } from './gatingExportWorker.ts';
import { type BenchTable, formatNumber, formatRatio, median, verdict } from './stats.ts';

const WORKER = fileURLToPath(new URL('./gatingExportWorker.ts', import.meta.url));
const MIB = 1024 * 1024;
const TARGET_MIB = 64;
const DAY_MS = 86_400_000;

export interface ExportBenchOptions {
  quick?: boolean;
  progress?: (line: string) => void;
}

type CaseName = 'streamed' | 'baseline';

/** The credentials a re-check stores for a member (two, as the public 0xhelena.eth sample's wallet has). */
function lastResult(address: string): string {
  const id = `ethereum,${address}`;
  const credential = (source: string, label: string, description: string, link: string) => ({
    id,
    platform: source === 'galxe-passport' ? 'galxe' : 'humanpassport',
    category: 'isHuman',
    source,
    type: 'boolean',
    value: 'true',
    label,
    description,
    link,
    updatedAt: 1_734_404_558,
    expiredAt: null,
  });
  return JSON.stringify({
    isHuman: [
      credential(
        'galxe-passport',
        'Galxe KYC Verified',
        'Proof of KYC by Galxe',
        'https://app.galxe.com/passport',
      ),
      credential('human-passport', 'Human Passport', 'Humanity score', 'https://passport.human.tech'),
    ],
    isRisky: [],
    isSpam: [],
  });
}

/** Seeds `members` links and one `role_added` event each, straight into the database file. */
function seed(path: string, members: number, now: number, checked: boolean): void {
  const db = new DatabaseSync(path);
  try {
    db.exec('BEGIN');
    const link = db.prepare(
      `INSERT INTO links (guild_id, user_id, identity, platform, address, proof_method, proven_at, last_check_at, last_check_ok, last_result)
       VALUES (?, ?, ?, 'ens', ?, ?, ?, ?, 1, ?)`,
    );
    const event = db.prepare(
      `INSERT INTO audit_events (guild_id, user_id, kind, role_id, reason, created_at)
       VALUES (?, ?, 'role_added', ?, ?, ?)`,
    );
    for (let i = 0; i < members; i += 1) {
      const userId = String(200_000_000_000_000_000n + BigInt(i));
      const at = now - (i % 60) * DAY_MS;
      const address = `0x${i.toString(16).padStart(40, '0')}`;
      const proof = i % 3 === 0 ? 'signature' : 'record';
      link.run(GUILD, userId, `member${i}.eth`, address, proof, at, at, checked ? lastResult(address) : null);
      event.run(GUILD, userId, ROLE, `web3 gating: isHuman: Passport (member${i}.eth)`, at);
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

/** A stand-in for Discord's webhook route: takes each upload whole, counting its bytes. */
async function startSink(): Promise<{ url: string; uploads: number[]; close: () => Promise<void> }> {
  const uploads: number[] = [];
  const server = createServer(async (req, res) => {
    let bytes = 0;
    for await (const chunk of req) bytes += (chunk as Buffer).byteLength;
    uploads.push(bytes);
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"id":"1"}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`,
    uploads,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** How long one case may take: a few seconds is normal for 100,000 members. */
const CASE_LIMIT_MS = 120_000;

/** Runs one case in a fresh process with npm start's V8 flags. */
async function runCase(path: string, name: CaseName, apiUrl: string): Promise<ExportCaseResult> {
  const child = fork(WORKER, [path, name, apiUrl], {
    execArgv: npmStartCommand().flags,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // A case that never ends is a result too (a query that lost its index once spun for minutes): stop it.
  const limit = setTimeout(() => child.kill('SIGKILL'), CASE_LIMIT_MS);
  try {
    // Killed, the case rejects: "bench child exited (null) before result".
    const result = await nextMessage<ExportCaseResult>(child, 'result');
    if (child.exitCode === null) await once(child, 'exit');
    return result;
  } finally {
    clearTimeout(limit);
  }
}

const SEEDS = [
  { checked: false, label: 'never re-checked' },
  { checked: true, label: 're-checked, 2 credentials kept each' },
] as const;

const mib = (bytes: number) => formatNumber(bytes / MIB);
/** "median (min–max)" of the rounds. */
const spread = (values: number[]) =>
  values.length === 1
    ? mib(values[0] ?? 0)
    : `${mib(median(values))} (${mib(Math.min(...values))}–${mib(Math.max(...values))})`;

export async function runExportBench(options: ExportBenchOptions = {}): Promise<BenchTable[]> {
  const members = options.quick ? 10_000 : 100_000;
  const rounds = options.quick ? 1 : 3;
  const flags = npmStartCommand().flags;
  const dir = await mkdtemp(join(tmpdir(), 'bench-export-'));
  const sink = await startSink();
  const now = Date.now();
  const rows: string[][] = [];
  const notes: string[] = [];
  try {
    for (const { checked, label } of SEEDS) {
      const path = join(dir, `${checked ? 'checked' : 'unchecked'}.db`);
      await (await openSqliteStore(path)).close();
      options.progress?.(`export: seeding ${formatNumber(members)} members (${label})`);
      seed(path, members, now, checked);
      const results: Record<CaseName, ExportCaseResult[]> = { streamed: [], baseline: [] };
      for (let round = 0; round < rounds; round++) {
        const order: CaseName[] = round % 2 === 0 ? ['streamed', 'baseline'] : ['baseline', 'streamed'];
        for (const name of order) {
          options.progress?.(`export: ${label}, round ${round + 1} of ${rounds}, ${name}`);
          results[name].push(await runCase(path, name, sink.url));
        }
      }
      const { streamed, baseline } = results;
      const ratios = streamed.map((s, i) => s.heap / (baseline[i]?.heap ?? Number.NaN));
      const ok =
        streamed.every((s, i) => s.heap < (baseline[i]?.heap ?? 0) && s.rss < TARGET_MIB * MIB) &&
        baseline.every((b) => b.rows === members);
      rows.push(
        [
          `streamed export + upload (${label})`,
          formatNumber(streamed[0]?.rows ?? 0),
          formatNumber(median(streamed.map((r) => r.ms)) / 1_000),
          spread(streamed.map((r) => r.rss)),
          spread(streamed.map((r) => r.heap)),
          `${formatNumber(Math.max(...ratios), 2)}×`,
          verdict(ok),
        ],
        [
          `baseline: the members’ links held in one array (${label})`,
          formatNumber(baseline[0]?.rows ?? 0),
          formatNumber(median(baseline.map((r) => r.ms)) / 1_000),
          spread(baseline.map((r) => r.rss)),
          spread(baseline.map((r) => r.heap)),
          '1.00×',
          '',
        ],
      );
      const files = streamed[0]?.files ?? [];
      notes.push(
        `${label}: files ${files.map((f) => `${f.name} ${formatNumber(f.rows)} rows, ${mib(f.bytes)} MiB`).join('; ')}${
          streamed[0]?.tooLarge.length ? `; too large: ${streamed[0].tooLarge.join(', ')}` : ''
        }.`,
        `${label}, each round (extra RSS / extra heap, MiB): ${streamed
          .map(
            (s, i) =>
              `round ${i + 1} streamed ${mib(s.rss)} / ${mib(s.heap)}, baseline ${mib(baseline[i]?.rss ?? 0)} / ${mib(baseline[i]?.heap ?? 0)} (heap ${formatRatio(s.heap, baseline[i]?.heap ?? Number.NaN)})`,
          )
          .join('; ')}.`,
      );
    }
    notes.push(
      `Uploads received by the stand-in webhook route: ${sink.uploads.length}, ${sink.uploads.map((b) => `${mib(b)} MiB`).join(', ')}.`,
    );
  } finally {
    await sink.close();
    await rm(dir, { recursive: true, force: true });
  }
  return [
    {
      suite: `Export: /gating export of ${formatNumber(members)} members (issues #19, #27)`,
      method: `${rounds} round(s) per seed, the two cases alternating in order; each case in a fresh process (node ${flags.join(' ')}: npm start's V8 flags) on a SQLite store on disk seeded with ${formatNumber(members)} links and one role_added audit event each (60 days of events), links either never re-checked or each keeping the 2 credentials of its last check; streamed = writeGatingExport as /gating export runs it (pages of the store, a 10 MiB attachment limit: larger files gzipped), the files opened and their folder deleted, then uploaded as the bot sends them (InteractionWebhooks, one multipart request, each file streamed from its open handle) to a stand-in webhook route in the bench process; baseline = the same members' links only read into one array; extra memory = the peak rise of the process's RSS and JS heap above their values 200 ms after opening the store, sampled every 10 ms, no forced GC; figures are medians of rounds (min–max)`,
      targets: [
        `streamed: peak extra heap below the baseline's in every round`,
        `streamed: extra RSS < ${TARGET_MIB} MiB in every round`,
      ],
      columns: [
        'Case',
        'Rows',
        'Time s',
        'Peak extra RSS MiB',
        'Peak extra heap MiB',
        'Heap vs baseline (worst round)',
        'Result',
      ],
      rows,
      notes,
    },
  ];
}
