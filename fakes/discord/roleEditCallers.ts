/**
 * Several processes of one bot editing roles at once, as after a big re-check: each caller a process with
 * a `REST` from @discordjs/rest configured as the bot configures its own (discord.js's
 * `rest: { api: DISCORD_API_URL }`, the bot token), each editing its share of members with
 * `PUT /guilds/{g}/members/{u}/roles/{r}`, the request `GuildMember#roles.add` sends. For the REST proxy's
 * e2e test and benchmark (issue #37).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
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
  /** From the moment every caller was told to go to the last caller's last answer. */
  wallMs: number;
  /** Edits whose request failed (an error the caller's REST gave up on). */
  failed: number;
}

const CALLER = fileURLToPath(new URL('./roleEditCaller.ts', import.meta.url));

/**
 * One process per caller (roleEditCaller.ts), each sending all its edits at once through its own REST at
 * `apiUrl` once every caller has started; resolves when all are done.
 */
export async function runRoleEditCallers(
  apiUrl: string,
  token: string,
  edits: readonly (readonly RoleEdit[])[],
): Promise<CallersRun> {
  const callers = edits.map(() => fork(CALLER, { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }));
  try {
    await Promise.all(callers.map((caller) => nextMessage(caller, 'ready')));
    const started = performance.now();
    const done = callers.map((caller) => nextMessage<{ type: string; failed: number }>(caller, 'done'));
    callers.forEach((caller, index) => {
      caller.send({ type: 'go', apiUrl, token, edits: edits[index] });
    });
    const results = await Promise.all(done);
    return {
      wallMs: performance.now() - started,
      failed: results.reduce((sum, result) => sum + result.failed, 0),
    };
  } finally {
    for (const caller of callers) if (caller.exitCode === null) caller.kill();
  }
}

/** The child's next IPC message of this `type`; rejects when it exits first. */
function nextMessage<T extends { type: string }>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      if (message.type !== type) return;
      child.off('exit', onExit);
      child.off('message', onMessage);
      resolve(message);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`role-edit caller exited (${code}) before "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
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
