import { type Command, USER_INSTALLABLE } from '../src/discord/command.ts';
import { renderForgottenLookups } from '../src/render/recentLookups.ts';

export default {
  data: {
    name: 'forget-lookups',
    description: 'Forget the identities you looked up, so identity options stop suggesting them',
    ...USER_INSTALLABLE,
  },
  ephemeral: true,
  async answer(_options, ctx) {
    const forgotten = (await ctx.deps.recentLookups?.forgetUser(ctx.userId)) ?? { lookups: 0, servers: 0 };
    return renderForgottenLookups(forgotten);
  },
} satisfies Command;
