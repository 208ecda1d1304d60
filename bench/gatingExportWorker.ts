/**
 * One case of the export benchmark (bench/gatingExport.ts), in a process of its own started with npm
 * start's V8 flags: `streamed` writes the three files as /gating export does and uploads them as the bot
 * does (one multipart request through InteractionWebhooks, to the benchmark's stand-in webhook route);
 * `baseline` only reads the members' links into one array. It samples its own RSS and heap every 10 ms
 * and reports the peak rise above where they were before the case began.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { attachable } from '../src/discord/gatingExport.ts';
import { InteractionWebhooks } from '../src/discord/webhookRest.ts';
import { writeGatingExport } from '../src/gating/exports/gatingExport.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import type { GatingStore, LinkRecord } from '../src/store/types.ts';

export const GUILD = '1187654321098765432';
export const ROLE = '1187654321098765501';
const MIB = 1024 * 1024;
/** Discord's attachment limit without boosts; larger files are gzipped. */
const SIZE_LIMIT = 10 * MIB;

export interface ExportCaseResult {
  type: 'result';
  ms: number;
  /** Peak rise above the start, bytes. */
  rss: number;
  heap: number;
  rows: number;
  files: { name: string; rows: number; bytes: number }[];
  tooLarge: string[];
}

/** The baseline: every member's link read into one array, as an export without streaming would hold them. */
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

/** The export as the bot makes and sends it: files written, opened, their folder deleted, then uploaded. */
async function streamed(
  store: GatingStore,
  apiUrl: string,
): Promise<Omit<ExportCaseResult, 'type' | 'ms' | 'rss' | 'heap'>> {
  const dir = await mkdtemp(join(tmpdir(), 'bench-export-out-'));
  let attached: Awaited<ReturnType<typeof attachable>>;
  let result: Awaited<ReturnType<typeof writeGatingExport>>;
  try {
    result = await writeGatingExport(store, {
      guildId: GUILD,
      days: 30,
      now: Date.now(),
      dir,
      sizeLimit: SIZE_LIMIT,
      userName: () => undefined,
      roleName: () => 'Verified Human',
    });
    attached = await attachable(result.files);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const webhooks = new InteractionWebhooks(apiUrl);
  try {
    await webhooks.patch('/webhooks/1/bench-token/messages/@original', {
      body: { content: '', attachments: attached.files.map((f, id) => ({ id, filename: f.name })) },
      files: attached.files,
      auth: false,
    });
  } finally {
    await attached.release();
    await webhooks.close();
  }
  return {
    rows: result.files.reduce((n, f) => n + f.rows, 0),
    files: result.files.map((f) => ({ name: f.name, rows: f.rows, bytes: f.bytes })),
    tooLarge: result.tooLarge,
  };
}

async function main(): Promise<void> {
  const [path = '', kind = '', apiUrl = ''] = process.argv.slice(2);
  const store = await openSqliteStore(path);
  // Start-up's own allocations settle before the start values are read.
  await delay(200);
  const start = process.memoryUsage();
  let rss = 0;
  let heap = 0;
  const sample = () => {
    const now = process.memoryUsage();
    rss = Math.max(rss, now.rss - start.rss);
    heap = Math.max(heap, now.heapUsed - start.heapUsed);
  };
  const timer = setInterval(sample, 10);
  const began = performance.now();
  let outcome: Omit<ExportCaseResult, 'type' | 'ms' | 'rss' | 'heap'>;
  if (kind === 'streamed') outcome = await streamed(store, apiUrl);
  else {
    const held = await allLinks(store);
    outcome = { rows: held.length, files: [], tooLarge: [] };
    sample();
  }
  sample();
  clearInterval(timer);
  const ms = performance.now() - began;
  await store.close();
  const result: ExportCaseResult = { type: 'result', ms, rss, heap, ...outcome };
  process.send?.(result);
  process.disconnect?.();
}

if (import.meta.main) await main();
