import type { Command, CommandContext } from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
} from '../src/discord/gatingContext.ts';
import { described } from '../src/i18n/index.ts';
import { withProofsField } from '../src/render/accountProofs.ts';
import { renderNotSetUp } from '../src/render/gatingGuild.ts';
import { renderLinkedRoleStatus } from '../src/render/gatingMember.ts';
import { renderWhoami } from '../src/render/gatingReport.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { verify } from './verify.ts';

/** A button on /whoami that starts /verify of a wallet for whoever clicks it. */
const signButtonId = (address: string) => encodeCustomId('whoami', 'sign', address);

/** The member's links, roles and Linked Roles connection in this server. */
async function whoami(ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const linkedRole = await access.service.linkedRoles?.status(ctx.userId);
  if (!(await access.service.guilds.getSettings(access.guildId))) {
    return linkedRole ? renderLinkedRoleStatus(linkedRole, ctx.render) : renderNotSetUp(ctx.render);
  }
  const { carrier } = access.service.verification;
  const [report, proofs, shared] = await Promise.all([
    access.service.members.report(access.guildId, ctx.userId),
    carrier.proofsInServers(ctx.userId),
    carrier.shares(ctx.userId),
  ]);
  const payload = renderWhoami(report, guildNames(ctx), ctx.render, linkedRole, signButtonId);
  return proofs.length > 0 ? withProofsField(payload, proofs, shared, ctx.render) : payload;
}

export default {
  handedToGateway: true,
  data: {
    name: 'whoami',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.whoami.description'),
    contexts: GUILD_ONLY_CONTEXTS,
  },
  cooldown: true,
  ephemeral: true,
  // The message is private anyway; a click by anyone else would otherwise replace it with their own link.
  componentsOwnerOnly: true,
  answer(_options, ctx) {
    return whoami(ctx);
  },
  components: {
    sign([address], _values, ctx) {
      return verify(address ?? '', ctx);
    },
  },
  // "Check my status" on the verify panel (verifyPanel.ts): the same answer, privately.
  privateComponents: {
    panel: (_args, _values, ctx) => whoami(ctx),
  },
} satisfies Command;
