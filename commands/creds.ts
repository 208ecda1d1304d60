import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { type Command, PRIVATE_OPTION, stringOption, withFreshness } from '../src/discord/command.ts';
import { renderCredentials } from '../src/render/credentials.ts';

export default {
  data: {
    name: 'creds',
    description: 'Show trust and risk signals (human, spam, risky) for a web3 identity',
    options: [
      {
        type: ApplicationCommandOptionType.String,
        name: 'identity',
        description: 'A name or address, or platform,identity',
        required: true,
        max_length: 256,
      },
      PRIVATE_OPTION,
    ],
  },
  cooldown: true,
  async answer(options, ctx) {
    const identity = stringOption(options, 'identity');
    const fetched = await ctx.deps.web3bio.getCredentials(identity);
    return renderCredentials(identity, fetched.data, withFreshness(ctx.render, fetched));
  },
} satisfies Command;
