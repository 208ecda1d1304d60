import {
  type APIApplicationCommandBasicOption,
  type APIApplicationCommandRoleOption,
  type APIApplicationCommandSubcommandOption,
  type APIApplicationCommandUserOption,
  ApplicationCommandOptionType,
  ChannelType,
} from 'discord-api-types/v10';
import type { Command, CommandContext, CommandOptions } from '../src/discord/command.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
  invokerOf,
  MANAGE_ROLES_PERMISSION,
} from '../src/discord/gatingContext.ts';
import { answerGatingExport } from '../src/discord/gatingExport.ts';
import { postVerifyPanel } from '../src/discord/verifyPanel.ts';
import type { GatingService } from '../src/gating/service.ts';
import type { RecheckResult } from '../src/gating/types.ts';
import { described } from '../src/i18n/index.ts';
import {
  type GuildRecheckOutcome,
  renderDisabled,
  renderGatedRolesRefused,
  renderGuildRecheck,
  renderNotSetUp,
  renderPreview,
  renderRules,
  renderSetupResult,
  renderStatus,
} from '../src/render/gatingGuild.ts';
import { renderPanelPost } from '../src/render/gatingPanel.ts';
import { renderMemberRecheck, renderMemberReport } from '../src/render/gatingReport.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { answerExempt, EXEMPT_GROUP } from './gatingExempt.ts';
import { answerRule, RULE_COMPONENTS, RULE_GROUP, RULE_SUGGEST } from './gatingRule.ts';

/** How long `/gating recheck` waits for a whole-server re-check before it answers "still running". */
export const GUILD_RECHECK_WAIT_MS = 10_000;

type Subcommand =
  | 'setup'
  | 'rules'
  | 'disable'
  | 'recheck'
  | 'check'
  | 'preview'
  | 'status'
  | 'panel'
  | 'export';

const role = (
  name: 'human-role' | 'spam-role' | 'risky-role',
  required: boolean,
): APIApplicationCommandRoleOption => ({
  type: ApplicationCommandOptionType.Role,
  name,
  ...described(`commands.gating.setup.options.${name}`),
  required,
});
const member = (of: 'recheck' | 'check', required: boolean): APIApplicationCommandUserOption => ({
  type: ApplicationCommandOptionType.User,
  name: 'member',
  ...described(`commands.gating.${of}.options.member`),
  required,
});
const subcommand = (
  name: Subcommand,
  options: APIApplicationCommandBasicOption[] = [],
): APIApplicationCommandSubcommandOption => ({
  type: ApplicationCommandOptionType.Subcommand,
  name,
  ...described(`commands.gating.${name}.description`),
  options,
});

const ageDays = (name: 'min-account-age-days' | 'min-join-age-days'): APIApplicationCommandBasicOption => ({
  type: ApplicationCommandOptionType.Integer,
  name,
  ...described(`commands.gating.setup.options.${name}`),
  required: false,
  min_value: 0,
  max_value: 3650,
});

const idOption = (options: CommandOptions, name: string): string | null => {
  const value = options[name];
  return typeof value === 'string' && value !== '' ? value : null;
};

interface Run {
  service: GatingService;
  guildId: string;
  options: CommandOptions;
  ctx: CommandContext;
}

async function setup({ service, guildId, options, ctx }: Run): Promise<MessagePayload> {
  const minScore = options['min-score'];
  const spamRemovesHuman = options['spam-removes-human'];
  const accountDays = options['min-account-age-days'];
  const joinDays = options['min-join-age-days'];
  const result = await service.guilds.setup(
    guildId,
    {
      humanRoleId: idOption(options, 'human-role') ?? '',
      spamRoleId: idOption(options, 'spam-role'),
      riskyRoleId: idOption(options, 'risky-role'),
      minScore: typeof minScore === 'number' ? minScore : null,
      logChannelId: idOption(options, 'log-channel'),
      ...(typeof spamRemovesHuman === 'boolean' ? { spamRemovesHuman } : {}),
      ...(typeof accountDays === 'number' ? { minAccountAgeDays: accountDays } : {}),
      ...(typeof joinDays === 'number' ? { minJoinAgeDays: joinDays } : {}),
    },
    ctx.userId,
  );
  if ('kind' in result) return renderGatedRolesRefused('setup', result.problems, ctx.render);
  return renderSetupResult(result, guildNames(ctx), ctx.render);
}

async function recheck({ service, guildId, options, ctx }: Run): Promise<MessagePayload> {
  const userId = idOption(options, 'member');
  const cause = `/gating recheck by ${ctx.userId}`;
  if (userId) {
    const sync = await service.members.recheckMember(guildId, userId, cause);
    return renderMemberRecheck(userId, sync, guildNames(ctx, [userId]), ctx.render);
  }
  let running: Promise<RecheckResult>;
  if (options['confirm-removals'] === true) {
    const confirmed = await service.guilds.confirmRemovals(guildId, ctx.userId, cause);
    if (confirmed.kind === 'refused')
      return renderGatedRolesRefused('confirmRemovals', confirmed.problems, ctx.render);
    running = confirmed.run;
  } else {
    running = service.guilds.recheckGuild(guildId, { fresh: true, cause });
  }
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    running.then((summary): GuildRecheckOutcome => ({ kind: 'done', ...summary })),
    new Promise<null>((resolve) => {
      timer = setTimeout(resolve, GUILD_RECHECK_WAIT_MS, null);
    }),
  ]).finally(() => clearTimeout(timer));
  if (waited) return renderGuildRecheck(waited, ctx.render);
  // A large server can take longer than an interaction lives: answer now, let it finish on its own.
  running.catch((error: unknown) =>
    ctx.deps.logger.error({ err: error, guildId }, 'whole-server re-check failed'),
  );
  const status = await service.guilds.status(guildId);
  return renderGuildRecheck({ kind: 'running', linkedMembers: status.linkedMembers }, ctx.render);
}

async function check({ service, guildId, options, ctx }: Run): Promise<MessagePayload> {
  const userId = idOption(options, 'member') ?? ctx.userId;
  const report = await service.members.report(guildId, userId);
  return renderMemberReport(report, guildNames(ctx, [userId]), ctx.render);
}

async function preview({ service, guildId, ctx }: Run): Promise<MessagePayload> {
  const result = await service.guilds.preview(guildId);
  const names = guildNames(
    ctx,
    result.sample.map((s) => s.userId),
  );
  return renderPreview(result, names, ctx.render);
}

async function panel({ service, guildId, options, ctx }: Run): Promise<MessagePayload> {
  const channelId = idOption(options, 'channel') ?? '';
  const guild = service.cachedGuild(guildId);
  const invoker = invokerOf(ctx);
  const result =
    guild && invoker
      ? await postVerifyPanel(guild, channelId, invoker, service.panels, ctx.render)
      : ({ kind: 'notPostable', channelId } as const);
  return renderPanelPost(result, guildNames(ctx), ctx.render);
}

/** Subcommands that need `/gating setup` to have run. */
const NEEDS_SETTINGS = new Set(['rules', 'recheck', 'check', 'preview', 'panel']);

export default {
  handedToGateway: true,
  data: {
    name: 'gating',
    ...described('commands.gating.description'),
    default_member_permissions: MANAGE_ROLES_PERMISSION,
    integration_types: GUILD_INSTALL_ONLY,
    contexts: GUILD_ONLY_CONTEXTS,
    options: [
      subcommand('setup', [
        role('human-role', true),
        role('spam-role', false),
        role('risky-role', false),
        {
          type: ApplicationCommandOptionType.Number,
          name: 'min-score',
          ...described('commands.gating.setup.options.min-score'),
          required: false,
          min_value: 0,
          max_value: 1_000_000,
        },
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'log-channel',
          ...described('commands.gating.setup.options.log-channel'),
          required: false,
          channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        },
        {
          type: ApplicationCommandOptionType.Boolean,
          name: 'spam-removes-human',
          ...described('commands.gating.setup.options.spam-removes-human'),
          required: false,
        },
        ageDays('min-account-age-days'),
        ageDays('min-join-age-days'),
      ]),
      subcommand('rules'),
      subcommand('disable'),
      subcommand('recheck', [
        member('recheck', false),
        {
          type: ApplicationCommandOptionType.Boolean,
          name: 'confirm-removals',
          ...described('commands.gating.recheck.options.confirm-removals'),
          required: false,
        },
      ]),
      subcommand('check', [member('check', true)]),
      subcommand('preview'),
      subcommand('status'),
      subcommand('panel', [
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'channel',
          ...described('commands.gating.panel.options.channel'),
          required: true,
          channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        },
      ]),
      EXEMPT_GROUP,
      RULE_GROUP,
      subcommand('export', [
        {
          type: ApplicationCommandOptionType.Integer,
          name: 'days',
          ...described('commands.gating.export.options.days'),
          required: false,
          min_value: 1,
          max_value: 365,
        },
      ]),
    ],
  },
  ephemeral: true,
  defersAtOnce: (options) => options.subcommand === 'export',
  components: RULE_COMPONENTS,
  suggest: RULE_SUGGEST,
  async answer(options, ctx) {
    const access = gatingAccess(ctx, { moderator: true });
    if (!access.ok) return access.answer;
    if (options.group === 'exempt') return answerExempt(access.service, access.guildId, options, ctx);
    if (options.group === 'rule') return answerRule(access.service, access.guildId, options, ctx);
    const run: Run = { service: access.service, guildId: access.guildId, options, ctx };
    const name = typeof options.subcommand === 'string' ? options.subcommand : '';
    const settings = await access.service.guilds.getSettings(access.guildId);
    if (NEEDS_SETTINGS.has(name) && !settings) return renderNotSetUp(ctx.render);
    if (name === 'recheck' && !settings?.enabled) return renderNotSetUp(ctx.render);
    switch (name) {
      case 'setup':
        return setup(run);
      case 'rules':
        return renderRules(settings, guildNames(ctx), ctx.render);
      case 'disable':
        return renderDisabled(await access.service.guilds.disable(access.guildId, ctx.userId), ctx.render);
      case 'recheck':
        return recheck(run);
      case 'check':
        return check(run);
      case 'preview':
        return preview(run);
      case 'panel':
        return panel(run);
      case 'export':
        return answerGatingExport(access.service, access.guildId, options, ctx);
      default:
        return renderStatus(await access.service.guilds.status(access.guildId), guildNames(ctx), ctx.render);
    }
  },
} satisfies Command;
