/**
 * One caller of roleEditCallers.ts as a process of its own, as each of the bot's processes is: its own
 * REST (configured as the bot configures discord.js's), its own limiter, its own event loop. Forked with
 * an IPC channel: it answers `ready`, then on `{ type: 'go', apiUrl, token, edits }` sends every edit at
 * once and answers `{ type: 'done', failed }`.
 */
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import type { RoleEdit } from './roleEditCallers.ts';

interface Go {
  type: 'go';
  apiUrl: string;
  token: string;
  edits: RoleEdit[];
}

process.on('message', (message: Go) => {
  if (message.type !== 'go') return;
  const rest = new REST({ api: message.apiUrl }).setToken(message.token);
  Promise.allSettled(
    message.edits.map((edit) =>
      rest.put(Routes.guildMemberRole(edit.guildId, edit.userId, edit.roleId), {
        reason: 'issue 37 role edit',
      }),
    ),
  ).then((results) => {
    rest.clearHashSweeper();
    rest.clearHandlerSweeper();
    const failed = results.filter((result) => result.status === 'rejected').length;
    process.send?.({ type: 'done', failed }, () => process.disconnect?.());
  });
});
process.send?.({ type: 'ready' });
