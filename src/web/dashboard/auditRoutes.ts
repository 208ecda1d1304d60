/** `/dashboard/:guildId/audit`: the server's audit log, a page at a time, and all of it as CSV. */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { AUDIT_PAGE_SIZE, auditEventsOldestFirst, readAuditPage } from '../../gating/dashboard/reads.ts';
import { AUDIT_COLUMNS, auditActor } from '../../gating/exports/gatingExport.ts';
import type { MessageKey } from '../../i18n/index.ts';
import type { AuditCursor, AuditFilter } from '../../store/types.ts';
import { CSV_BOM, csvRow } from '../../text/csv.ts';
import { renderAudit } from '../pages/dashboardAudit.ts';
import { auditFilterOf } from './auditFilter.ts';
import type { DashboardContext } from './context.ts';
import { type GuildContext, guildRouter } from './guildGate.ts';

const CURSOR = /^(\d{1,16})\.(\d{1,16})$/;

function cursorOf(value: string | null): AuditCursor | undefined | null {
  if (value === null || value === '') return undefined;
  const match = CURSOR.exec(value);
  return match ? { createdAt: Number(match[1]), id: Number(match[2]) } : null;
}

/** The audit log's rows as CSV, oldest first, streamed; a failure midway is logged and ends the download. */
function auditCsv(dash: DashboardContext, ctx: GuildContext, filter: AuditFilter, reply: FastifyReply) {
  const log = dash.logger;
  async function* rows(): AsyncIterable<string> {
    yield CSV_BOM + csvRow(AUDIT_COLUMNS);
    try {
      for await (const e of auditEventsOldestFirst(dash.store, filter)) {
        const member = e.kind === 'settings_changed' ? null : e.userId;
        yield csvRow([
          new Date(e.createdAt).toISOString(),
          e.kind,
          member,
          e.roleId,
          e.reason,
          auditActor(e),
        ]);
      }
    } catch (err) {
      log.error({ err, guildId: ctx.guildId }, 'dashboard audit download failed midway');
      throw err;
    }
  }
  return reply
    .code(200)
    .type('text/csv; charset=utf-8')
    .header('content-disposition', `attachment; filename="audit-${ctx.guildId}.csv"`)
    .send(Readable.from(rows()));
}

/** Registers the audit page and its CSV download. */
export function registerAuditRoutes(app: FastifyInstance, dash: DashboardContext): void {
  const route = guildRouter(app, dash);
  route('/audit', 'GET', '/audit', async (ctx, request, reply) => {
    const query = new URL(request.url, 'http://x.invalid').searchParams;
    const { form, filter, error } = auditFilterOf(ctx.guildId, query);
    const before = cursorOf(query.get('before'));
    const after = cursorOf(query.get('after'));
    const view = { frame: ctx.frame, names: ctx.names, roles: ctx.roles, filter: form };
    if (error || !filter || before === null || after === null) {
      const key: MessageKey = error ?? 'web.dashboard.bad.cursor';
      return dash.send(reply, 400, ctx.frame.locale, (nonce) =>
        renderAudit({ ...view, page: null, error: key }, nonce),
      );
    }
    const page = await readAuditPage(
      dash.store,
      filter,
      { ...(before ? { before } : {}), ...(after ? { after } : {}) },
      AUDIT_PAGE_SIZE,
    );
    return dash.send(reply, 200, ctx.frame.locale, (nonce) => renderAudit({ ...view, page }, nonce));
  });
  route('/audit', 'GET', '/audit.csv', async (ctx, request, reply) => {
    const query = new URL(request.url, 'http://x.invalid').searchParams;
    const { form, filter, error } = auditFilterOf(ctx.guildId, query);
    if (error || !filter) {
      const view = { frame: ctx.frame, names: ctx.names, roles: ctx.roles, filter: form, page: null };
      return dash.send(reply, 400, ctx.frame.locale, (nonce) =>
        renderAudit({ ...view, error: error ?? 'web.dashboard.bad.kind' }, nonce),
      );
    }
    return auditCsv(dash, ctx, filter, reply);
  });
}
