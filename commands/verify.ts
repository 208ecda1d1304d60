import { type Command, type CommandContext, identityOption, stringOption } from '../src/discord/command.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
  invokerUsername,
} from '../src/discord/gatingContext.ts';
import { VERIFY_MODAL_IDS } from '../src/discord/verifyPanel.ts';
import { described } from '../src/i18n/index.ts';
import { renderVerifyResult } from '../src/render/gatingMember.ts';
import { renderVerifyModal } from '../src/render/gatingPanel.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { MAX_IDENTITY_LENGTH } from '../src/web3bio/identity.ts';

/**
 * `/verify <identity>` for the member who asked: linked at once by record, else the signing link (also
 * /whoami's sign button, for a wallet).
 */
export async function verify(identity: string, ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const username = invokerUsername(ctx);
  const result = await access.service.verification.verify(
    access.guildId,
    { id: ctx.userId, username },
    identity,
  );
  return renderVerifyResult(result, identity, guildNames(ctx), ctx.render);
}

export default {
  handedToGateway: true,
  data: {
    name: 'verify',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.verify.description'),
    contexts: GUILD_ONLY_CONTEXTS,
    options: [identityOption('commands.verify.options.identity')],
  },
  cooldown: true,
  ephemeral: true,
  answer(options, ctx) {
    return verify(stringOption(options, 'identity'), ctx);
  },
  // The verify panel's button (verifyPanel.ts) and the modal it opens.
  modalOpeners: {
    panel: (_args, ctx) => renderVerifyModal(VERIFY_MODAL_IDS, MAX_IDENTITY_LENGTH, ctx.render),
  },
  modals: {
    identity(_args, fields, ctx) {
      return verify((fields[VERIFY_MODAL_IDS.identity] ?? '').trim(), ctx);
    },
  },
} satisfies Command;
