/** `/dashboard/:guildId`: the server's overview, its charts over the chosen period. */
import type { FastifyInstance } from 'fastify';
import { CHART_DAYS, type ChartDays, LinkedCounts, readOverview } from '../../gating/dashboard/reads.ts';
import { renderOverview } from '../pages/dashboardOverview.ts';
import type { DashboardContext } from './context.ts';
import { guildRouter } from './guildGate.ts';

/** Registers the overview page. */
export function registerOverviewRoutes(app: FastifyInstance, dash: DashboardContext): void {
  const linkedCounts = new LinkedCounts();
  guildRouter(app, dash)('', 'GET', '', async (ctx, request, reply) => {
    const days = Number(new URL(request.url, 'http://x.invalid').searchParams.get('days'));
    const period: ChartDays = (CHART_DAYS as readonly number[]).includes(days) ? (days as ChartDays) : 30;
    const overview = await readOverview(dash.store, ctx.guildId, {
      now: dash.now(),
      days: period,
      linkedCounts,
    });
    return dash.send(reply, 200, ctx.frame.locale, (nonce) =>
      renderOverview({ frame: ctx.frame, names: ctx.names, overview }, nonce),
    );
  });
}
