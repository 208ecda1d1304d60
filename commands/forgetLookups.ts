import { NOTHING_FORGOTTEN } from '../src/cache/recentLookups.ts';
import { type Command, USER_INSTALLABLE } from '../src/discord/command.ts';
import { described } from '../src/i18n/index.ts';
import { renderForgottenLookups } from '../src/render/recentLookups.ts';

export default {
  data: {
    name: 'forget-lookups',
    ...described('commands.forget-lookups.description'),
    ...USER_INSTALLABLE,
  },
  ephemeral: true,
  async answer(_options, ctx) {
    const forgotten = (await ctx.deps.recentLookups?.forgetUser(ctx.userId)) ?? NOTHING_FORGOTTEN;
    return renderForgottenLookups(forgotten, ctx.render.locale);
  },
} satisfies Command;
