import {
  type Command,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { renderAvatar } from '../src/render/avatar.ts';

export default {
  data: {
    name: 'avatar',
    ...USER_INSTALLABLE,
    description: 'Show the avatar of a web3 name or address',
    options: [
      identityOption('ENS, Farcaster, Lens, Basenames, Linea or Solana name, or an address'),
      PRIVATE_OPTION,
    ],
  },
  cooldown: true,
  remembersLookup: true,
  async answer(options, ctx) {
    const fetched = await ctx.deps.web3bio.getAvatar(stringOption(options, 'identity'));
    return renderAvatar(fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
