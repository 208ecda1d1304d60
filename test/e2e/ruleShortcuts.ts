/** Shortcuts the `/gating rule` end-to-end tests act through: the commands, Apply, suggestions, scores. */
import {
  type APIApplicationCommandInteractionDataOption,
  ApplicationCommandOptionType,
} from 'discord-api-types/v10';
import { expect } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/interactions.ts';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { rawCredential } from '../../fakes/web3bio/builders.ts';
import {
  type GatingHarness,
  gatingCommandRun,
  gatingGroupRun,
  option,
  seen,
  waitFor,
} from './gatingHarness.ts';
import { visibleMessage } from './harness.ts';

const { Role, String: Text } = ApplicationCommandOptionType;

export function ruleCommand(
  g: GatingHarness,
  sub: 'add' | 'remove' | 'list',
  options: APIApplicationCommandInteractionDataOption[] = [],
  userId = g.ownerId,
): Promise<InteractionResult> {
  return gatingGroupRun(g, 'rule', sub, options, userId);
}

export const addOptions = (roleId: string, kind: string, value: string, match?: 'all' | 'any') => [
  option(Role, 'role', roleId),
  option(Text, 'kind', kind),
  option(Text, 'value', value),
  ...(match ? [option(Text, 'match', match)] : []),
];

export function buttonIds(message: FakeMessage): string[] {
  return (message.components ?? []).flatMap((row) =>
    (row as { components: { custom_id?: string }[] }).components.map((c) => c.custom_id ?? ''),
  );
}

/** `/gating rule add`, then Apply on its preview; returns the preview and the answer to Apply. */
export async function addRule(
  g: GatingHarness,
  roleId: string,
  kind: string,
  value: string,
  opts: { match?: 'all' | 'any'; userId?: string } = {},
): Promise<{ preview: string; applied: string }> {
  const userId = opts.userId ?? g.ownerId;
  const message = visibleMessage(
    await ruleCommand(g, 'add', addOptions(roleId, kind, value, opts.match), userId),
  );
  const preview = seen(message);
  const apply = buttonIds(message).find((id) => id.startsWith('gating|ruleApply|'));
  if (!apply) throw new Error(`no Apply button: ${preview}`);
  const applied = seen(visibleMessage(await g.h.click(message, apply, undefined, { userId })));
  await g.gating.service.idle(g.guildId);
  return { preview, applied };
}

/** Suggestions for the focused option of `/gating rule <sub>`. */
export async function suggestions(
  g: GatingHarness,
  sub: 'add' | 'remove',
  focused: string,
  value: string,
  locale?: string,
) {
  const result = await g.h.discord.typeInOption({
    name: 'gating',
    focused,
    value,
    userId: g.ownerId,
    options: [
      {
        type: ApplicationCommandOptionType.SubcommandGroup,
        name: 'rule',
        options: [{ type: ApplicationCommandOptionType.Subcommand, name: sub, options: [] }],
      } as never,
    ],
    ...(locale ? { locale: locale as never } : {}),
  });
  expect(result.callbacks.map((c) => c.type)).toEqual([8]);
  return result.callbacks[0]?.data?.choices as { name: string; value: string }[];
}

/** A Human Passport score on the identity itself (its subject is the name). */
export function scoreOf(g: GatingHarness, name: string, score: number): void {
  g.h.upstream.world.setCredentials(name, {
    isHuman: [
      rawCredential({
        id: `ens,${name}`,
        category: 'isHuman',
        platform: 'humanpassport',
        source: 'human-passport',
        type: 'score',
        value: String(score),
        label: 'Passport',
        updatedAt: 1_762_546_524,
      }),
    ],
    isRisky: [],
    isSpam: [],
  });
}

export async function recheckTwice(g: GatingHarness): Promise<void> {
  // An automated removal needs the loss seen twice.
  for (let pass = 0; pass < 2; pass += 1) {
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
  }
}

/** Moves a role to `position` (as a moderator would in Server Settings), once the bot's client has seen it. */
export async function moveRole(g: GatingHarness, roleId: string, position: number): Promise<void> {
  const roles = g.h.discord.state.guilds.get(g.guildId)?.roles;
  const moved = { ...(roles?.get(roleId) ?? {}), position };
  roles?.set(roleId, moved as never);
  g.h.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: g.guildId, role: moved });
  await waitFor(
    () => g.h.bot.client.guilds.cache.get(g.guildId)?.roles.cache.get(roleId)?.rawPosition === position,
    'the moved role to reach the client',
  );
}
