/**
 * `/gating export` for a large server (issue #19): 100,000 linked members, each with a gated role and its
 * audit event, written to the three CSV files by the same code the command runs, from a SQLite store on
 * disk. Measured: time, and the process's extra memory while it runs (RSS and heap, sampled every 10 ms,
 * above what they were just before), against the target of 64 MiB; and, as the baseline in the same run,
 * the extra memory of only holding the members' rows in one array (what streaming avoids).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { writeGatingExport } from '../src/gating/exports/gatingExport.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import type { GatingStore, LinkRecord } from '../src/store/types.ts';
import { type BenchTable, formatNumber, verdict } from './stats.ts';

const GUILD = '1187654321098765432';
const ROLE = '1187654321098765501';
const MIB = 1024 * 1024;
const TARGET_MIB = 64;
const DAY_MS = 86_400_000;

export interface ExportBenchOptions {
  quick?: boolean;
  progress?: (line: string) => void;
}

/** Seeds `members` links and one `role_added` event each, straight into the database file. */
function seed(path: string, members: number, now: number): void {
  const db = new DatabaseSync(path);
  try {
    db.exec('BEGIN');
    const link = db.prepare(
      `INSERT INTO links (guild_id, user_id, identity, platform, address, proof_method, proven_at, last_check_at, last_check_ok)
       VALUES (?, ?, ?, 'ens', ?, ?, ?, ?, 1)`,
    );
    const event = db.prepare(
      `INSERT INTO audit_events (guild_id, user_id, kind, role_id, reason, created_at)
       VALUES (?, ?, 'role_added', ?, ?, ?)`,
    );
    for (let i = 0; i < members; i += 1) {
      const userId = String(200_000_000_000_000_000n + BigInt(i));
      const at = now - (i % 60) * DAY_MS;
      const address = `0x${i.toString(16).padStart(40, '0')}`;
      link.run(GUILD, userId, `member${i}.eth`, address, i % 3 === 0 ? 'signature' : 'record', at, at);
      event.run(GUILD, userId, ROLE, `web3 gating: isHuman: Passport (member${i}.eth)`, at);
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
}

/** Runs `work` while sampling RSS and heap; returns the peak rise of each above the start, in bytes. */
async function peakRise<T>(
  work: () => Promise<T>,
): Promise<{ result: T; rss: number; heap: number; ms: number }> {
  const start = process.memoryUsage();
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss - start.rss);
    heap = Math.max(heap, now.heapUsed - start.heapUsed);
  };
  const timer = setInterval(sample, 10);
  const started = performance.now();
  try {
    const result = await work();
    sample();
    return { result, rss, heap, ms: performance.now() - started };
  } finally {
    clearInterval(timer);
  }
}

/** The baseline: every member's link read into one array, as an export without streaming would. */
async function allLinks(store: GatingStore): Promise<LinkRecord[]> {
  const all: LinkRecord[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await store.listLinks(GUILD, { limit: 500, ...(after ? { afterUserId: after } : {}) });
    all.push(...page);
    const last = page.at(-1);
    if (!last || page.length < 500) return all;
    after = last.userId;
  }
}

export async function runExportBench(options: ExportBenchOptions = {}): Promise<BenchTable[]> {
  const members = options.quick ? 10_000 : 100_000;
  const dir = await mkdtemp(join(tmpdir(), 'bench-export-'));
  const now = Date.now();
  try {
    const path = join(dir, 'gating.db');
    await (await openSqliteStore(path)).close();
    options.progress?.(`export: seeding ${formatNumber(members)} members`);
    seed(path, members, now);
    const store = await openSqliteStore(path);
    try {
      const out = join(dir, 'out');
      await mkdir(out);
      options.progress?.('export: writing the three files');
      const streamed = await peakRise(() =>
        writeGatingExport(store, {
          guildId: GUILD,
          days: 30,
          now,
          dir: out,
          sizeLimit: 10 * MIB,
          userName: () => undefined,
          roleName: () => 'Verified Human',
        }),
      );
      const held = await peakRise(() => allLinks(store));
      const rows = streamed.result.files.map(
        (f) => `${f.name} ${formatNumber(f.rows)} rows, ${formatNumber(f.bytes / MIB)} MiB`,
      );
      const ok = streamed.rss < TARGET_MIB * MIB && held.result.length === members;
      return [
        {
          suite: `Export: /gating export of ${formatNumber(members)} members (issue #19)`,
          method: `one run; a SQLite store on disk seeded with ${formatNumber(members)} links and one role_added audit event each (60 days of events); writeGatingExport as /gating export runs it (pages of 500, a 10 MiB attachment limit: larger files gzipped); extra memory = the peak rise of RSS and of the JS heap above their values just before, sampled every 10 ms, no forced GC; baseline in the same run: the same members' links only read into one array`,
          targets: [`extra RSS while exporting < ${TARGET_MIB} MiB`],
          columns: ['Case', 'Rows', 'Time s', 'Peak extra RSS MiB', 'Peak extra heap MiB', 'Result'],
          rows: [
            [
              'streamed export (3 files)',
              formatNumber(streamed.result.files.reduce((n, f) => n + f.rows, 0)),
              formatNumber(streamed.ms / 1_000),
              formatNumber(streamed.rss / MIB),
              formatNumber(streamed.heap / MIB),
              verdict(ok),
            ],
            [
              'baseline: the members’ links held in one array',
              formatNumber(held.result.length),
              formatNumber(held.ms / 1_000),
              formatNumber(held.rss / MIB),
              formatNumber(held.heap / MIB),
              '',
            ],
          ],
          notes: [
            `Files: ${rows.join('; ')}${streamed.result.tooLarge.length > 0 ? `; too large: ${streamed.result.tooLarge.join(', ')}` : ''}.`,
          ],
        },
      ];
    } finally {
      await store.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
