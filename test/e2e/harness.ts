/**
 * End-to-end harness: the stand-in Discord, the stand-in Web3.bio and the real bot (`startBot` with a
 * config from `loadConfig`), all on 127.0.0.1. Tests play users through `run` and `click` and read
 * what the bot sent, what it asked upstream and what it logged.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIApplicationCommandInteractionDataOption, Locale } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { commandsFor } from '../../commands/index.ts';
import {
  type FakeDiscord,
  type FakeDiscordOptions,
  type FakeGuild,
  type FakeMessage,
  type InteractionResult,
  startFakeDiscord,
  type WaitUntil,
} from '../../fakes/discord/server.ts';
import type { AddGuildInput } from '../../fakes/discord/state.ts';
import { type FakeWeb3Bio, type FakeWeb3BioOptions, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { type Bot, startBot } from '../../src/app/bot.ts';
import { type Config, configSecrets, loadConfig } from '../../src/app/config.ts';
import { createWeb3BioFromConfig } from '../../src/app/wiring.ts';
import type { Command } from '../../src/discord/command.ts';
import { createLogger } from '../../src/ops/log.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import type { AccountProof } from '../../src/store/accountProofTypes.ts';
import type { GuildSettingsInput, LinkInput } from '../../src/store/types.ts';
import type { Web3BioClient } from '../../src/web3bio/client.ts';

/** Discord's ephemeral message flag. */
export const EPHEMERAL = 64;

/**
 * How often the bot's watch of a Farcaster sign-in reads its channel here (1.5 s in production): each
 * approval a flow's test acts out waits for the next read.
 */
export const FARCASTER_POLL_MS = 100;

/** The two members every harness guild has. */
export const ALICE = '300000000000000001';
export const BOB = '300000000000000002';

/** One parsed pino line. */
export type LogLine = Record<string, unknown> & { level: number; msg?: string };

export type OptionInput = Record<string, string | number | boolean | undefined>;

export interface HarnessOptions {
  /** Extra or overriding environment for `loadConfig` (e.g. GATING_ENABLED, CACHE_TTL_PROFILE_SECONDS). */
  env?: Record<string, string>;
  /** Options of the stand-in Web3.bio (e.g. `apiKeys`, `latencyMs`). */
  upstream?: FakeWeb3BioOptions;
  /** Options of the stand-in Discord. */
  discord?: FakeDiscordOptions;
  /** The test guild's fields (e.g. `preferredLocale`). */
  guild?: Partial<AddGuildInput>;
  /** The commands the bot serves, given the config (default: the registry, `commandsFor`). */
  commands?: (config: Config) => readonly Command[];
}

export interface RunOptions {
  /** Default ALICE. */
  userId?: string;
  locale?: `${Locale}`;
  until?: WaitUntil;
  timeoutMs?: number;
}

export interface Harness {
  readonly discord: FakeDiscord;
  readonly upstream: FakeWeb3Bio;
  readonly bot: Bot;
  readonly config: Config;
  readonly web3bio: Web3BioClient;
  readonly guild: FakeGuild;
  /** Every log line the bot wrote, parsed, in order. */
  readonly logs: LogLine[];
  /** The environment `loadConfig` read (secrets included: tests grep output for them). */
  readonly env: Record<string, string>;
  /** Plays `/name option=value…` by `userId` (default ALICE) and resolves with the complete response. */
  run(name: string, options?: OptionInput, more?: RunOptions): Promise<InteractionResult>;
  /**
   * Plays typing `value` into the autocomplete option `focused` of `/name` (other `options` already
   * filled) and resolves at the bot's type-8 answer.
   */
  typeIn(
    name: string,
    focused: string,
    value: string,
    more?: RunOptions & { options?: OptionInput },
  ): Promise<InteractionResult>;
  /** Plays a click on a component of `message` (select `values`, or a button when none). */
  click(
    message: FakeMessage,
    customId: string,
    values?: string[],
    more?: RunOptions,
  ): Promise<InteractionResult>;
  /** How many requests the stand-in Web3.bio has seen so far. */
  upstreamCount(): number;
  /** Adds a guild member with a fresh id (a user with no cooldown history) and returns the id. */
  newUser(): string;
  close(): Promise<void>;
}

/** Slash-command options as Discord sends them, typed from the JS value. */
export function toCommandOptions(options: OptionInput): APIApplicationCommandInteractionDataOption[] {
  return Object.entries(options).flatMap(([name, value]): APIApplicationCommandInteractionDataOption[] => {
    if (value === undefined) return [];
    if (typeof value === 'boolean') return [{ name, type: ApplicationCommandOptionType.Boolean, value }];
    if (typeof value === 'number') {
      const type = Number.isInteger(value)
        ? ApplicationCommandOptionType.Integer
        : ApplicationCommandOptionType.Number;
      return [{ name, type, value }];
    }
    return [{ name, type: ApplicationCommandOptionType.String, value }];
  });
}

/** The message a user finally sees: the reply (or the edited deferral), else the first follow-up. */
export function visibleMessage(result: InteractionResult): FakeMessage {
  const message = result.message ?? result.followUps[0];
  if (!message) throw new Error(`interaction ${result.interactionId} produced no message`);
  return message;
}

/** Whether a message is only visible to the invoker. */
export function isEphemeral(message: FakeMessage): boolean {
  return ((message.flags ?? 0) & EPHEMERAL) !== 0;
}

/** Every message body the bot sent for this interaction: callback data, follow-ups and edits. */
export function messageBodies(discord: FakeDiscord, interactionId: string): Record<string, unknown>[] {
  const callbackPrefix = `/interactions/${interactionId}/`;
  const token = discord.requests.find((r) => r.path.startsWith(callbackPrefix))?.path.split('/')[3];
  return discord.requests.flatMap((request) => {
    const body = request.body as Record<string, unknown> | null;
    if (!body || request.status >= 400) return [];
    if (request.path.startsWith(callbackPrefix)) {
      const data = body.data as Record<string, unknown> | undefined;
      return data && ('embeds' in data || 'content' in data) ? [data] : [];
    }
    const isWebhook =
      token !== undefined && request.path.startsWith(`/webhooks/${discord.applicationId}/${token}`);
    return isWebhook && request.method !== 'DELETE' ? [body] : [];
  });
}

/** The callback types the bot sent for an interaction, in order. */
export function callbackTypes(result: InteractionResult): number[] {
  return result.callbacks.map((callback) => callback.type);
}

/** The bot's environment for the two stand-ins: their URLs and credentials, no client rate limit, data in `dataDir`. */
/** Gating settings that give `humanRoleId` for isHuman and nothing else (no flags, no log channel). */
export function humanRoleSettings(guildId: string, humanRoleId: string): GuildSettingsInput {
  return {
    guildId,
    enabled: true,
    humanRoleId,
    spamRoleId: null,
    riskyRoleId: null,
    minScore: null,
    spamRemovesHuman: false,
    logChannelId: null,
  };
}

/** A link proven by signature now, as a member's earlier `/verify` left it (seeded straight into a store). */
export function signatureLink(
  guildId: string,
  userId: string,
  identity: string,
  address: string | null = null,
): LinkInput {
  return {
    guildId,
    userId,
    identity,
    platform: 'ens',
    address,
    proofMethod: 'signature',
    provenAt: Date.now(),
  };
}

/** A wallet `userId` proved by signature, as the account's proof (what any server may bring). */
export function walletAccountProof(
  userId: string,
  wallet: string,
  provenAt = Date.now() - 60_000,
): AccountProof {
  return { subject: wallet, userId, identity: wallet, platform: 'ethereum', address: wallet, provenAt };
}

export function fakesEnv(
  discord: FakeDiscord,
  upstream: FakeWeb3Bio,
  dataDir: string,
): Record<string, string> {
  return {
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    DISCORD_PUBLIC_KEY: discord.webhookEvents.publicKey,
    WEB3BIO_API_URL: upstream.url,
    WEB3BIO_RATE_LIMIT: 'off',
    DATA_DIR: dataDir,
  };
}

/** Starts both fakes and the bot; `close()` tears everything down. */
export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const discord = await startFakeDiscord(options.discord);
  const upstream = await startFakeWeb3Bio(options.upstream);
  const dataDir = await mkdtemp(join(tmpdir(), 'e2e-bot-'));
  const guild = discord.addGuild({ name: 'E2E Guild', ...options.guild });
  discord.addMember(guild.id, { id: ALICE, username: 'alice' });
  discord.addMember(guild.id, { id: BOB, username: 'bob' });

  const env: Record<string, string> = {
    ...fakesEnv(discord, upstream, dataDir),
    LOG_LEVEL: 'info',
    // With GATING_ENABLED the bot serves the verification page: keep it on loopback, on a free port.
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    ...options.env,
  };
  const config = loadConfig(env);
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const metrics = createMetrics();
  const web3bio = createWeb3BioFromConfig(config, logger, metrics);
  const commands = options.commands?.(config) ?? commandsFor(config);
  let bot: Bot;
  try {
    bot = await startBot({ config, logger, web3bio, commands, metrics, farcasterPollMs: FARCASTER_POLL_MS });
  } catch (error) {
    await Promise.allSettled([web3bio.close(), discord.close(), upstream.close()]);
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  }

  let userSeq = 100;
  return {
    discord,
    upstream,
    bot,
    config,
    web3bio,
    guild,
    logs,
    env,
    run(name, commandOptions = {}, more = {}) {
      return discord.runCommand({
        name,
        userId: more.userId ?? ALICE,
        options: toCommandOptions(commandOptions),
        ...(more.locale ? { locale: more.locale } : {}),
        ...(more.until ? { until: more.until } : {}),
        ...(more.timeoutMs ? { timeoutMs: more.timeoutMs } : {}),
      });
    },
    typeIn(name, focused, value, more = {}) {
      return discord.typeInOption({
        name,
        focused,
        value,
        userId: more.userId ?? ALICE,
        options: toCommandOptions(more.options ?? {}),
        ...(more.locale ? { locale: more.locale } : {}),
        ...(more.timeoutMs ? { timeoutMs: more.timeoutMs } : {}),
      });
    },
    click(message, customId, values, more = {}) {
      return discord.clickComponent({
        message,
        customId,
        userId: more.userId ?? ALICE,
        ...(values ? { values } : {}),
        ...(more.locale ? { locale: more.locale } : {}),
        ...(more.until ? { until: more.until } : {}),
        ...(more.timeoutMs ? { timeoutMs: more.timeoutMs } : {}),
      });
    },
    upstreamCount: () => upstream.requests.length,
    newUser() {
      userSeq += 1;
      const id = `3000000000000${String(userSeq).padStart(5, '0')}`;
      discord.addMember(guild.id, { id, username: `user${userSeq}` });
      return id;
    },
    async close() {
      await bot.stop(2_000);
      await web3bio.close();
      await Promise.allSettled([discord.close(), upstream.close()]);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
