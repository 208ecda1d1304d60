import type { Command } from '../src/discord/command.ts';
import { GUILD_ONLY_CONTEXTS, gatingAccess, guildNames } from '../src/discord/gatingContext.ts';
import { renderNotSetUp } from '../src/render/gatingGuild.ts';
import { renderLinkedRoleStatus, renderWhoami } from '../src/render/gatingMember.ts';

export default {
  data: {
    name: 'whoami',
    description: 'Your proven web3 identities here, and the credential behind each gated role',
    contexts: GUILD_ONLY_CONTEXTS,
  },
  cooldown: true,
  ephemeral: true,
  async answer(_options, ctx) {
    const access = gatingAccess(ctx);
    if (!access.ok) return access.answer;
    const linkedRole = await access.service.linkedRoles?.status(ctx.userId);
    if (!(await access.service.guilds.getSettings(access.guildId))) {
      return linkedRole ? renderLinkedRoleStatus(linkedRole, ctx.render) : renderNotSetUp(ctx.render);
    }
    const report = await access.service.members.report(access.guildId, ctx.userId);
    return renderWhoami(report, guildNames(ctx), ctx.render, linkedRole);
  },
} satisfies Command;
