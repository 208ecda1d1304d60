import { type Command, identityOption } from '../src/discord/command.ts';
import { GUILD_INSTALL_ONLY, GUILD_ONLY_CONTEXTS, gatingAccess } from '../src/discord/gatingContext.ts';
import { renderUnverified } from '../src/render/gatingMember.ts';

export default {
  data: {
    name: 'unverify',
    description: 'Unlink your web3 identities (or one of them) in this server',
    integration_types: GUILD_INSTALL_ONLY,
    contexts: GUILD_ONLY_CONTEXTS,
    options: [identityOption('Only this identity (default: all of them)', { required: false })],
  },
  ephemeral: true,
  async answer(options, ctx) {
    const access = gatingAccess(ctx);
    if (!access.ok) return access.answer;
    const identity =
      typeof options.identity === 'string' && options.identity.trim() ? options.identity.trim() : null;
    const removed = await access.service.verification.unverify(
      access.guildId,
      ctx.userId,
      identity ?? undefined,
    );
    // Linked Roles belong to the account, not the server: /unverify of that identity (or of all) clears them.
    const linkedRoleCleared =
      (await access.service.linkedRoles?.clear(ctx.userId, identity ?? undefined)) ?? false;
    return renderUnverified(removed, identity, ctx.render, linkedRoleCleared);
  },
} satisfies Command;
