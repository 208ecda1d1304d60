/**
 * Several processes of one bot editing roles at once, as after a big re-check: each caller a `REST` from
 * @discordjs/rest configured as the bot configures its own (discord.js's `rest: { api: DISCORD_API_URL }`,
 * the bot token), each editing its share of members with `PUT /guilds/{g}/members/{u}/roles/{r}`, the
 * request `GuildMember#roles.add` sends. For the REST proxy's e2e test and benchmark (issue #37).
 */
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import type { FakeDiscord } from './server.ts';

/** One role edit a caller makes: the member `userId` of `guildId` gets `roleId`. */
export interface RoleEdit {
  guildId: string;
  userId: string;
  roleId: string;
}

/** Guilds with one grantable role each and `callers × editsPerCaller` members spread over them. */
export function roleEditWorld(
  discord: FakeDiscord,
  shape: { guilds: number; callers: number; editsPerCaller: number },
): RoleEdit[][] {
  const guilds = Array.from({ length: shape.guilds }, (_, index) => {
    const guild = discord.addGuild({ name: `Edits ${index}` });
    return { id: guild.id, roleId: discord.addRole(guild.id, { name: 'Verified', position: 1 }).id };
  });
  return Array.from({ length: shape.callers }, (_, caller) =>
    Array.from({ length: shape.editsPerCaller }, (_, edit) => {
      const guild = guilds[(caller + edit) % guilds.length];
      if (!guild) throw new Error('roleEditWorld needs at least one guild');
      const userId = `9${String(caller).padStart(3, '0')}${String(edit).padStart(14, '0')}`;
      discord.addMember(guild.id, { id: userId, username: `member-${caller}-${edit}` });
      return { guildId: guild.id, userId, roleId: guild.roleId };
    }),
  );
}

export interface CallersRun {
  wallMs: number;
  /** Edits whose request failed (an error the caller's REST gave up on). */
  failed: number;
}

/** Every caller sends all its edits at once through its own REST at `apiUrl`; resolves when all are done. */
export async function runRoleEditCallers(
  apiUrl: string,
  token: string,
  edits: readonly (readonly RoleEdit[])[],
): Promise<CallersRun> {
  const callers = edits.map(() => new REST({ api: apiUrl }).setToken(token));
  const started = performance.now();
  const results = await Promise.allSettled(
    edits.flatMap((own, index) =>
      own.map((edit) =>
        callers[index]?.put(Routes.guildMemberRole(edit.guildId, edit.userId, edit.roleId), {
          reason: 'issue 37 role edit',
        }),
      ),
    ),
  );
  const wallMs = performance.now() - started;
  for (const rest of callers) {
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
  }
  return { wallMs, failed: results.filter((result) => result.status === 'rejected').length };
}

/** How many times the stand-in made each edit (answered 204): every edit once means every count is 1. */
export function editsMade(discord: FakeDiscord, edits: readonly (readonly RoleEdit[])[]): number[] {
  const made = new Map<string, number>();
  for (const request of discord.requests) {
    if (request.method !== 'PUT' || request.status !== 204) continue;
    made.set(request.path, (made.get(request.path) ?? 0) + 1);
  }
  return edits
    .flat()
    .map((edit) => made.get(`/guilds/${edit.guildId}/members/${edit.userId}/roles/${edit.roleId}`) ?? 0);
}
