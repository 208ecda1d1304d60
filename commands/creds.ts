import {
  type Command,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { described } from '../src/i18n/index.ts';
import { renderCredentials } from '../src/render/credentials.ts';

export default {
  data: {
    name: 'creds',
    ...USER_INSTALLABLE,
    ...described('commands.creds.description'),
    options: [identityOption('commands.creds.options.identity'), PRIVATE_OPTION],
  },
  cooldown: true,
  remembersLookup: true,
  async answer(options, ctx) {
    const identity = stringOption(options, 'identity');
    const fetched = await ctx.deps.web3bio.getCredentials(identity);
    return renderCredentials(identity, fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
