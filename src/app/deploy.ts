import 'dotenv/config';
import { REST, Routes } from 'discord.js';
import { commandsFor } from '../../commands/index.ts';
import { guildCommandData } from '../discord/command.ts';
import { ROLE_CONNECTION_METADATA } from '../gating/linkedRoles/linkedRoles.ts';
import { ConfigError, loadConfig } from './config.ts';

/**
 * Register the slash commands with REST alone (no gateway login): to DEV_GUILD_ID when set, else
 * globally; with LINKED_ROLES_ENABLED, also the app's role-connection metadata. Bulk overwrites, so
 * running it twice changes nothing.
 */
async function deploy(): Promise<void> {
  const config = loadConfig(process.env);
  // The guild route refuses the global-only fields (contexts, integration_types).
  const body = commandsFor(config).map((c) => (config.DEV_GUILD_ID ? guildCommandData(c.data) : c.data));
  const rest = new REST(config.DISCORD_API_URL ? { api: config.DISCORD_API_URL } : {}).setToken(
    config.DISCORD_TOKEN,
  );
  const route = config.DEV_GUILD_ID
    ? Routes.applicationGuildCommands(config.DISCORD_APPLICATION_ID, config.DEV_GUILD_ID)
    : Routes.applicationCommands(config.DISCORD_APPLICATION_ID);
  const registered = (await rest.put(route, { body })) as { name: string }[];
  const where = config.DEV_GUILD_ID ? `guild ${config.DEV_GUILD_ID}` : 'globally';
  console.log(
    `Registered ${registered.length} commands ${where}: ${registered.map((c) => `/${c.name}`).join(', ')}`,
  );
  if (!config.LINKED_ROLES_ENABLED) return;
  // Metadata belongs to the application, not a guild: the same route with or without DEV_GUILD_ID.
  const metadata = (await rest.put(Routes.applicationRoleConnectionMetadata(config.DISCORD_APPLICATION_ID), {
    body: ROLE_CONNECTION_METADATA,
  })) as { key: string }[];
  console.log(
    `Registered ${metadata.length} Linked Roles metadata records: ${metadata.map((m) => m.key).join(', ')}`,
  );
}

deploy().catch((error: unknown) => {
  console.error(
    error instanceof ConfigError ? error.message : `Command registration failed: ${String(error)}`,
  );
  process.exitCode = 1;
});
