import { ApplicationCommandType } from 'discord-api-types/v10';
import type { Command } from '../src/discord/command.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
  MANAGE_ROLES_PERMISSION,
} from '../src/discord/gatingContext.ts';
import { named } from '../src/i18n/index.ts';
import { renderNotSetUp } from '../src/render/gatingGuild.ts';
import { renderMemberReport } from '../src/render/gatingReport.ts';

export default {
  handedToGateway: true,
  data: {
    ...named('gating.command.checkCredentials'),
    type: ApplicationCommandType.User,
    default_member_permissions: MANAGE_ROLES_PERMISSION,
    integration_types: GUILD_INSTALL_ONLY,
    contexts: GUILD_ONLY_CONTEXTS,
  },
  ephemeral: true,
  async answer(options, ctx) {
    const access = gatingAccess(ctx, { moderator: true });
    if (!access.ok) return access.answer;
    const data = ctx.interaction?.data;
    const targetId =
      data && 'type' in data && data.type === ApplicationCommandType.User
        ? data.target_id
        : typeof options.user === 'string'
          ? options.user
          : ctx.userId;
    if (!(await access.service.guilds.getSettings(access.guildId))) return renderNotSetUp(ctx.render);
    const report = await access.service.members.report(access.guildId, targetId);
    return renderMemberReport(report, guildNames(ctx, [targetId]), ctx.render);
  },
} satisfies Command;
