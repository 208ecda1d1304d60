/** `/dashboard/:guildId/rules`: the server's role rules, a rule previewed before it is applied, removed. */
import type { FastifyInstance, FastifyReply } from 'fastify';
import { MAX_RULE_VALUE, RULE_KINDS, type RuleMatch } from '../../gating/rules/roleRules.ts';
import { loadRoleRules } from '../../gating/rules/ruleReads.ts';
import type { MessageKey } from '../../i18n/index.ts';
import { notice } from '../pages/dashboardParts.ts';
import { type RuleForm, renderRules, ruleOutcome } from '../pages/dashboardRules.ts';
import { text } from '../pages/words.ts';
import { type DashboardContext, formOf } from './context.ts';
import { type GuildContext, guildRouter } from './guildGate.ts';

const MAX_RULE_OPTION = 120;

type RulesExtra = {
  notice?: string;
  form?: RuleForm;
  preview?: Parameters<typeof renderRules>[0]['preview'];
};

/** Registers the rules page, the preview of a rule and its apply and remove. */
export function registerRulesRoutes(app: FastifyInstance, dash: DashboardContext): void {
  const route = guildRouter(app, dash);
  const { waitSeconds } = dash;
  const rulesPage = async (
    ctx: GuildContext,
    reply: FastifyReply,
    status: number,
    extra: RulesExtra = {},
  ) => {
    const [settings, rules] = await Promise.all([
      dash.store.getGuildSettings(ctx.guildId),
      loadRoleRules(dash.store, ctx.guildId),
    ]);
    return dash.send(reply, status, ctx.frame.locale, (nonce) =>
      renderRules(
        { frame: ctx.frame, names: ctx.names, settings: settings ?? null, rules, roles: ctx.roles, ...extra },
        nonce,
      ),
    );
  };
  route('/rules', 'GET', '/rules', (ctx, _request, reply) => rulesPage(ctx, reply, 200));
  route('/rules', 'POST', '/rules/preview', async (ctx, request, reply) => {
    const f = formOf(request.body);
    const form: RuleForm = {
      roleId: (f.role ?? '').trim(),
      kind: (f.kind ?? '').trim(),
      value: (f.value ?? '').trim(),
      match: f.match === 'all' || f.match === 'any' ? f.match : '',
    };
    const bad = (key: MessageKey) =>
      rulesPage(ctx, reply, 400, { form, notice: notice('error', text(ctx.frame.locale, key)) });
    if (!ctx.roles.some((r) => r.id === form.roleId)) return bad('web.dashboard.bad.role');
    if (!(RULE_KINDS as readonly string[]).includes(form.kind)) return bad('web.dashboard.bad.kind');
    if (form.value === '' || form.value.length > MAX_RULE_VALUE) return bad('web.dashboard.bad.value');
    const answer = await ctx.run({
      op: 'rulePreview',
      actorId: ctx.session.userId,
      roleId: form.roleId,
      kind: form.kind,
      value: form.value,
      match: (form.match || null) as RuleMatch | null,
    });
    const outcome = ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds);
    return rulesPage(ctx, reply, 200, { form, ...outcome });
  });
  route('/rules', 'POST', '/rules/apply', async (ctx, request, reply) => {
    const f = formOf(request.body);
    const roleId = (f.role ?? '').trim();
    const condition = (f.condition ?? '').trim();
    if (!ctx.roles.some((r) => r.id === roleId) || condition === '' || condition.length > MAX_RULE_OPTION)
      return rulesPage(ctx, reply, 400, {
        notice: notice('error', text(ctx.frame.locale, 'web.dashboard.bad.role')),
      });
    const match = f.match === 'all' || f.match === 'any' ? f.match : null;
    const answer = await ctx.run({ op: 'ruleApply', actorId: ctx.session.userId, roleId, condition, match });
    return rulesPage(ctx, reply, 200, ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds));
  });
  route('/rules', 'POST', '/rules/remove', async (ctx, request, reply) => {
    const rule = (formOf(request.body).rule ?? '').trim();
    if (rule === '' || rule.length > MAX_RULE_OPTION)
      return rulesPage(ctx, reply, 400, {
        notice: notice('error', text(ctx.frame.locale, 'web.dashboard.rules.notFound')),
      });
    const answer = await ctx.run({ op: 'ruleRemove', actorId: ctx.session.userId, rule });
    return rulesPage(ctx, reply, 200, ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds));
  });
}
