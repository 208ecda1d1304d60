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
  MANAGE_ROLES_PERMISSION,
} from '../src/discord/gatingContext.ts';
import type { GatingService } from '../src/gating/service.ts';
import {
  type GuildRecheckOutcome,
  renderDisabled,
  renderGuildRecheck,
  renderNotSetUp,
  renderPreview,
  renderRules,
  renderSetupResult,
  renderStatus,
} from '../src/render/gatingGuild.ts';
import { renderMemberRecheck, renderMemberReport } from '../src/render/gatingMember.ts';
import type { MessagePayload } from '../src/render/types.ts';

/** How long `/gating recheck` waits for a whole-server re-check before it answers "still running". */
export const GUILD_RECHECK_WAIT_MS = 10_000;

const role = (name: string, description: string, required: boolean): APIApplicationCommandRoleOption => ({
  type: ApplicationCommandOptionType.Role,
  name,
  description,
  required,
});
const member = (required: boolean, description: string): APIApplicationCommandUserOption => ({
  type: ApplicationCommandOptionType.User,
  name: 'member',
  description,
  required,
});
const subcommand = (
  name: string,
  description: string,
  options: APIApplicationCommandBasicOption[] = [],
): APIApplicationCommandSubcommandOption => ({
  type: ApplicationCommandOptionType.Subcommand,
  name,
  description,
  options,
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
  const result = await service.guilds.setup(
    guildId,
    {
      humanRoleId: idOption(options, 'human-role') ?? '',
      spamRoleId: idOption(options, 'spam-role'),
      riskyRoleId: idOption(options, 'risky-role'),
      minScore: typeof minScore === 'number' ? minScore : null,
      logChannelId: idOption(options, 'log-channel'),
      ...(typeof spamRemovesHuman === 'boolean' ? { spamRemovesHuman } : {}),
    },
    ctx.userId,
  );
  return renderSetupResult(result, guildNames(ctx), ctx.render);
}

async function recheck({ service, guildId, options, ctx }: Run): Promise<MessagePayload> {
  const userId = idOption(options, 'member');
  const cause = `/gating recheck by ${ctx.userId}`;
  if (userId) {
    const sync = await service.members.recheckMember(guildId, userId, cause);
    return renderMemberRecheck(userId, sync, guildNames(ctx, [userId]), ctx.render);
  }
  const confirmRemovals = options['confirm-removals'] === true;
  const running = service.guilds.recheckGuild(guildId, { fresh: true, cause, confirmRemovals });
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

/** Subcommands that need `/gating setup` to have run. */
const NEEDS_SETTINGS = new Set(['rules', 'recheck', 'check', 'preview']);

export default {
  data: {
    name: 'gating',
    description: 'Role gating on web3 credentials (moderators)',
    default_member_permissions: MANAGE_ROLES_PERMISSION,
    integration_types: GUILD_INSTALL_ONLY,
    contexts: GUILD_ONLY_CONTEXTS,
    options: [
      subcommand('setup', 'Turn role gating on, or change its rules', [
        role('human-role', 'Given to members with a valid isHuman credential', true),
        role('spam-role', 'Given to members flagged as spam', false),
        role('risky-role', 'Given to members flagged as risky', false),
        {
          type: ApplicationCommandOptionType.Number,
          name: 'min-score',
          description: 'A humanity score at or above this also earns the human role',
          required: false,
          min_value: 0,
          max_value: 1_000_000,
        },
        {
          type: ApplicationCommandOptionType.Channel,
          name: 'log-channel',
          description: 'Where every role change is posted',
          required: false,
          channel_types: [ChannelType.GuildText, ChannelType.GuildAnnouncement],
        },
        {
          type: ApplicationCommandOptionType.Boolean,
          name: 'spam-removes-human',
          description: 'A spam flag takes the human role away (default: yes)',
          required: false,
        },
      ]),
      subcommand('rules', 'Show the rules'),
      subcommand('disable', 'Turn role gating off (links and roles stay)'),
      subcommand('recheck', 'Re-check with fresh credentials now', [
        member(false, 'Only this member (default: everyone linked)'),
        {
          type: ApplicationCommandOptionType.Boolean,
          name: 'confirm-removals',
          description: 'Also apply removals held back as a mass removal (after an alert)',
          required: false,
        },
      ]),
      subcommand('check', 'A member’s proven identities, credentials and roles', [
        member(true, 'The member to check'),
      ]),
      subcommand('preview', 'Dry run: what a full re-check would add and remove'),
      subcommand('status', 'Permissions, role problems, intents, last sync and queue'),
    ],
  },
  ephemeral: true,
  async answer(options, ctx) {
    const access = gatingAccess(ctx, { moderator: true });
    if (!access.ok) return access.answer;
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
      default:
        return renderStatus(await access.service.guilds.status(access.guildId), guildNames(ctx), ctx.render);
    }
  },
} satisfies Command;
