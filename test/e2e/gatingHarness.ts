/**
 * The gating end-to-end harness: the real bot (`startBot` with GATING_ENABLED) against the stand-in
 * Discord and Web3.bio, a guild with a human and a spam role below the bot's, and the shortcuts the
 * gating tests act and read through (slash commands, roles held, log-channel lines).
 */

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type {
  APIApplicationCommandInteractionDataOption,
  APIEmbed,
  APIGuildMember,
} from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { memberJoined } from '../../fakes/discord/client.ts';
import type { FakeMessage, InteractionResult, OverwriteInput } from '../../fakes/discord/server.ts';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import type { BotGating } from '../../src/app/bot.ts';
import { assertWithinDiscordLimits, visibleText } from '../render/limits.ts';
import { ALICE, type Harness, type HarnessOptions, startHarness, visibleMessage } from './harness.ts';
import { type NodeProcess, runNode } from './processes.ts';

export const PUBLIC_URL = 'https://verify.example.test';
export const GATING_ENV = {
  GATING_ENABLED: 'true',
  PUBLIC_URL,
  HTTP_HOST: '127.0.0.1',
  HTTP_PORT: '0',
  USER_COOLDOWN_COMMANDS: '100',
  LOG_LEVEL: 'warn',
};

export interface GatingHarness {
  h: Harness;
  gating: BotGating;
  guildId: string;
  ownerId: string;
  logChannelId: string;
  humanRoleId: string;
  spamRoleId: string;
}

let current: GatingHarness | undefined;

/** Closes the bot `startGating` started last (register with `afterEach`). */
export async function closeGating(): Promise<void> {
  await current?.h.close();
  current = undefined;
}

export async function waitFor(condition: () => boolean, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The bot with gating on, a guild with a human and a spam role (below the bot's role), seen by the client. */
export async function startGating(options: HarnessOptions = {}): Promise<GatingHarness> {
  const h = await startHarness({
    ...options,
    env: { ...GATING_ENV, ...options.env },
    upstream: { seed: false, ...options.upstream },
  });
  const gating = h.bot.gating;
  if (!gating) throw new Error('startBot did not start the gating module');
  const guildId = h.guild.id;
  const human = h.discord.addRole(guildId, { name: 'Verified Human', position: 2 });
  const spam = h.discord.addRole(guildId, { name: 'Spam', position: 3 });
  const cached = () => h.bot.client.guilds.cache.get(guildId);
  await waitFor(() => cached()?.roles.cache.has(spam.id) === true, 'the roles to reach the client');
  current = {
    h,
    gating,
    guildId,
    ownerId: h.guild.ownerId,
    logChannelId: h.guild.textChannelId,
    humanRoleId: human.id,
    spamRoleId: spam.id,
  };
  return current;
}

/** An ENS identity on the stand-in Web3.bio, with a `discord` link when `discordHandle` is given. */
export function addIdentity(
  g: GatingHarness,
  name: string,
  opts: { discordHandle?: string; address?: string; human?: boolean } = {},
): string {
  const address = opts.address ?? nextAddress();
  g.h.upstream.world.addProfile(ensProfile(name, address, opts.discordHandle));
  g.h.upstream.world.setCredentials(name, gatingCredentials(name, opts));
  return address;
}

export function option(
  type: ApplicationCommandOptionType,
  name: string,
  value: string | number | boolean,
): APIApplicationCommandInteractionDataOption {
  return { type, name, value } as APIApplicationCommandInteractionDataOption;
}

/** Plays `/gating <sub>` by `userId` (default: the guild owner), in `channelId` (default: the first). */
export function gatingCommandRun(
  g: GatingHarness,
  sub: string,
  options: APIApplicationCommandInteractionDataOption[] = [],
  userId = g.ownerId,
  channelId?: string,
): Promise<InteractionResult> {
  return g.h.discord.runCommand({
    name: 'gating',
    userId,
    ...(channelId ? { channelId } : {}),
    options: [{ type: ApplicationCommandOptionType.Subcommand, name: sub, options } as never],
    timeoutMs: 15_000,
  });
}

/** Plays `/gating <group> <sub>` by `userId` (default: the guild owner), in `channelId` (default: the first). */
export function gatingGroupRun(
  g: GatingHarness,
  group: string,
  sub: string,
  options: APIApplicationCommandInteractionDataOption[] = [],
  userId = g.ownerId,
  channelId?: string,
): Promise<InteractionResult> {
  return g.h.discord.runCommand({
    name: 'gating',
    userId,
    ...(channelId ? { channelId } : {}),
    options: [
      {
        type: ApplicationCommandOptionType.SubcommandGroup,
        name: group,
        options: [{ type: ApplicationCommandOptionType.Subcommand, name: sub, options }],
      } as never,
    ],
    timeoutMs: 15_000,
  });
}

export async function setup(g: GatingHarness, withLogChannel = true): Promise<FakeMessage> {
  const result = await gatingCommandRun(g, 'setup', [
    option(ApplicationCommandOptionType.Role, 'human-role', g.humanRoleId),
    option(ApplicationCommandOptionType.Role, 'spam-role', g.spamRoleId),
    ...(withLogChannel ? [option(ApplicationCommandOptionType.Channel, 'log-channel', g.logChannelId)] : []),
  ]);
  await g.gating.service.idle(g.guildId);
  return visibleMessage(result);
}

export function embedOf(message: FakeMessage): APIEmbed {
  const embed = message.embeds[0];
  if (!embed) throw new Error(`message ${message.id} has no embed`);
  return embed;
}

/** What a person sees in the message, after checking it keeps every Discord rule. */
export function seen(message: FakeMessage): string {
  assertWithinDiscordLimits({
    content: message.content || undefined,
    embeds: message.embeds,
    components: message.components as never,
    allowed_mentions: { parse: [] },
  });
  return visibleText({
    content: message.content,
    embeds: message.embeds,
    components: [],
    allowed_mentions: { parse: [] },
  });
}

export function memberOf(g: GatingHarness, userId: string): APIGuildMember {
  const member = g.h.discord.state.guilds.get(g.guildId)?.members.get(userId);
  if (!member) throw new Error(`no member ${userId}`);
  return member;
}

export function hasRole(g: GatingHarness, userId: string, roleId: string): boolean {
  return memberOf(g, userId).roles.includes(roleId);
}

/** Role edits the stand-in Discord received for a member and role (answered with any status). */
export function roleEdits(g: GatingHarness, userId: string, roleId: string, method?: 'PUT' | 'DELETE') {
  const path = `/guilds/${g.guildId}/members/${userId}/roles/${roleId}`;
  return g.h.discord.requests.filter((r) => r.path === path && (method === undefined || r.method === method));
}

/** Messages the bot posted in the log channel. */
export function logChannelMessages(g: GatingHarness): FakeMessage[] {
  return [...g.h.discord.state.messages.values()].filter(
    (m) => m.channel_id === g.logChannelId && m.author.id === g.h.discord.botUserId,
  );
}

/** Verifies `userId` (default ALICE, username alice) by the identity's own record, roles applied. */
export async function verifyByRecord(
  g: GatingHarness,
  identity = 'alice.eth',
  userId = ALICE,
): Promise<FakeMessage> {
  const result = await g.h.run('verify', { identity }, { userId });
  await g.gating.service.idle(g.guildId);
  return visibleMessage(result);
}

/** A member joining with this username (and these roles), once the bot's client has seen them. */
export async function addMember(
  g: GatingHarness,
  username: string,
  options: { roles?: string[]; permissions?: bigint } = {},
): Promise<string> {
  const id = `4${String(Date.now()).slice(-9)}${String(++memberSeq).padStart(8, '0')}`;
  const joined = memberJoined(g.h.bot.client, g.guildId, id);
  g.h.discord.addMember(g.guildId, { id, username }, { ...options, dispatchJoin: true });
  await joined;
  return id;
}
let memberSeq = 0;

/** The signing link in a /verify reply, pointed at where the bot's verify server listens. */
export function signingLinkOf(g: GatingHarness, reply: FakeMessage): string {
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  const url = button?.url ?? '';
  if (!url.startsWith(`${PUBLIC_URL}/verify/`))
    throw new Error(`no signing link in the reply: ${seen(reply)}`);
  return url.replace(PUBLIC_URL, g.gating.verifyUrl);
}

/**
 * Opens the signing link of a `/verify` reply, has `account` sign the message it serves, and POSTs the
 * signature to the bot's verify server (where it listens, not PUBLIC_URL). Returns the server's answer.
 */
export async function signFromReply(
  g: GatingHarness,
  reply: FakeMessage,
  account: { signMessage(args: { message: string }): Promise<`0x${string}`> },
): Promise<{ status: number; body: { ok: boolean; reason?: string; message?: string } }> {
  const local = signingLinkOf(g, reply);
  const { message } = (await (await fetch(`${local}/message`)).json()) as { message: string };
  const response = await fetch(local, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, signature: await account.signMessage({ message }) }),
  });
  return { status: response.status, body: (await response.json()) as { ok: boolean; reason?: string } };
}

/** Direct messages the bot sent to a user. */
export function directMessages(g: GatingHarness, userId: string): string[] {
  const dmChannels = new Set(
    [...g.h.discord.state.dmChannels.values()]
      .filter((c) => c.recipients?.some((r) => r.id === userId))
      .map((c) => c.id),
  );
  return [...g.h.discord.state.messages.values()]
    .filter((m) => dmChannels.has(m.channel_id))
    .map((m) => m.content);
}

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));

/**
 * A second bot process (`node src/app/main.js`) on the same stand-in Discord and Web3.bio as `g`, with
 * `env` on top (a shared DATABASE_URL, say) and its pages on a port of its own; resolves once it is
 * ready. `stop` kills it and removes its directory.
 */
export async function startSecondBot(
  g: GatingHarness,
  env: Record<string, string>,
): Promise<{ url: string; stop: () => Promise<void> }> {
  const workDir = await mkdtemp(join(tmpdir(), 'e2e-second-bot-'));
  const second: NodeProcess = runNode(
    MAIN,
    {
      DISCORD_TOKEN: g.h.discord.token,
      DISCORD_APPLICATION_ID: g.h.discord.applicationId,
      DISCORD_API_URL: g.h.discord.apiUrl,
      WEB3BIO_API_URL: g.h.upstream.url,
      DATA_DIR: join(workDir, 'data'),
      PUBLIC_URL,
      HTTP_HOST: '127.0.0.1',
      // Any free port, read back from its log: a port picked here could be taken before the child listens.
      HTTP_PORT: '0',
      LOG_LEVEL: 'info',
      ...env,
    },
    workDir,
  );
  const stop = async () => {
    if (second.child.exitCode === null) {
      second.child.kill('SIGKILL');
      await second.exited;
    }
    await rm(workDir, { recursive: true, force: true });
  };
  try {
    const listening = await second.waitForLog((l) => l.msg === 'web server listening', 30_000);
    await second.waitForLog((l) => l.msg === 'bot ready', 30_000);
    return { url: `http://127.0.0.1:${Number(listening.port)}`, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** A role at `position` (with these permissions), once the bot's client has seen it. */
export async function addGuildRole(
  g: GatingHarness,
  name: string,
  position: number,
  permissions = 0n,
): Promise<string> {
  const role = g.h.discord.addRole(g.guildId, { name, position, permissions: permissions.toString() });
  await waitFor(
    () => g.h.bot.client.guilds.cache.get(g.guildId)?.roles.cache.has(role.id) === true,
    `the ${name} role to reach the client`,
  );
  return role.id;
}

/** Sets a permission overwrite on a channel (as an admin would), once the bot's client has seen it. */
export async function setOverwrite(
  g: GatingHarness,
  channelId: string,
  overwrite: OverwriteInput,
): Promise<void> {
  g.h.discord.setChannelOverwrite(g.guildId, channelId, overwrite);
  const wanted = JSON.stringify([overwrite.allow ?? 0n, overwrite.deny ?? 0n].map(String));
  await waitFor(() => {
    const channel = g.h.bot.client.guilds.cache.get(g.guildId)?.channels.cache.get(channelId);
    const cached =
      channel && 'permissionOverwrites' in channel
        ? channel.permissionOverwrites.cache.get(overwrite.id)
        : undefined;
    return JSON.stringify([cached?.allow.bitfield ?? 0n, cached?.deny.bitfield ?? 0n].map(String)) === wanted;
  }, 'the overwrite to reach the client');
}
