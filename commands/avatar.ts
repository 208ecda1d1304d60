import {
  type Command,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { described } from '../src/i18n/index.ts';
import { renderAvatar } from '../src/render/avatar.ts';

export default {
  data: {
    name: 'avatar',
    ...USER_INSTALLABLE,
    ...described('commands.avatar.description'),
    options: [identityOption('commands.avatar.options.identity'), PRIVATE_OPTION],
  },
  cooldown: true,
  remembersLookup: true,
  async answer(options, ctx) {
    const fetched = await ctx.deps.web3bio.getAvatar(stringOption(options, 'identity'));
    return renderAvatar(fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
