/**
 * `/gating export`: a guild's members and proven identities, the roles gating gave them and why, and
 * the audit events of a period, as CSV files written row by row from store pages to a temp folder (a
 * large server is never held in memory). A file over the attachment limit is gzipped; one still over
 * it is reported, not attached. Column headers stay English: the files are for machines and sheets.
 */

import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import type { AuditEvent, GatingStore, LinkSummary } from '../../store/types.ts';
import { CSV_BOM, type CsvValue, csvRow } from '../../text/csv.ts';

/**
 * Rows per store page. A page lives while its rows are written: under npm start's V8 flags (a 2 MiB
 * young generation) a page of 500 outlived young collections and piled up in the old generation until a
 * full one; of 100, hardly any survives (npm run bench -- --only export).
 */
export const EXPORT_PAGE_SIZE = 100;
const DAY_MS = 86_400_000;

export const MEMBER_COLUMNS = [
  'member_id',
  'username',
  'identity',
  'platform',
  'proof_method',
  'proven_at',
  'last_check_at',
  'last_check_ok',
] as const;
export const ROLE_COLUMNS = ['member_id', 'role_id', 'role_name', 'reason', 'since'] as const;
export const AUDIT_COLUMNS = ['time', 'kind', 'member_id', 'role_id', 'reason', 'actor'] as const;

export type ExportStore = Pick<GatingStore, 'listLinkSummaries' | 'listHeldRoles' | 'pageAuditEvents'>;

export interface ExportRequest {
  guildId: string;
  /** The audit file covers this many days up to `now`. */
  days: number;
  now: number;
  /** An empty folder the files are written to; the caller deletes it. */
  dir: string;
  /** Files larger than this are gzipped; still larger ones are not attached. */
  sizeLimit: number;
  /** Names known to the bot's caches; undefined when unknown. */
  userName: (userId: string) => string | undefined;
  roleName: (roleId: string) => string | undefined;
}

export interface ExportFile {
  name: string;
  path: string;
  bytes: number;
  rows: number;
  gzipped: boolean;
}

export interface ExportResult {
  files: ExportFile[];
  /** Files too large even gzipped: their names (not attached). */
  tooLarge: string[];
  days: number;
}

const iso = (ms: number | null): string => (ms === null ? '' : new Date(ms).toISOString());

/** Bytes gathered before each write to the file. */
const WRITE_CHUNK = 64 * 1024;

/**
 * Writes one CSV file from an async source of rows. Each row is encoded straight into one reused byte
 * buffer, written out when full: a row's string dies at once, and no queue of chunks (a write stream's)
 * outlives the young generation's collections.
 */
async function writeCsv(
  path: string,
  header: readonly string[],
  rows: AsyncIterable<readonly CsvValue[]>,
): Promise<number> {
  const file = await open(path, 'w');
  const chunk = Buffer.allocUnsafe(WRITE_CHUNK);
  let used = 0;
  let count = 0;
  const add = async (text: string) => {
    if (used + Buffer.byteLength(text) > WRITE_CHUNK) {
      await writeAll(file, chunk.subarray(0, used));
      used = 0;
    }
    if (Buffer.byteLength(text) > WRITE_CHUNK) await writeAll(file, Buffer.from(text));
    else used += chunk.write(text, used);
  };
  try {
    await add(CSV_BOM + csvRow(header));
    for await (const row of rows) {
      count++;
      await add(csvRow(row));
    }
    await writeAll(file, chunk.subarray(0, used));
  } finally {
    await file.close();
  }
  return count;
}

async function writeAll(file: FileHandle, bytes: Buffer): Promise<void> {
  for (let done = 0; done < bytes.byteLength; )
    done += (await file.write(bytes, done, bytes.byteLength - done)).bytesWritten;
}

async function* memberRows(store: ExportStore, req: ExportRequest): AsyncIterable<CsvValue[]> {
  let after: string | undefined;
  for (;;) {
    const page: LinkSummary[] = await store.listLinkSummaries(req.guildId, {
      ...(after === undefined ? {} : { afterUserId: after }),
      limit: EXPORT_PAGE_SIZE,
    });
    if (page.length === 0) return;
    for (const link of page) {
      if (link.releasedAt !== null) continue;
      yield [
        link.userId,
        req.userName(link.userId) ?? '',
        link.identity,
        link.platform,
        link.proofMethod,
        iso(link.provenAt),
        iso(link.lastCheckAt),
        link.lastCheckOk === null ? '' : link.lastCheckOk,
      ];
    }
    after = page.at(-1)?.userId;
  }
}

async function* roleRows(store: ExportStore, req: ExportRequest): AsyncIterable<CsvValue[]> {
  let after: { userId: string; roleId: string } | undefined;
  for (;;) {
    const page = await store.listHeldRoles(req.guildId, {
      ...(after ? { after } : {}),
      limit: EXPORT_PAGE_SIZE,
    });
    for (const held of page) {
      yield [held.userId, held.roleId, req.roleName(held.roleId) ?? '', held.reason, iso(held.at)];
    }
    const last = page.at(-1);
    if (!last || page.length < EXPORT_PAGE_SIZE) return;
    after = { userId: last.userId, roleId: last.roleId };
  }
}

const ACTOR_IN_REASON = /\bby (\d{17,20})\b/;

/** Who caused an event: the admin of a settings change, a moderator named in the reason, else the bot. */
export function auditActor(event: AuditEvent): string {
  if (event.kind === 'settings_changed') return event.userId ?? '';
  return ACTOR_IN_REASON.exec(event.reason)?.[1] ?? 'bot';
}

async function* auditRows(store: ExportStore, req: ExportRequest): AsyncIterable<CsvValue[]> {
  const since = req.now - req.days * DAY_MS;
  let after: { createdAt: number; id: number } | undefined;
  for (;;) {
    const page = await store.pageAuditEvents({
      guildId: req.guildId,
      since,
      ...(after ? { after } : {}),
      limit: EXPORT_PAGE_SIZE,
    });
    for (const e of page) {
      const member = e.kind === 'settings_changed' ? null : e.userId;
      yield [iso(e.createdAt), e.kind, member, e.roleId, e.reason, auditActor(e)];
    }
    const last = page.at(-1);
    if (!last || page.length < EXPORT_PAGE_SIZE) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}

/** Gzips `file` next to it when it is over the limit; the smaller form is the one kept. */
async function fitted(file: ExportFile, sizeLimit: number): Promise<ExportFile> {
  if (file.bytes <= sizeLimit) return file;
  const path = `${file.path}.gz`;
  await pipeline(createReadStream(file.path), createGzip({ level: 9 }), createWriteStream(path));
  return { ...file, name: `${file.name}.gz`, path, bytes: (await stat(path)).size, gzipped: true };
}

/** Writes the three files; the caller attaches `files` and deletes `req.dir`. */
export async function writeGatingExport(store: ExportStore, req: ExportRequest): Promise<ExportResult> {
  const specs = [
    { name: 'members.csv', header: MEMBER_COLUMNS, rows: memberRows(store, req) },
    { name: 'roles.csv', header: ROLE_COLUMNS, rows: roleRows(store, req) },
    { name: `audit-${req.days}d.csv`, header: AUDIT_COLUMNS, rows: auditRows(store, req) },
  ];
  const files: ExportFile[] = [];
  const tooLarge: string[] = [];
  for (const spec of specs) {
    const path = join(req.dir, spec.name);
    const rows = await writeCsv(path, spec.header, spec.rows);
    const file = await fitted(
      { name: spec.name, path, bytes: (await stat(path)).size, rows, gzipped: false },
      req.sizeLimit,
    );
    if (file.bytes <= req.sizeLimit) files.push(file);
    else tooLarge.push(file.name);
  }
  return { files, tooLarge, days: req.days };
}
