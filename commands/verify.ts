import { type Command, identityOption, stringOption } from '../src/discord/command.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
} from '../src/discord/gatingContext.ts';
import { renderVerifyResult } from '../src/render/gatingMember.ts';

export default {
  data: {
    name: 'verify',
    description: 'Prove you own a web3 identity, so your roles follow its credentials',
    integration_types: GUILD_INSTALL_ONLY,
    contexts: GUILD_ONLY_CONTEXTS,
    options: [identityOption('Your ENS, Farcaster, Lens or Basenames name, or your wallet address')],
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
