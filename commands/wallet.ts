import {
  type Command,
  type CommandContext,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import { described } from '../src/i18n/index.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { renderWallet } from '../src/render/wallet.ts';

async function walletPayload(identity: string, page: number, ctx: CommandContext): Promise<MessagePayload> {
  const fetched = await ctx.deps.web3bio.getWallet(identity);
  const pageId = (p: number) => encodeCustomId('wallet', 'page', p, identity);
  return renderWallet(fetched.data, page, withFreshness(ctx.render, fetched), pageId);
}

export default {
  data: {
    name: 'wallet',
    ...USER_INSTALLABLE,
    ...described('commands.wallet.description'),
    options: [identityOption('commands.wallet.options.identity'), PRIVATE_OPTION],
  },
  cooldown: true,
  remembersLookup: true,
  componentsOwnerOnly: true,
  answer(options, ctx) {
    return walletPayload(stringOption(options, 'identity'), 0, ctx);
  },
  components: {
    page([page, identity], _values, ctx) {
      return walletPayload(identity ?? '', Number.parseInt(page ?? '0', 10) || 0, ctx);
    },
  },
} satisfies Command;
