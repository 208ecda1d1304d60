/**
 * Reading Discord's interaction JSON (`discord-api-types`), the one shape the router and the commands
 * see, whether the interaction came through the gateway or an HTTP POST.
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object
 */
import {
  type APIApplicationCommandInteractionDataOption,
  type APIInteraction,
  type APIUser,
  ApplicationCommandOptionType,
  ApplicationIntegrationType,
  ComponentType,
  InteractionType,
} from 'discord-api-types/v10';
import type { OptionValue } from './command.ts';

/** The user who acted: `member.user` in a server, `user` elsewhere. */
export function actingUser(interaction: APIInteraction): APIUser | undefined {
  return interaction.member?.user ?? interaction.user;
}

/** The user's locale; PINGs carry none. */
export function localeOf(interaction: APIInteraction): string {
  return 'locale' in interaction && typeof interaction.locale === 'string' ? interaction.locale : 'en-US';
}

/**
 * The server whose install of the app this interaction came through, or null: in DMs, and in a server that
 * did not install the app (a user's install reaches it, and the bot has no member there).
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object-authorizing-integration-owners-object
 */
export function installedGuildId(
  interaction: Pick<APIInteraction, 'guild_id' | 'authorizing_integration_owners'>,
): string | null {
  const guildId = interaction.guild_id ?? null;
  const guildOwner = interaction.authorizing_integration_owners?.[ApplicationIntegrationType.GuildInstall];
  return guildId !== null && guildOwner === guildId ? guildId : null;
}

/**
 * Flatten interaction options into `name -> value`. A subcommand (group) is read as `subcommand`
 * (`group`) and its own options are flattened beside it.
 */
export function readOptions(
  data: readonly APIApplicationCommandInteractionDataOption[] | undefined,
): Record<string, OptionValue> {
  const out: Record<string, OptionValue> = {};
  for (const option of data ?? []) {
    if (option.type === ApplicationCommandOptionType.Subcommand) out.subcommand = option.name;
    else if (option.type === ApplicationCommandOptionType.SubcommandGroup) out.group = option.name;
    else if ('value' in option && option.value !== undefined) out[option.name] = option.value;
    if ('options' in option && option.options)
      Object.assign(out, readOptions(option.options as APIApplicationCommandInteractionDataOption[]));
  }
  return out;
}

/** The option being typed in an autocomplete interaction, with its text so far. */
export function focusedOption(
  data: readonly APIApplicationCommandInteractionDataOption[] | undefined,
): { name: string; value: string } | null {
  for (const option of data ?? []) {
    if ('focused' in option && option.focused === true)
      return { name: option.name, value: String(option.value ?? '') };
    if ('options' in option && option.options) {
      const found = focusedOption(option.options as APIApplicationCommandInteractionDataOption[]);
      if (found) return found;
    }
  }
  return null;
}

/** The command, component or modal an interaction names, for logs and metrics. */
export function interactionName(interaction: APIInteraction): { command?: string; customId?: string } {
  switch (interaction.type) {
    case InteractionType.ApplicationCommand:
    case InteractionType.ApplicationCommandAutocomplete:
      return { command: interaction.data.name };
    case InteractionType.MessageComponent:
    case InteractionType.ModalSubmit:
      return { customId: interaction.data.custom_id };
    default:
      return {};
  }
}

/**
 * Whether a message carries a component with this custom id, anywhere in it: action rows, Components V2
 * containers and sections (their accessories). Discord documents no check that a clicked id is on the
 * clicked message, so a modified client can send any id with a click on any message it sees.
 * @see https://discord.com/developers/docs/components/reference
 */
export function carriesCustomId(message: { components?: readonly unknown[] }, customId: string): boolean {
  const visit = (node: unknown): boolean => {
    if (typeof node !== 'object' || node === null) return false;
    const c = node as { custom_id?: unknown; components?: unknown; accessory?: unknown; component?: unknown };
    if (c.custom_id === customId) return true;
    if (Array.isArray(c.components) && c.components.some(visit)) return true;
    return visit(c.accessory) || visit(c.component);
  };
  return (message.components ?? []).some(visit);
}

/** A submitted modal's text inputs by custom id (in action rows, or in labels). */
export function modalFields(components: readonly unknown[]): Record<string, string> {
  const fields: Record<string, string> = {};
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null) return;
    const c = node as {
      type?: number;
      custom_id?: unknown;
      value?: unknown;
      component?: unknown;
      components?: unknown;
    };
    if (c.type === ComponentType.TextInput && typeof c.custom_id === 'string' && typeof c.value === 'string')
      fields[c.custom_id] = c.value;
    if (c.component) visit(c.component);
    if (Array.isArray(c.components)) for (const child of c.components) visit(child);
  };
  for (const component of components) visit(component);
  return fields;
}
