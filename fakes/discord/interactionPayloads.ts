import type {
  APIApplicationCommandAutocompleteInteraction,
  APIApplicationCommandInteractionDataOption,
  APIBaseInteraction,
  APIChatInputApplicationCommandInteraction,
  APIChatInputApplicationCommandInteractionData,
  APIDMChannel,
  APIGroupDMChannel,
  APIGuildMember,
  APIInteractionDataResolved,
  APIInteractionDataResolvedChannel,
  APIInteractionDataResolvedGuildMember,
  APIInteractionGuildMember,
  APIMessage,
  APIMessageApplicationCommandInteraction,
  APIMessageApplicationCommandInteractionData,
  APIMessageComponentInteraction,
  APIMessageComponentInteractionData,
  APIModalSubmissionComponent,
  APIModalSubmitInteraction,
  APIModalSubmitStringSelectComponent,
  APIModalSubmitTextInputComponent,
  APITextChannel,
  APIUser,
  APIUserApplicationCommandInteraction,
  APIUserApplicationCommandInteractionData,
  ChannelFlags,
  InteractionType,
} from 'discord-api-types/v10';
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ApplicationIntegrationType,
  ChannelType,
  ComponentType,
  InteractionContextType,
  Locale,
  MessageType,
} from 'discord-api-types/v10';
import { asRecord } from './messages.ts';
import { nextSnowflake } from './snowflake.ts';
import { channelPermissions, type FakeDiscordState, type FakeGuild, type FakeMessage } from './state.ts';

export interface CommandInput {
  name: string;
  options?: APIApplicationCommandInteractionDataOption[];
  /** Defaults to the first guild; `null` plays the command in a DM with the bot. */
  guildId?: string | null;
  /** Defaults to the guild's first text channel. */
  channelId?: string;
  userId: string;
  /** The user's client locale, e.g. 'en-US' or 'de' (default 'en-US'); any string is passed through. */
  locale?: string;
  /** 'user' plays a user context-menu command on `targetId`; 'message' a message one on `targetMessage`. */
  type?: 'chat' | 'user' | 'message';
  targetId?: string;
  /** The message a message command runs on, in the invocation's channel; its author defaults to the invoker. */
  targetMessage?: { content: string; authorId?: string };
  /** With `guildId: null`: play in a group DM with these users (the bot is not in it), not the bot's DM. */
  groupDmWith?: readonly string[];
  /** Overrides the member's permissions in the payload (by default: theirs in the channel, overwrites included). */
  memberPermissions?: bigint;
  /**
   * The interaction's `attachment_size_limit` in bytes (default 10 MiB, a server without boosts); the
   * stand-in refuses a file above it in any answer to the interaction, as Discord does.
   */
  attachmentSizeLimit?: number;
}

export interface ComponentInput {
  message: FakeMessage;
  customId: string;
  values?: string[];
  userId: string;
  guildId?: string | null;
  /** The user's client locale, e.g. 'en-US' or 'de' (default 'en-US'); any string is passed through. */
  locale?: string;
  /**
   * A modified client's click: `customId` need not be on the message (Discord documents no check that it
   * is), sent as a button click. Without it, the stand-in refuses an id the message does not carry.
   */
  crafted?: boolean;
}

export interface ModalInput {
  /** Values by text input (or select) custom_id; inputs left out are submitted empty. */
  fields: Record<string, string | string[]>;
  /** The user's client locale, e.g. 'en-US' or 'de' (default 'en-US'); any string is passed through. */
  locale?: string;
}

/** Where and by whom a modal was opened. */
export interface ModalOpener {
  readonly user: APIUser;
  readonly guildId: string | null;
  readonly channelId: string;
  readonly sourceMessageId: string | null;
}

export interface PayloadContext {
  readonly state: FakeDiscordState;
  readonly applicationId: string;
}

/** Everything an interaction says about where and by whom it was run. */
interface Invocation {
  readonly guild: FakeGuild | null;
  readonly user: APIUser;
  readonly channelId: string;
  readonly fields: Pick<
    APIBaseInteraction<InteractionType, unknown>,
    | 'app_permissions'
    | 'attachment_size_limit'
    | 'authorizing_integration_owners'
    | 'channel'
    | 'channel_id'
    | 'context'
    | 'entitlements'
    | 'guild'
    | 'guild_locale'
    | 'locale'
    | 'version'
  > &
    Required<
      Pick<APIBaseInteraction<InteractionType, unknown>, 'channel' | 'channel_id' | 'app_permissions'>
    >;
  readonly member: APIInteractionGuildMember | null;
  /** Whose channel permissions resolved users and channels carry (Discord's `permissions` fields). */
  readonly scope: ResolveScope | null;
}

/** The guild, channel and invoking member an interaction's resolved data is computed for. */
interface ResolveScope {
  readonly guild: FakeGuild;
  readonly channel: APITextChannel;
  readonly invoker: APIGuildMember;
}

/** Discord's attachment limit for a server without boosts. */
export const ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024;

const COMMAND_TYPES = {
  chat: ApplicationCommandType.ChatInput,
  user: ApplicationCommandType.User,
  message: ApplicationCommandType.Message,
} as const;

/** Builds the INTERACTION_CREATE payload for a slash command or a user or message context-menu command. */
export function buildCommandInteraction(
  ctx: PayloadContext,
  input: CommandInput,
  id: string,
  token: string,
):
  | APIChatInputApplicationCommandInteraction
  | APIUserApplicationCommandInteraction
  | APIMessageApplicationCommandInteraction {
  const invoked = invoke(
    ctx,
    input.guildId,
    input.userId,
    input.channelId,
    input.locale,
    input.memberPermissions,
    input.groupDmWith,
  );
  const invocation =
    input.attachmentSizeLimit === undefined
      ? invoked
      : { ...invoked, fields: { ...invoked.fields, attachment_size_limit: input.attachmentSizeLimit } };
  const guildId = invocation.guild?.id;
  const commandType = COMMAND_TYPES[input.type ?? 'chat'];
  const command = findCommand(ctx.state, input.name, commandType, guildId);
  const commandId = command?.id ?? syntheticCommandId(input.name);
  const scope = command?.guild_id ? { guild_id: command.guild_id } : {};
  const base = envelope(ctx, invocation, 2 as InteractionType.ApplicationCommand, id, token);
  const resolved: APIInteractionDataResolved = {};
  if (commandType === ApplicationCommandType.User) {
    const targetId = input.targetId ?? input.userId;
    resolveUser(ctx.state, invocation.scope, targetId, resolved);
    const data: APIUserApplicationCommandInteractionData = {
      id: commandId,
      name: input.name,
      type: ApplicationCommandType.User,
      target_id: targetId,
      resolved: { users: resolved.users ?? {}, ...(resolved.members ? { members: resolved.members } : {}) },
      ...scope,
    };
    const payload: APIUserApplicationCommandInteraction = { ...base, data };
    return payload;
  }
  if (commandType === ApplicationCommandType.Message) {
    const message = targetMessage(ctx.state, invocation, input);
    const data: APIMessageApplicationCommandInteractionData = {
      id: commandId,
      name: input.name,
      type: ApplicationCommandType.Message,
      target_id: message.id,
      resolved: { messages: { [message.id]: message } },
      ...scope,
    };
    const payload: APIMessageApplicationCommandInteraction = { ...base, data };
    return payload;
  }
  resolveOptions(ctx.state, invocation.scope, input.options ?? [], resolved);
  const data: APIChatInputApplicationCommandInteractionData = {
    id: commandId,
    name: input.name,
    type: ApplicationCommandType.ChatInput,
    ...(input.options ? { options: input.options } : {}),
    ...(Object.keys(resolved).length > 0 ? { resolved } : {}),
    ...scope,
  };
  const payload: APIChatInputApplicationCommandInteraction = { ...base, data };
  return payload;
}

/** What a user has typed so far into an option with `autocomplete: true`. */
export interface AutocompleteInput extends Omit<CommandInput, 'type' | 'targetId'> {
  /** The option being typed in: sent with `focused: true` and `value` as its partial text. */
  focused: string;
  value: string;
}

/** Builds the INTERACTION_CREATE payload (type 4) Discord sends while a user types in an autocomplete option. */
export function buildAutocompleteInteraction(
  ctx: PayloadContext,
  input: AutocompleteInput,
  id: string,
  token: string,
): APIApplicationCommandAutocompleteInteraction {
  const others = (input.options ?? []).filter((option) => option.name !== input.focused);
  const focused = {
    name: input.focused,
    type: ApplicationCommandOptionType.String as const,
    value: input.value,
    focused: true,
  };
  const command = buildCommandInteraction(
    ctx,
    { ...input, options: withFocused(others, focused) },
    id,
    token,
  );
  const { resolved: _resolved, ...data } = command.data as APIChatInputApplicationCommandInteractionData;
  return {
    ...command,
    type: 4 as InteractionType.ApplicationCommandAutocomplete,
    data,
  } as APIApplicationCommandAutocompleteInteraction;
}

/** The options with the focused one beside the others of the innermost subcommand (as Discord nests it). */
function withFocused<T extends { type: number; options?: unknown }>(options: T[], focused: T): T[] {
  const nested = options.findIndex(
    (o) =>
      o.type === ApplicationCommandOptionType.Subcommand ||
      o.type === ApplicationCommandOptionType.SubcommandGroup,
  );
  const group = options[nested];
  if (!group) return [...options, focused];
  const inner = Array.isArray(group.options) ? (group.options as T[]) : [];
  return options.map((o, i) => (i === nested ? { ...o, options: withFocused(inner, focused) } : o));
}

/** Builds the INTERACTION_CREATE payload for a click on a button or a choice in a select menu. */
export function buildComponentInteraction(
  ctx: PayloadContext,
  input: ComponentInput,
  id: string,
  token: string,
): APIMessageComponentInteraction {
  const message = ctx.state.messages.get(input.message.id);
  if (!message)
    throw new Error(
      `clickComponent: message ${input.message.id} is not one the bot sent (or it was deleted)`,
    );
  const component = input.crafted
    ? { type: ComponentType.Button, custom_id: input.customId }
    : findComponent(message.components ?? [], input.customId);
  if (!component)
    throw new Error(
      `clickComponent: message ${message.id} has no component with custom_id "${input.customId}"`,
    );
  if (component.disabled === true)
    throw new Error(`clickComponent: component "${input.customId}" is disabled`);
  const channelGuildId = findChannelGuildId(ctx.state, message.channel_id);
  const invocation = invoke(
    ctx,
    input.guildId === undefined ? channelGuildId : input.guildId,
    input.userId,
    message.channel_id,
    input.locale,
  );
  const data = componentData(ctx.state, invocation.scope, component, input);
  return {
    ...envelope(ctx, invocation, 3 as InteractionType.MessageComponent, id, token),
    message,
    data,
  } as APIMessageComponentInteraction;
}

/** Builds the INTERACTION_CREATE payload for a user submitting a modal the bot showed. */
export function buildModalSubmitInteraction(
  ctx: PayloadContext,
  opener: ModalOpener,
  modal: Record<string, unknown>,
  input: ModalInput,
  id: string,
  token: string,
): APIModalSubmitInteraction {
  const invocation = invoke(ctx, opener.guildId, opener.user.id, opener.channelId, input.locale);
  const used = new Set<string>();
  const rows = Array.isArray(modal.components) ? modal.components : [];
  const components = rows.map((raw) => submittedRow(asRecord(raw) ?? {}, input.fields, used));
  const unknown = Object.keys(input.fields).filter((key) => !used.has(key));
  if (unknown.length > 0) throw new Error(`submitModal: the modal has no input(s) ${unknown.join(', ')}`);
  const message = opener.sourceMessageId ? ctx.state.messages.get(opener.sourceMessageId) : undefined;
  return {
    ...envelope(ctx, invocation, 5 as InteractionType.ModalSubmit, id, token),
    ...(message ? { message } : {}),
    data: { custom_id: String(modal.custom_id), components },
  };
}

/** What every interaction payload starts with: its ids and type, where it ran and who ran it. */
function envelope<T extends InteractionType>(
  ctx: PayloadContext,
  invocation: Invocation,
  type: T,
  id: string,
  token: string,
) {
  return { id, application_id: ctx.applicationId, type, token, ...invocation.fields, ...invoker(invocation) };
}

/** Who ran the interaction: the member and guild in a guild, the user in a DM. */
function invoker(
  invocation: Invocation,
): { guild_id: string; member: APIInteractionGuildMember } | { user: APIUser } {
  return invocation.member && invocation.guild
    ? { guild_id: invocation.guild.id, member: invocation.member }
    : { user: invocation.user };
}

function submittedRow(
  row: Record<string, unknown>,
  fields: ModalInput['fields'],
  used: Set<string>,
): APIModalSubmissionComponent {
  if (row.type === ComponentType.ActionRow) {
    const children = Array.isArray(row.components) ? row.components : [];
    const inputs = children.map((child) => submittedInput(asRecord(child) ?? {}, fields, used));
    const textInputs = inputs.filter(
      (entry): entry is APIModalSubmitTextInputComponent => entry.type === ComponentType.TextInput,
    );
    return { type: ComponentType.ActionRow, components: textInputs };
  }
  if (row.type === ComponentType.Label) {
    return {
      type: ComponentType.Label,
      component: submittedInput(asRecord(row.component) ?? {}, fields, used),
    };
  }
  return { type: ComponentType.TextDisplay };
}

function submittedInput(
  component: Record<string, unknown>,
  fields: ModalInput['fields'],
  used: Set<string>,
): APIModalSubmitTextInputComponent | APIModalSubmitStringSelectComponent {
  const customId = String(component.custom_id);
  used.add(customId);
  const given = fields[customId];
  if (component.type === ComponentType.StringSelect) {
    const values = given === undefined ? [] : Array.isArray(given) ? given : [given];
    return { type: ComponentType.StringSelect, custom_id: customId, values };
  }
  if (component.type !== ComponentType.TextInput) {
    throw new Error(
      `submitModal: input "${customId}" of type ${String(component.type)} is not supported by the fake`,
    );
  }
  if (Array.isArray(given)) throw new Error(`submitModal: "${customId}" is a text input, give it a string`);
  const value = given ?? '';
  const min = Number(component.min_length ?? 0);
  const max = Number(component.max_length ?? 4000);
  if (component.required !== false && value === '') throw new Error(`submitModal: "${customId}" is required`);
  if (value !== '' && (value.length < min || value.length > max)) {
    throw new Error(`submitModal: "${customId}" takes ${min}..${max} characters, got ${value.length}`);
  }
  return { type: ComponentType.TextInput, custom_id: customId, value };
}

/** The message a message command targets, as `resolved.messages` carries it (any user's text, verbatim). */
function targetMessage(state: FakeDiscordState, invocation: Invocation, input: CommandInput): APIMessage {
  const given = input.targetMessage;
  if (!given) throw new Error('runCommand: a message command needs `targetMessage`');
  const author = state.users.get(given.authorId ?? input.userId);
  if (!author) throw new Error(`unknown author ${given.authorId}: add them with addMember or addUser first`);
  return {
    id: nextSnowflake(),
    channel_id: invocation.channelId,
    author,
    content: given.content,
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: MessageType.Default,
  };
}

function invoke(
  ctx: PayloadContext,
  guildIdInput: string | null | undefined,
  userId: string,
  channelIdInput: string | undefined,
  locale: string | undefined,
  permissionsOverride?: bigint,
  groupDmWith?: readonly string[],
): Invocation {
  const { state } = ctx;
  const user = state.users.get(userId);
  if (!user) throw new Error(`unknown user ${userId}: add them with addMember or addUser first`);
  const guildId = guildIdInput === undefined ? state.guilds.keys().next().value : guildIdInput;
  const common = {
    version: 1 as const,
    locale: (locale ?? Locale.EnglishUS) as Locale,
    entitlements: [],
    attachment_size_limit: ATTACHMENT_SIZE_LIMIT,
  };
  if (guildId === null || guildId === undefined) {
    const dm = groupDmWith ? groupDmChannel(state, user, groupDmWith) : openDmChannel(state, user);
    return {
      guild: null,
      user,
      channelId: dm.id,
      member: null,
      scope: null,
      fields: {
        ...common,
        channel: dm,
        channel_id: dm.id,
        app_permissions: '0',
        context: groupDmWith ? InteractionContextType.PrivateChannel : InteractionContextType.BotDM,
        authorizing_integration_owners: { [ApplicationIntegrationType.UserInstall]: user.id },
      },
    };
  }
  const guild = state.guilds.get(guildId);
  if (!guild) throw new Error(`unknown guild ${guildId}`);
  const member = guild.members.get(userId);
  if (!member)
    throw new Error(`user ${userId} is not a member of guild ${guildId}: add them with addMember first`);
  const channelId = channelIdInput ?? guild.textChannelId;
  const channel = guild.channels.get(channelId);
  if (!channel) throw new Error(`unknown channel ${channelId} in guild ${guildId}`);
  const botMember = guild.members.get(state.botUser.id);
  // Both are what the member and the app may do in this channel, overwrites included (as Discord sends them).
  const appPermissions = botMember ? channelPermissions(guild, botMember, channel) : 0n;
  const permissions = permissionsOverride ?? channelPermissions(guild, member, channel);
  return {
    guild,
    user,
    channelId,
    member: { ...member, user, permissions: permissions.toString() },
    scope: { guild, channel, invoker: member },
    fields: {
      ...common,
      channel,
      channel_id: channelId,
      guild: { id: guild.id, locale: guild.preferredLocale, features: [] },
      guild_locale: guild.preferredLocale,
      app_permissions: appPermissions.toString(),
      context: InteractionContextType.Guild,
      // Without a bot member the server never installed the app: only the user's install reaches it.
      authorizing_integration_owners: botMember
        ? { [ApplicationIntegrationType.GuildInstall]: guild.id }
        : { [ApplicationIntegrationType.UserInstall]: user.id },
    },
  };
}

/** The DM channel with a user, created on first use, as `POST /users/@me/channels` does. */
export function openDmChannel(state: FakeDiscordState, user: APIUser): APIDMChannel {
  for (const channel of state.dmChannels.values()) {
    if (channel.recipients?.some((recipient) => recipient.id === user.id)) return channel;
  }
  const channel: APIDMChannel = {
    id: nextSnowflake(),
    type: ChannelType.DM,
    name: null,
    last_message_id: null,
    recipients: [user],
    flags: 0 as ChannelFlags,
  };
  state.dmChannels.set(channel.id, channel);
  return channel;
}

/** A group DM of `user` and `others`, as an interaction in it carries it; the bot is not a recipient. */
function groupDmChannel(
  state: FakeDiscordState,
  user: APIUser,
  others: readonly string[],
): APIGroupDMChannel {
  const recipients = others.map((id) => {
    const other = state.users.get(id);
    if (!other) throw new Error(`unknown user ${id}: add them with addUser first`);
    return other;
  });
  return {
    id: nextSnowflake(),
    type: ChannelType.GroupDM,
    name: null,
    icon: null,
    owner_id: user.id,
    last_message_id: null,
    recipients: [user, ...recipients],
    flags: 0 as ChannelFlags,
  };
}

function findCommand(
  state: FakeDiscordState,
  name: string,
  type: ApplicationCommandType,
  guildId: string | undefined,
) {
  const matches = (command: { name: string; type?: ApplicationCommandType }) =>
    command.name === name && (command.type ?? ApplicationCommandType.ChatInput) === type;
  const inGuild = guildId ? state.commands.guilds.get(guildId)?.find(matches) : undefined;
  return inGuild ?? state.commands.global.find(matches);
}

const syntheticIds = new Map<string, string>();

function syntheticCommandId(name: string): string {
  let id = syntheticIds.get(name);
  if (!id) {
    id = nextSnowflake();
    syntheticIds.set(name, id);
  }
  return id;
}

function resolveOptions(
  state: FakeDiscordState,
  scope: ResolveScope | null,
  options: APIApplicationCommandInteractionDataOption[],
  resolved: APIInteractionDataResolved,
): void {
  for (const option of options) {
    if ('options' in option && Array.isArray(option.options)) {
      resolveOptions(state, scope, option.options as APIApplicationCommandInteractionDataOption[], resolved);
      continue;
    }
    if (!('value' in option)) continue;
    const value = String(option.value);
    if (option.type === ApplicationCommandOptionType.User) resolveUser(state, scope, value, resolved);
    else if (option.type === ApplicationCommandOptionType.Role) resolveRole(scope, value, resolved);
    else if (option.type === ApplicationCommandOptionType.Channel)
      resolveChannel(state, scope, value, resolved);
    else if (option.type === ApplicationCommandOptionType.Mentionable) {
      if (state.users.has(value)) resolveUser(state, scope, value, resolved);
      else resolveRole(scope, value, resolved);
    }
  }
}

/** A user, and in a guild their member, whose `permissions` are theirs in the interaction's channel. */
function resolveUser(
  state: FakeDiscordState,
  scope: ResolveScope | null,
  userId: string,
  resolved: APIInteractionDataResolved,
): void {
  const user = state.users.get(userId);
  if (!user) throw new Error(`cannot resolve user ${userId}: add them with addMember or addUser first`);
  resolved.users = { ...resolved.users, [userId]: user };
  const member = scope?.guild.members.get(userId);
  if (scope && member) {
    const { user: _user, deaf: _deaf, mute: _mute, ...rest } = member;
    const partial: APIInteractionDataResolvedGuildMember = {
      ...rest,
      permissions: channelPermissions(scope.guild, member, scope.channel).toString(),
    };
    resolved.members = { ...resolved.members, [userId]: partial };
  }
}

function resolveRole(scope: ResolveScope | null, roleId: string, resolved: APIInteractionDataResolved): void {
  const role = scope?.guild.roles.get(roleId);
  if (!role) throw new Error(`cannot resolve role ${roleId}`);
  resolved.roles = { ...resolved.roles, [roleId]: role };
}

/** A channel, with `permissions`: what the invoking member may do in it. */
function resolveChannel(
  state: FakeDiscordState,
  scope: ResolveScope | null,
  channelId: string,
  resolved: APIInteractionDataResolved,
): void {
  const guildChannel = scope?.guild.channels.get(channelId);
  const channel = guildChannel ?? state.dmChannels.get(channelId);
  if (!channel) throw new Error(`cannot resolve channel ${channelId}`);
  const permissions =
    scope && guildChannel ? channelPermissions(scope.guild, scope.invoker, guildChannel) : 0n;
  const entry = {
    id: channel.id,
    type: channel.type,
    name: channel.name ?? null,
    permissions: permissions.toString(),
  } as APIInteractionDataResolvedChannel;
  resolved.channels = { ...resolved.channels, [channelId]: entry };
}

function findChannelGuildId(state: FakeDiscordState, channelId: string): string | null {
  for (const guild of state.guilds.values()) if (guild.channels.has(channelId)) return guild.id;
  return null;
}

/** Searches classic action rows and Components V2 containers/sections for an interactive component. */
function findComponent(components: readonly unknown[], customId: string): Record<string, unknown> | null {
  for (const raw of components) {
    const component = asRecord(raw);
    if (!component) continue;
    if (component.custom_id === customId && component.type !== ComponentType.TextInput) return component;
    const nested = [
      ...(Array.isArray(component.components) ? component.components : []),
      component.accessory,
    ].filter(Boolean);
    const found = findComponent(nested, customId);
    if (found) return found;
  }
  return null;
}

function componentData(
  state: FakeDiscordState,
  scope: ResolveScope | null,
  component: Record<string, unknown>,
  input: ComponentInput,
): APIMessageComponentInteractionData {
  const type = Number(component.type);
  if (type === ComponentType.Button) {
    if (input.values) throw new Error(`clickComponent: "${input.customId}" is a button, it takes no values`);
    return { custom_id: input.customId, component_type: ComponentType.Button };
  }
  const values = input.values ?? [];
  const min = Number(component.min_values ?? 1);
  const max = Number(component.max_values ?? 1);
  if (values.length < min || values.length > max) {
    throw new Error(`clickComponent: "${input.customId}" takes ${min}..${max} values, got ${values.length}`);
  }
  if (type === ComponentType.StringSelect) {
    const allowed = (Array.isArray(component.options) ? component.options : []).map((option) =>
      String(asRecord(option)?.value),
    );
    const unknown = values.filter((value) => !allowed.includes(value));
    if (unknown.length > 0)
      throw new Error(`clickComponent: "${input.customId}" has no option(s) ${unknown.join(', ')}`);
    return { custom_id: input.customId, component_type: ComponentType.StringSelect, values };
  }
  const resolved: APIInteractionDataResolved = {};
  for (const value of values) {
    if (type === ComponentType.UserSelect) resolveUser(state, scope, value, resolved);
    else if (type === ComponentType.RoleSelect) resolveRole(scope, value, resolved);
    else if (type === ComponentType.ChannelSelect) resolveChannel(state, scope, value, resolved);
    else if (state.users.has(value)) resolveUser(state, scope, value, resolved);
    else resolveRole(scope, value, resolved);
  }
  return {
    custom_id: input.customId,
    component_type: type,
    values,
    resolved,
  } as APIMessageComponentInteractionData;
}
