import { type Command, identityOption, stringOption } from '../src/discord/command.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
} from '../src/discord/gatingContext.ts';
import { described } from '../src/i18n/index.ts';
import { renderVerifyResult } from '../src/render/gatingMember.ts';

export default {
  data: {
    name: 'verify',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.verify.description'),
    contexts: GUILD_ONLY_CONTEXTS,
    options: [identityOption('commands.verify.options.identity')],
  },
  cooldown: true,
  ephemeral: true,
  async answer(options, ctx) {
    const access = gatingAccess(ctx);
    if (!access.ok) return access.answer;
    const identity = stringOption(options, 'identity');
    const username = ctx.interaction?.user.username ?? '';
    const result = await access.service.verification.verify(
      access.guildId,
      { id: ctx.userId, username },
      identity,
    );
    return renderVerifyResult(result, identity, guildNames(ctx), ctx.render);
  },
} satisfies Command;
