/**
 * Shortcuts for tests with several gating servers (issue #36): another server with the bot and gating set
 * up, and commands played in any of them (or in a DM with the bot).
 */
import type { APIApplicationCommandInteractionDataOption } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { expect } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { embedOf, type GatingHarness, setup, startGating, waitFor } from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';

export interface Server {
  id: string;
  ownerId: string;
  humanRoleId: string;
}

const MEMBERS = [
  { id: ALICE, username: 'alice' },
  { id: BOB, username: 'bob' },
];

/** Another server with the bot and gating set up (its human role), with `members` in it. */
export async function addServer(g: GatingHarness, name: string, members = MEMBERS): Promise<Server> {
  const guild = g.h.discord.addGuild({ name });
  const human = g.h.discord.addRole(guild.id, { name: 'Verified Human', position: 2 });
  for (const m of members) g.h.discord.addMember(guild.id, m);
  await waitFor(
    () => g.h.bot.client.guilds.cache.get(guild.id)?.roles.cache.has(human.id) === true,
    `${name} and its role to reach the client`,
  );
  const server = { id: guild.id, ownerId: guild.ownerId, humanRoleId: human.id };
  const done = await runIn(g, server, server.ownerId, 'gating', [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'setup',
      options: [{ type: ApplicationCommandOptionType.Role, name: 'human-role', value: human.id }],
    } as never,
  ]);
  expect(embedOf(done).title).not.toContain('❌');
  return server;
}

/**
 * The gating harness set up in its own server (A), then one more server set up for each name, in order:
 * `[g, ...servers]`.
 */
export async function startWithServers<const Names extends readonly string[]>(
  ...names: Names
): Promise<[GatingHarness, ...{ [K in keyof Names]: Server }]> {
  const g = await startGating();
  await setup(g);
  const servers: Server[] = [];
  for (const name of names) servers.push(await addServer(g, name));
  return [g, ...(servers as { [K in keyof Names]: Server })];
}

export const serverA = (g: GatingHarness): Server => ({
  id: g.guildId,
  ownerId: g.ownerId,
  humanRoleId: g.humanRoleId,
});

export async function runIn(
  g: GatingHarness,
  server: Server | null,
  userId: string,
  name: string,
  options: APIApplicationCommandInteractionDataOption[] = [],
): Promise<FakeMessage> {
  const result = await g.h.discord.runCommand({
    name,
    userId,
    guildId: server?.id ?? null,
    options,
    timeoutMs: 15_000,
  });
  if (server) await g.gating.service.idle(server.id);
  return visibleMessage(result);
}

export const text = (name: string, value: string | boolean): APIApplicationCommandInteractionDataOption =>
  ({
    type:
      typeof value === 'boolean' ? ApplicationCommandOptionType.Boolean : ApplicationCommandOptionType.String,
    name,
    value,
  }) as APIApplicationCommandInteractionDataOption;

export const verifyIn = (g: GatingHarness, server: Server, userId: string, identity: string) =>
  runIn(g, server, userId, 'verify', [text('identity', identity)]);
