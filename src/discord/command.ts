import {
  type APIApplicationCommandAutocompleteInteraction,
  type APIApplicationCommandInteraction,
  type APIApplicationCommandOptionChoice,
  type APIApplicationCommandStringOption,
  type APIInteraction,
  type APIMessageComponentInteraction,
  type APIModalSubmitInteraction,
  ApplicationCommandOptionType,
  ApplicationIntegrationType,
  InteractionContextType,
  type RESTPostAPIChatInputApplicationCommandsJSONBody,
  type RESTPostAPIContextMenuApplicationCommandsJSONBody,
  type RESTPutAPIApplicationGuildCommandsJSONBody,
} from 'discord-api-types/v10';
import type { Config } from '../app/config.ts';
import type { RecentLookups } from '../cache/recentLookups.ts';
import type { GatingService } from '../gating/service.ts';
import { described, type MessageKey } from '../i18n/index.ts';
import type { Logger } from '../ops/log.ts';
import type { MessagePayload, ModalPayload, RenderContext } from '../render/types.ts';
import type { GatingStore } from '../store/types.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import { MAX_IDENTITY_LENGTH } from '../web3bio/identity.ts';
import type { HandOverResult } from './interactionHandoff.ts';

export type OptionValue = string | number | boolean;
export type CommandOptions = Readonly<Record<string, OptionValue | undefined>>;

/** What every command can use. Commands never read `process.env`. */
export interface BotDeps {
  config: Config;
  logger: Logger;
  web3bio: Web3BioClient;
  /** Present only when GATING_ENABLED: the role-gating commands answer through it. */
  gating?: GatingService;
  /**
   * In a web replica (INTERACTIONS=http, PROCESS_ROLE=web) with gating on: hands the interactions of
   * `handedToGateway` commands to the gateway worker, which runs gating (interactionHandoff.ts).
   */
  handoff?: { handOver(interaction: APIInteraction): Promise<HandOverResult> };
  /**
   * In a web replica with gating on: what the gateway side keeps in the shared store (each server's owner
   * and roles, its role rules), for the answers a replica cannot hand over (suggestions).
   */
  sharedGating?: Pick<GatingStore, 'getGuildAuthority' | 'listRuleConditions'>;
  /** The identities a member proved (gating or Linked Roles on), suggested first after their own lookups. */
  provenIdentities?: (userId: string, guildId: string | null) => Promise<string[]>;
  /** The recent lookups identity options suggest (autocomplete); none are remembered without it. */
  recentLookups?: RecentLookups;
}

export interface CommandContext {
  deps: BotDeps;
  render: RenderContext;
  userId: string;
  /**
   * The server that installed the bot, where this ran; null in DMs and in a server that reaches the
   * app only through a user's install (the bot has no member there: answer through the interaction only).
   */
  guildId: string | null;
  /** The interaction as Discord sent it, when there is one (absent in `npm run preview`). */
  interaction?:
    | APIApplicationCommandInteraction
    | APIApplicationCommandAutocompleteInteraction
    | APIMessageComponentInteraction
    | APIModalSubmitInteraction;
}

/**
 * Suggestions for an option while it is typed (autocomplete): answered at once, so read only what is at
 * hand; never rejects (an empty list is an answer). `options` are the other options typed so far.
 */
export type OptionSuggester = (
  typed: string,
  options: CommandOptions,
  ctx: CommandContext,
) => Promise<APIApplicationCommandOptionChoice<string>[]>;

/** Lookups: installable to a server or to a user's account, and usable in servers, the bot's DM and other DMs. */
export const USER_INSTALLABLE = {
  integration_types: [ApplicationIntegrationType.GuildInstall, ApplicationIntegrationType.UserInstall],
  contexts: [
    InteractionContextType.Guild,
    InteractionContextType.BotDM,
    InteractionContextType.PrivateChannel,
  ],
};

/** A component handler receives the parts of its custom id after the command and handler names. */
export type ComponentHandler = (
  args: string[],
  values: string[],
  ctx: CommandContext,
) => Promise<MessagePayload>;

/** A button that opens a modal: answered at once with it (a modal cannot follow a deferral). */
export type ModalOpener = (args: string[], ctx: CommandContext) => ModalPayload;

/** A modal submit's handler: its custom id's args and the text inputs' values by custom id. */
export type ModalHandler = (
  args: string[],
  fields: Readonly<Record<string, string>>,
  ctx: CommandContext,
) => Promise<MessagePayload>;

export interface Command {
  data: RESTPostAPIChatInputApplicationCommandsJSONBody | RESTPostAPIContextMenuApplicationCommandsJSONBody;
  /** The command and clicks on its components count against the per-user cooldown (lookups that may reach the upstream). */
  cooldown?: boolean;
  /**
   * A lookup: a successful answer puts its identity option's value in the member's recent lookups, and,
   * unless asked with `private:true`, in the server's (autocomplete suggests them).
   */
  remembersLookup?: boolean;
  /** Always answer privately (otherwise only when the `private` option is true). */
  ephemeral?: boolean;
  /** Defer at once for these options (work known to be slow, e.g. an export), not after DEFER_AFTER_MS. */
  defersAtOnce?: (options: CommandOptions) => boolean;
  answer(options: CommandOptions, ctx: CommandContext): Promise<MessagePayload>;
  /** Handlers for components on this command's messages, by handler name (see customId.ts). */
  components?: Record<string, ComponentHandler>;
  /** Handlers for components on a message everyone uses (a panel): answered privately, the message left as it is. */
  privateComponents?: Record<string, ComponentHandler>;
  /** Buttons that open a modal, by handler name. */
  modalOpeners?: Record<string, ModalOpener>;
  /** Handlers for this command's modal submits, by handler name (see customId.ts): answered privately. */
  modals?: Record<string, ModalHandler>;
  /** Only the user who ran the command may use its components (others get a short private note). */
  componentsOwnerOnly?: boolean;
  /**
   * Runs where gating runs: a web replica defers it and hands it to the gateway worker (modal openers,
   * being pure, still answer at once).
   */
  handedToGateway?: boolean;
  /** Suggesters for string options with `autocomplete`, by option name (the router asks them). */
  suggest?: Record<string, OptionSuggester>;
}

/** What the guild commands route accepts: the command without the fields only global commands take. */
export function guildCommandData(data: Command['data']): RESTPutAPIApplicationGuildCommandsJSONBody[number] {
  const { contexts: _contexts, integration_types: _integrationTypes, dm_permission: _dm, ...rest } = data;
  return rest;
}

/** The `private` option every lookup offers. */
export const PRIVATE_OPTION = {
  type: ApplicationCommandOptionType.Boolean,
  name: 'private',
  ...described('commands.common.options.private'),
  required: false,
} as const;

/**
 * The string option a lookup takes its identity from: at most MAX_IDENTITY_LENGTH characters, with
 * suggestions while it is typed (the router answers them: identitySuggestions.ts).
 */
export function identityOption(
  descriptionKey: MessageKey,
  options: { name?: string; required?: boolean } = {},
): APIApplicationCommandStringOption {
  return {
    type: ApplicationCommandOptionType.String,
    name: options.name ?? 'identity',
    ...described(descriptionKey),
    required: options.required ?? true,
    max_length: MAX_IDENTITY_LENGTH,
    autocomplete: true,
  };
}

/** The names of a command's identity options (the string options with suggestions). */
export function identityOptionNames(command: Command): readonly string[] {
  let names = identityOptions.get(command);
  if (!names) {
    const defs = 'options' in command.data ? (command.data.options ?? []) : [];
    names = defs
      .filter((d) => d.type === ApplicationCommandOptionType.String && d.autocomplete === true)
      .map((d) => d.name);
    identityOptions.set(command, names);
  }
  return names;
}

/** identityOptionNames per command: asked on every lookup's answer, worked out once. */
const identityOptions = new WeakMap<Command, readonly string[]>();

/** Read a required string option; the router guarantees required options are present. */
export function stringOption(options: CommandOptions, name: string): string {
  const value = options[name];
  return typeof value === 'string' ? value : '';
}

export function isPrivate(options: CommandOptions): boolean {
  return options.private === true;
}

/** The render context for an answer built from `fetched`: marks stale data so render shows a note. */
export function withFreshness(
  render: RenderContext,
  fetched: { stale: boolean; fetchedAt: number },
): RenderContext {
  return fetched.stale ? { ...render, stale: { fetchedAt: fetched.fetchedAt } } : render;
}

/**
 * Turn `name=value` text (from the preview CLI) into typed options, using the command's own option
 * definitions, so preview and Discord feed `answer` the same shapes.
 */
export function coerceOptions(command: Command, raw: Record<string, string>): Record<string, OptionValue> {
  const defs = 'options' in command.data ? (command.data.options ?? []) : [];
  const out: Record<string, OptionValue> = {};
  for (const [name, text] of Object.entries(raw)) {
    const def = defs.find((d) => d.name === name);
    if (!def) throw new Error(`/${command.data.name} has no option "${name}"`);
    if (def.type === ApplicationCommandOptionType.Boolean) out[name] = /^(true|yes|1)$/i.test(text);
    else if (
      def.type === ApplicationCommandOptionType.Integer ||
      def.type === ApplicationCommandOptionType.Number
    )
      out[name] = Number(text);
    else out[name] = text;
  }
  return out;
}
