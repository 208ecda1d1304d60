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
    description: 'Show the identities, domains and credentials linked to a wallet (needs an API key)',
    options: [identityOption('An EVM or Solana address, or a name'), PRIVATE_OPTION],
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
