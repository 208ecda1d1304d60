/** `/gating exempt add|remove|list`: the subcommand group of commands/gating.ts, kept apart from it. */
import {
  type APIApplicationCommandSubcommandGroupOption,
  type APIApplicationCommandSubcommandOption,
  ApplicationCommandOptionType,
} from 'discord-api-types/v10';
import type { CommandContext, CommandOptions } from '../src/discord/command.ts';
import { guildNames } from '../src/discord/gatingContext.ts';
import type { ExemptTarget } from '../src/gating/exemptionGating.ts';
import type { GatingService } from '../src/gating/service.ts';
import { described } from '../src/i18n/index.ts';
import { renderExemptList, renderExemptNeedsTarget, renderExemptResult } from '../src/render/gatingExempt.ts';
import { renderNotSetUp } from '../src/render/gatingGuild.ts';
import type { MessagePayload } from '../src/render/types.ts';

const change = (name: 'add' | 'remove'): APIApplicationCommandSubcommandOption => ({
  type: ApplicationCommandOptionType.Subcommand,
  name,
  ...described(`commands.gating.exempt.${name}.description`),
  options: [
    {
      type: ApplicationCommandOptionType.User,
      name: 'member',
      ...described(`commands.gating.exempt.${name}.options.member`),
      required: false,
    },
    {
      type: ApplicationCommandOptionType.Role,
      name: 'role',
      ...described(`commands.gating.exempt.${name}.options.role`),
      required: false,
    },
  ],
});

export const EXEMPT_GROUP: APIApplicationCommandSubcommandGroupOption = {
  type: ApplicationCommandOptionType.SubcommandGroup,
  name: 'exempt',
  ...described('commands.gating.exempt.description'),
  options: [
    change('add'),
    change('remove'),
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'list',
      ...described('commands.gating.exempt.list.description'),
    },
  ],
};

function targetOf(options: CommandOptions): ExemptTarget | null {
  const member = typeof options.member === 'string' && options.member !== '' ? options.member : null;
  const role = typeof options.role === 'string' && options.role !== '' ? options.role : null;
  if ((member === null) === (role === null)) return null;
  return member !== null ? { kind: 'member', targetId: member } : { kind: 'role', targetId: role ?? '' };
}

/** `/gating exempt …` for a moderator who passed `gatingAccess`. */
export async function answerExempt(
  service: GatingService,
  guildId: string,
  options: CommandOptions,
  ctx: CommandContext,
): Promise<MessagePayload> {
  if (options.subcommand === 'list') {
    const list = await service.exemptions.list(guildId);
    const userIds = list.exemptions.flatMap((e) =>
      e.kind === 'member' ? [e.targetId, e.addedBy] : [e.addedBy],
    );
    return renderExemptList(list, guildNames(ctx, userIds), ctx.render);
  }
  const target = targetOf(options);
  if (!target) return renderExemptNeedsTarget(ctx.render);
  const result =
    options.subcommand === 'remove'
      ? await service.exemptions.remove(guildId, target, ctx.userId)
      : await service.exemptions.add(guildId, target, ctx.userId);
  if (result.kind === 'not_set_up') return renderNotSetUp(ctx.render);
  const userIds = target.kind === 'member' ? [target.targetId, ctx.userId] : [ctx.userId];
  if (result.kind === 'added' && result.exemption) userIds.push(result.exemption.addedBy);
  return renderExemptResult(result, target, guildNames(ctx, userIds), ctx.render);
}
