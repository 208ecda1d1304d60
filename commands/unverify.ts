import { type Command, identityOption } from '../src/discord/command.ts';
import { GUILD_INSTALL_ONLY, GUILD_ONLY_CONTEXTS, gatingAccess } from '../src/discord/gatingContext.ts';
import { described } from '../src/i18n/index.ts';
import { renderUnverified } from '../src/render/gatingMember.ts';

export default {
  handedToGateway: true,
  data: {
    name: 'unverify',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.unverify.description'),
    contexts: GUILD_ONLY_CONTEXTS,
    options: [identityOption('commands.unverify.options.identity', { required: false })],
  },
  ephemeral: true,
  async answer(options, ctx) {
    const access = gatingAccess(ctx);
    if (!access.ok) return access.answer;
    const identity =
      typeof options.identity === 'string' && options.identity.trim() ? options.identity.trim() : null;
    const { verification, linkedRoles } = access.service;
    const names = identity === null ? undefined : await verification.namesOf(identity);
    const removed = await verification.unverify(access.guildId, ctx.userId, names);
    // Linked Roles belong to the account, not the server: /unverify of that identity (or of all) clears them.
    const linkedRoleCleared = (await linkedRoles?.clear(ctx.userId, names)) ?? false;
    return renderUnverified(removed, identity, ctx.render, linkedRoleCleared);
  },
} satisfies Command;
