/**
 * The export's writer on a store of its own: the files are what the store holds, row for row, across
 * store pages and the writer's byte chunks; a file over the limit is gzipped, one still over it left out.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EXPORT_PAGE_SIZE,
  MEMBER_COLUMNS,
  writeGatingExport,
} from '../../../src/gating/exports/gatingExport.ts';
import { openSqliteStore } from '../../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../../src/store/types.ts';
import { CSV_BOM, csvRow } from '../../../src/text/csv.ts';

const G = '1187654321098765432';
let dir: string;
let store: GatingStore;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'export-writer-'));
  store = await openSqliteStore(join(dir, 'gating.db'));
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** Members across several store pages; one identity longer than the writer's 64 KiB chunk. */
async function seed(members: number): Promise<string> {
  for (let i = 0; i < members; i++) {
    const identity = i === 7 ? `${'long'.repeat(20_000)}.eth` : `member${i}.eth`;
    await store.saveLink(
      {
        guildId: G,
        userId: String(200_000_000_000_000_000n + BigInt(i)),
        identity,
        platform: 'ens',
        address: null,
        proofMethod: i % 2 ? 'record' : 'signature',
        provenAt: 1_700_000_000_000 + i,
      },
      'seeded',
    );
  }
  const links = await store.listLinks(G);
  const iso = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString());
  const rows = links.map((l) =>
    csvRow([l.userId, '', l.identity, l.platform, l.proofMethod, iso(l.provenAt), iso(l.lastCheckAt), '']),
  );
  return CSV_BOM + csvRow(MEMBER_COLUMNS) + rows.join('');
}

/** An export request into a fresh folder of its own. */
const request = async (sizeLimit: number) => ({
  guildId: G,
  days: 30,
  now: Date.now(),
  dir: await mkdtemp(join(dir, 'out-')),
  sizeLimit,
  userName: () => undefined,
  roleName: () => undefined,
});

describe('writeGatingExport', () => {
  it('writes every member once, in order, across store pages and write chunks', async () => {
    const expected = await seed(EXPORT_PAGE_SIZE * 2 + 17);
    expect(Buffer.byteLength(expected)).toBeGreaterThan(64 * 1024);
    const result = await writeGatingExport(store, await request(10 * 1024 * 1024));
    const members = result.files.find((f) => f.name === 'members.csv');
    expect(members?.rows).toBe(EXPORT_PAGE_SIZE * 2 + 17);
    expect(await readFile(members?.path ?? '', 'utf8')).toBe(expected);
    expect(members?.bytes).toBe(Buffer.byteLength(expected));
    expect(result.tooLarge).toEqual([]);
  });

  it('gzips a file over the limit, and names one still over it instead of attaching it', async () => {
    const expected = await seed(300);
    const plain = Buffer.byteLength(expected);
    const zipped = await writeGatingExport(store, await request(plain - 1));
    const members = zipped.files.find((f) => f.name === 'members.csv.gz');
    expect(members?.gzipped).toBe(true);
    expect(gunzipSync(await readFile(members?.path ?? '')).toString('utf8')).toBe(expected);

    const tight = await writeGatingExport(store, await request(64));
    expect(tight.tooLarge).toContain('members.csv.gz');
    expect(tight.files.map((f) => f.name)).not.toContain('members.csv.gz');
  });
});
