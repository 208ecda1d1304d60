/** `/dashboard/:guildId/exemptions`: members and roles role gating leaves alone, added and lifted. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { MessageKey } from '../../i18n/index.ts';
import { exemptOutcome, renderExemptions } from '../pages/dashboardPages.ts';
import { notice } from '../pages/dashboardParts.ts';
import { text } from '../pages/words.ts';
import { USER_ID } from './auditFilter.ts';
import { type DashboardContext, formOf } from './context.ts';
import { type GuildContext, guildRouter } from './guildGate.ts';

type ExemptionsExtra = { notice?: string; form?: { member: string; roleId: string } };

/** Registers the exemptions page and its add and remove. */
export function registerExemptionsRoutes(app: FastifyInstance, dash: DashboardContext): void {
  const route = guildRouter(app, dash);
  const exemptionsPage = async (
    ctx: GuildContext,
    reply: FastifyReply,
    status: number,
    extra: ExemptionsExtra = {},
  ) => {
    const exemptions = await dash.store.listExemptions(ctx.guildId);
    return dash.send(reply, status, ctx.frame.locale, (nonce) =>
      renderExemptions({ frame: ctx.frame, names: ctx.names, exemptions, roles: ctx.roles, ...extra }, nonce),
    );
  };
  route('/exemptions', 'GET', '/exemptions', (ctx, _request, reply) => exemptionsPage(ctx, reply, 200));
  for (const change of ['add', 'remove'] as const) {
    route('/exemptions', 'POST', `/exemptions/${change}`, async (ctx, request, reply) => {
      const f = formOf(request.body);
      const member = (f.member ?? '').trim();
      const roleId = (f.role ?? '').trim();
      const form = { member, roleId };
      const bad = (key: MessageKey) =>
        exemptionsPage(ctx, reply, 400, { form, notice: notice('error', text(ctx.frame.locale, key)) });
      if ((member === '') === (roleId === '')) return bad('gating.exempt.needsTarget');
      if (member !== '' && !USER_ID.test(member)) return bad('web.dashboard.bad.member');
      // A role no longer in the server can still be lifted from the list.
      if (roleId !== '' && !ctx.names.roles.has(roleId) && !(change === 'remove' && USER_ID.test(roleId)))
        return bad('web.dashboard.bad.role');
      const target =
        member !== ''
          ? ({ kind: 'member', targetId: member } as const)
          : ({ kind: 'role', targetId: roleId } as const);
      const answer = await ctx.run({
        op: change === 'add' ? 'exemptAdd' : 'exemptRemove',
        actorId: ctx.session.userId,
        target,
      });
      return exemptionsPage(ctx, reply, 200, {
        notice: exemptOutcome(answer, ctx.names, ctx.frame.locale, dash.waitSeconds),
      });
    });
  }
}
