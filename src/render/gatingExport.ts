/** `/gating export`'s answer: what the attached files hold, or why nothing was exported. Pure. */
import { t } from '../i18n/index.ts';
import type { MessagePayload, RenderContext } from './types.ts';

export interface ExportSummary {
  days: number;
  members: number;
  roles: number;
  events: number;
  /** The attachment limit in MiB, when a file had to be gzipped. */
  gzippedOverMiB: number | null;
  /** Files not attached: too large even gzipped. */
  tooLarge: string[];
}

const text = (content: string): MessagePayload => ({
  content,
  embeds: [],
  components: [],
  allowed_mentions: { parse: [] },
});

export function renderExportRefused(ctx: RenderContext): MessagePayload {
  return text(t(ctx.locale, 'gating.export.needsManageServer'));
}

export function renderExport(s: ExportSummary, ctx: RenderContext): MessagePayload {
  const lines = [
    t(ctx.locale, 'gating.export.done', {
      days: s.days,
      members: s.members,
      roles: s.roles,
      events: s.events,
    }),
  ];
  if (s.gzippedOverMiB !== null)
    lines.push(t(ctx.locale, 'gating.export.gzipped', { limit: s.gzippedOverMiB }));
  if (s.tooLarge.length > 0)
    lines.push(t(ctx.locale, 'gating.export.tooLarge', { files: s.tooLarge.join(', '), days: s.days }));
  return text(lines.join('\n'));
}
