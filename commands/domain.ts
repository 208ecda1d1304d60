import {
  type Command,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { described } from '../src/i18n/index.ts';
import { renderDomain } from '../src/render/domain.ts';

export default {
  data: {
    name: 'domain',
    ...USER_INSTALLABLE,
    ...described('commands.domain.description'),
    options: [identityOption('commands.domain.options.name', { name: 'name' }), PRIVATE_OPTION],
  },
  cooldown: true,
  remembersLookup: true,
  async answer(options, ctx) {
    const fetched = await ctx.deps.web3bio.getDomain(stringOption(options, 'name'));
    return renderDomain(fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
