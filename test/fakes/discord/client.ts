import { Client, Events, GatewayIntentBits } from 'discord.js';
import type { FakeDiscord } from './server.ts';

/** A real discord.js client (Guilds + GuildMembers intents, no pings) logged in to the stand-in Discord. */
export async function loginClient(discord: FakeDiscord): Promise<Client> {
  const client = new Client({
    intents: [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers],
    rest: { api: discord.apiUrl },
    allowedMentions: { parse: [] },
  });
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(discord.token);
  await ready;
  return client;
}
