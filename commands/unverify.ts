import { ApplicationCommandOptionType, InteractionContextType } from 'discord-api-types/v10';
import { type Command, type CommandContext, identityOption } from '../src/discord/command.ts';
import { GUILD_INSTALL_ONLY, gatingAccess } from '../src/discord/gatingContext.ts';
import { described } from '../src/i18n/index.ts';
import { renderUnverifiedEverywhere } from '../src/render/accountProofs.ts';
import { renderGatingUnavailable } from '../src/render/gatingGuild.ts';
import { renderUnverified } from '../src/render/gatingMember.ts';
import type { MessagePayload } from '../src/render/types.ts';

/**
 * `/unverify … everywhere:true` (the default in a DM with the bot): the member's proofs go from the
 * account, every server and Linked Roles; sharing goes off; roles follow in each server.
 */
async function unverifyEverywhere(identity: string | null, ctx: CommandContext): Promise<MessagePayload> {
  const service = ctx.deps.gating;
  if (!service) return renderGatingUnavailable(ctx.render);
  const { verification, linkedRoles } = service;
  const names = identity === null ? undefined : await verification.namesOf(identity);
  const removed = await verification.carrier.removeEverywhere(ctx.userId, names);
  const linkedRoleCleared = (await linkedRoles?.clear(ctx.userId, removed.names)) ?? false;
  return renderUnverifiedEverywhere(removed, linkedRoleCleared, ctx.render);
}

export default {
  handedToGateway: true,
  data: {
    name: 'unverify',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.unverify.description'),
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    options: [
      identityOption('commands.unverify.options.identity', { required: false }),
      {
        type: ApplicationCommandOptionType.Boolean,
        name: 'everywhere',
        ...described('commands.unverify.options.everywhere'),
        required: false,
      },
    ],
  },
  ephemeral: true,
  async answer(options, ctx) {
    const identity =
      typeof options.identity === 'string' && options.identity.trim() ? options.identity.trim() : null;
    const everywhere = typeof options.everywhere === 'boolean' ? options.everywhere : ctx.guildId === null;
    if (everywhere) return unverifyEverywhere(identity, ctx);
    const access = gatingAccess(ctx);
    if (!access.ok) return access.answer;
    const { verification, linkedRoles } = access.service;
    const names = identity === null ? undefined : await verification.namesOf(identity);
    const removed = await verification.unverify(access.guildId, ctx.userId, names);
    // Linked Roles belong to the account, not the server: /unverify of that identity (or of all) clears them.
    const linkedRoleCleared = (await linkedRoles?.clear(ctx.userId, names)) ?? false;
    return renderUnverified(removed, identity, ctx.render, linkedRoleCleared);
  },
} satisfies Command;
