import {
  type Command,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { renderDomain } from '../src/render/domain.ts';

export default {
  data: {
    name: 'domain',
    ...USER_INSTALLABLE,
    description: 'Show owner, resolver, records and expiry of an ENS, Basenames, Linea or Solana name',
    options: [
      identityOption('e.g. vitalik.eth, tony.base.eth, bonfida.sol', { name: 'name' }),
      PRIVATE_OPTION,
    ],
  },
  cooldown: true,
  remembersLookup: true,
  async answer(options, ctx) {
    const fetched = await ctx.deps.web3bio.getDomain(stringOption(options, 'name'));
    return renderDomain(fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
