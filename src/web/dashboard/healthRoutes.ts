/** `/dashboard/:guildId/health`: the owning process's status for the server, and its verify panels. */
import type { FastifyInstance } from 'fastify';
import { renderHealth } from '../pages/dashboardPages.ts';
import type { DashboardContext } from './context.ts';
import { guildRouter } from './guildGate.ts';

/** Registers the health page. */
export function registerHealthRoutes(app: FastifyInstance, dash: DashboardContext): void {
  guildRouter(app, dash)('/health', 'GET', '/health', async (ctx, _request, reply) => {
    const [status, panels] = await Promise.all([
      ctx.run({ op: 'status' }),
      dash.store.listVerifyPanels(ctx.guildId),
    ]);
    return dash.send(reply, 200, ctx.frame.locale, (nonce) =>
      renderHealth(
        { frame: ctx.frame, names: ctx.names, status, panels, waitSeconds: dash.waitSeconds },
        nonce,
      ),
    );
  });
}
