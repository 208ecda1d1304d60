/** `/dashboard/:guildId/held`: role removals held for confirmation, confirmed or kept from here. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { heldOutcome, renderHeld } from '../pages/dashboardPages.ts';
import type { DashboardContext } from './context.ts';
import { type GuildContext, guildRouter } from './guildGate.ts';

/** How many held removals the page lists. */
const HELD_SHOWN = 200;

/** Registers the held removals page and its two answers (confirm, keep). */
export function registerHeldRoutes(app: FastifyInstance, dash: DashboardContext): void {
  const route = guildRouter(app, dash);
  const heldPage = async (ctx: GuildContext, reply: FastifyReply, extra: { notice?: string } = {}) => {
    const [held, counts] = await Promise.all([
      dash.store.listHeldLosses(ctx.guildId, HELD_SHOWN),
      dash.store.countPendingLosses(ctx.guildId),
    ]);
    return dash.send(reply, 200, ctx.frame.locale, (nonce) =>
      renderHeld({ frame: ctx.frame, names: ctx.names, held, count: counts.held, ...extra }, nonce),
    );
  };
  route('/held', 'GET', '/held', (ctx, _request, reply) => heldPage(ctx, reply));
  for (const [path, op] of [
    ['confirm', 'confirmRemovals'],
    ['keep', 'keepHeld'],
  ] as const) {
    route('/held', 'POST', `/held/${path}`, async (ctx, _request, reply) => {
      const answer = await ctx.run({ op, actorId: ctx.session.userId });
      return heldPage(ctx, reply, { notice: heldOutcome(answer, ctx.frame.locale, dash.waitSeconds) });
    });
  }
}
