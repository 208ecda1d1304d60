/**
 * `npm run preview -- <command> name=value... [--json] [--html FILE] [--offline-images] [--locale de]`:
 * the message the bot would send for a slash command, through the bot's own code path.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ApplicationCommandOptionType, ApplicationCommandType, MessageFlags } from 'discord-api-types/v10';
import { config as loadDotenv } from 'dotenv';
import { commandsFor } from '../../commands/index.ts';
import { type Config, ConfigError, configSecrets, loadConfig } from '../app/config.ts';
import { createWeb3BioFromConfig } from '../app/wiring.ts';
import { type Command, type CommandContext, type CommandOptions, coerceOptions } from '../discord/command.ts';
import { createLogger, scrubSecrets, scrubValue } from '../ops/log.ts';
import { renderError } from '../render/errors.ts';
import type { MessagePayload } from '../render/types.ts';
import { isWeb3BioError } from '../web3bio/errors.ts';
import { type PreviewMessage, previewPage } from './previewHtml.ts';

/** Exit codes. A rendered message is a success even when it is the bot's error message (see `flags`). */
export const PREVIEW_EXIT = { ok: 0, unexpected: 1, usage: 2 } as const;

const USAGE = `Usage: npm run preview -- <command> [name=value ...] [--json] [--html FILE] [--offline-images] [--locale L]
  Prints the message the bot would send for /<command> as Discord API JSON (pretty unless --json),
  with "flags": 64 when only the user would see it (private=true, or an error message).
  e.g. npm run preview -- whois identity=vitalik.eth private=true
  --html FILE        also write a page that shows the message as Discord does
  --offline-images   in that page, replace remote images with local placeholders
  --locale L         the user's locale (default en-US), e.g. de
Reads WEB3BIO_API_URL and WEB3BIO_API_KEY from the environment or .env.
Exit codes: 0 a message was rendered (an error message too: its kind goes to stderr),
  2 usage or configuration problem (unknown command or option, bad value), 1 anything else.`;

// Placeholders like the lookup CLI's: a preview never talks to Discord.
const DISCORD_PLACEHOLDERS = { DISCORD_TOKEN: '-', DISCORD_APPLICATION_ID: '00000000000000000' };
const PREVIEW_USER_ID = '000000000000000000';

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface PreviewArgs {
  command: string;
  /** Option text by name, as typed: `identity=vitalik.eth` -> `{ identity: 'vitalik.eth' }`. */
  options: Record<string, string>;
  json: boolean;
  html: string | undefined;
  offlineImages: boolean;
  locale: string;
  help: boolean;
}

/** Parse the command line; throws `UsageError` with a message fit to print. */
export function parsePreviewArgs(argv: readonly string[]): PreviewArgs {
  let parsed: ReturnType<typeof parseWith>;
  try {
    parsed = parseWith(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  const [command = '', ...pairs] = positionals;
  const options: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`expected name=value, got "${pair}"`);
    const name = pair.slice(0, at);
    if (Object.hasOwn(options, name)) throw new UsageError(`option "${name}" is given twice`);
    options[name] = pair.slice(at + 1);
  }
  if (!values.help && command === '') throw new UsageError('give a command, e.g. whois');
  return {
    command: command.replace(/^\//, ''),
    options,
    json: values.json,
    html: values.html,
    offlineImages: values['offline-images'],
    locale: values.locale ?? 'en-US',
    help: values.help,
  };
}

function parseWith(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      json: { type: 'boolean', default: false },
      html: { type: 'string' },
      'offline-images': { type: 'boolean', default: false },
      locale: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
}

const BOOLEAN_TEXT = /^(true|false|yes|no|1|0)$/i;

/** What Discord itself would refuse before the bot sees the command: missing, unknown or bad options. */
export function checkOptions(command: Command, raw: Readonly<Record<string, string>>): string[] {
  const name = command.data.name;
  if ('type' in command.data && command.data.type !== ApplicationCommandType.ChatInput)
    return [`/${name} is a context menu command: it has no options to preview`];
  const defs = 'options' in command.data ? (command.data.options ?? []) : [];
  const problems: string[] = [];
  for (const key of Object.keys(raw)) {
    if (!defs.some((d) => d.name === key)) {
      const known = defs.map((d) => d.name).join(', ') || 'none';
      problems.push(`/${name} has no option "${key}" (options: ${known})`);
    }
  }
  for (const def of defs) {
    const text = raw[def.name];
    if (text === undefined || text === '') {
      if ('required' in def && def.required) problems.push(`/${name} needs ${def.name}=…`);
      continue;
    }
    if (def.type === ApplicationCommandOptionType.Boolean && !BOOLEAN_TEXT.test(text))
      problems.push(`${def.name} must be true or false`);
    if (
      (def.type === ApplicationCommandOptionType.Integer ||
        def.type === ApplicationCommandOptionType.Number) &&
      !Number.isFinite(Number(text))
    )
      problems.push(`${def.name} must be a number`);
    if (def.type === ApplicationCommandOptionType.String) {
      if (def.max_length !== undefined && text.length > def.max_length)
        problems.push(`${def.name} is longer than ${def.max_length} characters`);
      const choices = 'choices' in def ? (def.choices ?? []) : [];
      if (choices.length > 0 && !choices.some((c) => c.value === text))
        problems.push(`${def.name} must be one of: ${choices.map((c) => c.value).join(', ')}`);
    }
  }
  return problems;
}

/** The Discord API JSON of a message: the payload, with the ephemeral flag when only the user sees it. */
export function toPreviewMessage(payload: MessagePayload, ephemeral: boolean): PreviewMessage {
  return ephemeral ? { ...payload, flags: MessageFlags.Ephemeral } : { ...payload };
}

/** Answer as the router does: the command's message, or on any error the private error message. */
export async function answerLikeTheBot(
  command: Command,
  options: CommandOptions,
  ctx: CommandContext,
): Promise<{ message: PreviewMessage; error?: unknown }> {
  const ephemeral = command.ephemeral === true || options.private === true;
  try {
    return { message: toPreviewMessage(await command.answer(options, ctx), ephemeral) };
  } catch (error) {
    return { message: toPreviewMessage(renderError(error, ctx.render), true), error };
  }
}

function describeError(error: unknown): string {
  if (isWeb3BioError(error)) return `${error.kind}: ${error.message}`;
  return `unexpected: ${error instanceof Error ? error.message : String(error)}`;
}

export interface PreviewIo {
  out(text: string): void;
  err(text: string): void;
}

const CONSOLE_IO: PreviewIo = { out: (t) => console.log(t), err: (t) => console.error(t) };

/** `io` with every secret scrubbed from what it prints. */
function scrubbedIo(io: PreviewIo, secrets: readonly string[]): PreviewIo {
  return { out: (t) => io.out(scrubSecrets(t, secrets)), err: (t) => io.err(scrubSecrets(t, secrets)) };
}

function findCommand(config: Config, name: string): Command {
  const commands = commandsFor(config);
  const command = commands.find((c) => c.data.name === name);
  if (!command)
    throw new UsageError(
      `unknown command "${name}" (commands: ${commands.map((c) => c.data.name).join(', ')})`,
    );
  return command;
}

/** Run the preview for `argv` with `env` (already including .env); resolves to the exit code. */
export async function runPreview(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  io: PreviewIo = CONSOLE_IO,
): Promise<number> {
  let args: PreviewArgs;
  let config: Config;
  let command: Command;
  try {
    args = parsePreviewArgs(argv);
    if (args.help) {
      io.out(USAGE);
      return PREVIEW_EXIT.ok;
    }
    config = loadConfig({ ...DISCORD_PLACEHOLDERS, ...env });
    command = findCommand(config, args.command);
    const problems = checkOptions(command, args.options);
    if (problems.length > 0) throw new UsageError(problems.join('\n'));
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof ConfigError)) throw error;
    io.err(`${error.message}\n\n${USAGE}`);
    return PREVIEW_EXIT.usage;
  }

  const secrets = configSecrets(config);
  const logger = createLogger({ level: 'silent', secrets });
  const shown = scrubbedIo(io, secrets);
  const web3bio = createWeb3BioFromConfig({ ...config, REDIS_URL: undefined }, logger);
  try {
    const nowSec = Math.floor(Date.now() / 1_000);
    const ctx: CommandContext = {
      deps: { config, logger, web3bio },
      render: { locale: args.locale, nowSec, ipfsGateway: config.IPFS_GATEWAY },
      userId: PREVIEW_USER_ID,
      guildId: null,
    };
    const answered = await answerLikeTheBot(command, coerceOptions(command, args.options), ctx);
    const { error } = answered;
    // Scrubbed before serialising: in JSON or HTML a secret with `"` or `\` would no longer match.
    const message = scrubValue(answered.message, secrets);
    if (error !== undefined) shown.err(`answered with an error: ${describeError(error)}`);
    shown.out(JSON.stringify(message, null, args.json ? undefined : 2));
    if (args.html) {
      const page = await previewPage(message, {
        command: `/${command.data.name}`,
        locale: args.locale,
        nowSec,
        offlineImages: args.offlineImages,
      });
      await writeFile(args.html, page);
      shown.err(`wrote ${args.html}`);
    }
    return PREVIEW_EXIT.ok;
  } finally {
    await web3bio.close();
  }
}

if (import.meta.main) {
  loadDotenv({ quiet: true });
  runPreview(process.argv.slice(2), process.env)
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      const text = `unexpected: ${error instanceof Error ? error.message : String(error)}`;
      console.error(scrubSecrets(text, configSecrets(process.env)));
      process.exitCode = PREVIEW_EXIT.unexpected;
    });
}
