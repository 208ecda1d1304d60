/**
 * `/gating export` in the bot: Manage Server only (from the member's roles, authority.ts); names from the
 * guild caches; the files written to a temp folder, opened, and the folder deleted at once: the open
 * files keep their bytes (POSIX) until the answer is sent, and are closed then (the payload's `release`).
 */
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ExportFile, writeGatingExport } from '../gating/exports/gatingExport.ts';
import type { GatingService } from '../gating/service.ts';
import { renderExport, renderExportRefused } from '../render/gatingExport.ts';
import type { MessageFile, MessagePayload } from '../render/types.ts';
import type { CommandContext, CommandOptions } from './command.ts';
import { invokerHolds } from './gatingContext.ts';

export const DEFAULT_EXPORT_DAYS = 30;
/** Discord's attachment limit for bots without boosts, when the interaction does not say. */
const DEFAULT_ATTACHMENT_LIMIT = 10 * 1024 * 1024;
/** An interaction's token works this long: nothing can be sent after it, so the files close by then. */
const TOKEN_LIFETIME_MS = 15 * 60_000;

export function exportDays(options: CommandOptions): number {
  const days = options.days;
  return typeof days === 'number' && Number.isInteger(days) && days >= 1 && days <= 365
    ? days
    : DEFAULT_EXPORT_DAYS;
}

/**
 * The written files as attachments, open so their bytes outlive the folder; `release` closes them (at
 * the latest when the interaction's token expires).
 */
export async function attachable(
  written: readonly ExportFile[],
): Promise<{ files: MessageFile[]; release: () => Promise<void> }> {
  const handles: FileHandle[] = [];
  for (const file of written) handles.push(await open(file.path));
  const files = written.map(
    (file, index): MessageFile => ({
      name: file.name,
      contentType: file.gzipped ? 'application/gzip' : 'text/csv; charset=utf-8',
      size: file.bytes,
      // From the first byte each time: a send that is retried reads the file again.
      open: () => (handles[index] as FileHandle).createReadStream({ start: 0, autoClose: false }),
    }),
  );
  let released: Promise<void> | undefined;
  const release = () => {
    released ??= Promise.all(handles.map((handle) => handle.close())).then(() => undefined);
    return released;
  };
  setTimeout(() => void release(), TOKEN_LIFETIME_MS).unref();
  return { files, release };
}

export async function answerGatingExport(
  service: GatingService,
  guildId: string,
  options: CommandOptions,
  ctx: CommandContext,
): Promise<MessagePayload> {
  const interaction = ctx.interaction;
  if (!invokerHolds(ctx, 'export')) return renderExportRefused(ctx.render);
  const guild = service.cachedGuild(guildId);
  const limit =
    interaction && typeof interaction.attachment_size_limit === 'number'
      ? interaction.attachment_size_limit
      : DEFAULT_ATTACHMENT_LIMIT;
  const dir = await mkdtemp(join(tmpdir(), 'gating-export-'));
  try {
    const result = await writeGatingExport(service.exports, {
      guildId,
      days: exportDays(options),
      now: Date.now(),
      dir,
      sizeLimit: limit,
      userName: (id) => guild?.members.cache.get(id)?.user.username ?? service.cachedUserName(id),
      roleName: (id) => guild?.roles.cache.get(id)?.name,
    });
    const { files, release } = await attachable(result.files);
    const rows = (name: string) => result.files.find((f) => f.name.startsWith(name))?.rows ?? 0;
    const payload = renderExport(
      {
        days: result.days,
        members: rows('members'),
        roles: rows('roles'),
        events: rows('audit'),
        gzippedOverMiB: result.files.some((f) => f.gzipped) ? Math.floor(limit / 1024 / 1024) : null,
        tooLarge: result.tooLarge,
      },
      ctx.render,
    );
    return { ...payload, files, release };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
