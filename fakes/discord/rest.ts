import type {
  APIApplicationCommand,
  APIApplicationCommandOption,
  APIGuildMember,
} from 'discord-api-types/v10';
import {
  ApplicationCommandType,
  GatewayDispatchEvents,
  Locale,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import { type Answer, apiError, noContent, type ParsedRequest } from './http.ts';
import { openDmChannel } from './interactionPayloads.ts';
import type { InteractionTracker } from './interactions.ts';
import { asRecord, createMessage, editMessage, type MessageTarget } from './messages.ts';
import type { RoleEditLimiter } from './rateLimit.ts';
import { compareSnowflakes, nextSnowflake } from './snowflake.ts';
import {
  channelPermissions,
  compareRoles,
  type FakeDiscordState,
  type FakeGuild,
  highestRole,
  makeRole,
  memberEvent,
  memberPermissions,
  toApiGuild,
} from './state.ts';
import { type FieldError, invalidFormBody, validateMessagePayload } from './validate.ts';

export interface RestContext {
  readonly state: FakeDiscordState;
  readonly token: string;
  readonly applicationId: string;
  readonly origin: string;
  readonly gatewayUrl: string;
  /** `shards` in `GET /gateway/bot`. */
  recommendedShards(): number;
  /** `session_start_limit.max_concurrency` in `GET /gateway/bot`. */
  readonly maxConcurrency: number;
  readonly interactions: InteractionTracker;
  readonly limiter: RoleEditLimiter;
  dispatch(event: string, data: unknown): void;
}

type Params = Record<string, string>;
type Handler = (ctx: RestContext, req: ParsedRequest, params: Params) => Answer;

interface Route {
  readonly method: string;
  readonly pattern: RegExp;
  /** Interaction and webhook-token routes work without the bot token, as on Discord. */
  readonly needsBotToken: boolean;
  readonly handler: Handler;
}

const UNKNOWN_GUILD = apiError(404, 10_004, 'Unknown Guild');
const UNKNOWN_MEMBER = apiError(404, 10_007, 'Unknown Member');
const UNKNOWN_ROLE = apiError(404, 10_011, 'Unknown Role');
const UNKNOWN_CHANNEL = apiError(404, 10_003, 'Unknown Channel');
const UNKNOWN_MESSAGE = apiError(404, 10_008, 'Unknown Message');
const UNKNOWN_APPLICATION = apiError(404, 10_002, 'Unknown Application');
const UNKNOWN_COMMAND = apiError(404, 10_063, 'Unknown application command');
const MISSING_PERMISSIONS = apiError(403, 50_013, 'Missing Permissions');
const UNAUTHORIZED = apiError(401, 0, '401: Unauthorized');

/** Answers one REST request: auth, routing, and Discord's 401/404/405 answers. */
export function handleRest(ctx: RestContext, req: ParsedRequest): Answer {
  const candidates = ROUTES.map((route) => ({ route, match: route.pattern.exec(req.path) })).filter(
    (c) => c.match,
  );
  const found = candidates.find((c) => c.route.method === req.method);
  if (!found?.match) {
    return candidates.length > 0
      ? apiError(405, 0, '405: Method Not Allowed')
      : apiError(404, 0, '404: Not Found');
  }
  const authorization = req.headers.authorization;
  const authorized = authorization === `Bot ${ctx.token}`;
  if (found.route.needsBotToken ? !authorized : authorization !== undefined && !authorized)
    return UNAUTHORIZED;
  return found.route.handler(ctx, req, found.match.groups ?? {});
}

function route(method: string, template: string, handler: Handler, needsBotToken = true): Route {
  const source = template.replace(/:(\w+)/g, '(?<$1>[^/]+)');
  return { method, pattern: new RegExp(`^${source}/?$`), needsBotToken, handler };
}

const ok = (body: unknown): Answer => ({ status: 200, body });

const ROUTES: Route[] = [
  route('GET', '/gateway/bot', (ctx) =>
    ok({
      url: ctx.gatewayUrl,
      shards: ctx.recommendedShards(),
      session_start_limit: {
        total: 1000,
        remaining: 1000,
        reset_after: 0,
        max_concurrency: ctx.maxConcurrency,
      },
    }),
  ),
  route('GET', '/gateway', (ctx) => ok({ url: ctx.gatewayUrl })),
  route('GET', '/users/@me', (ctx) => ok(ctx.state.botUser)),
  route('POST', '/users/@me/channels', (ctx, req) => {
    const user = ctx.state.users.get(String(asRecord(req.body)?.recipient_id));
    return user ? ok(openDmChannel(ctx.state, user)) : apiError(404, 10_013, 'Unknown User');
  }),
  route('GET', '/users/:user', (ctx, _req, p) => {
    const user = ctx.state.users.get(p.user ?? '');
    return user ? ok(user) : apiError(404, 10_013, 'Unknown User');
  }),
  route('GET', '/applications/@me', (ctx) =>
    ok({
      id: ctx.applicationId,
      name: ctx.state.botUser.username,
      description: '',
      bot_public: true,
      bot_require_code_grant: false,
      verify_key: '',
      flags: 0,
      bot: ctx.state.botUser,
    }),
  ),
  route('GET', '/applications/:app/commands', (ctx, _req, p) => withCommands(ctx, p, (list) => ok(list))),
  route('PUT', '/applications/:app/commands', (ctx, req, p) =>
    withCommands(ctx, p, (list) => overwriteCommands(ctx, list, req.body, null)),
  ),
  route('POST', '/applications/:app/commands', (ctx, req, p) =>
    withCommands(ctx, p, (list) => upsertCommand(ctx, list, req.body, null)),
  ),
  route('GET', '/applications/:app/commands/:command', (ctx, _req, p) =>
    withCommand(ctx, p, (_list, command) => ok(command)),
  ),
  route('PATCH', '/applications/:app/commands/:command', (ctx, req, p) =>
    withCommand(ctx, p, (list, command) => patchCommand(ctx, list, command, req.body)),
  ),
  route('DELETE', '/applications/:app/commands/:command', (ctx, _req, p) =>
    withCommand(ctx, p, (list, command) => deleteCommand(list, command)),
  ),
  route('GET', '/applications/:app/guilds/:guild/commands', (ctx, _req, p) =>
    withCommands(ctx, p, (list) => ok(list)),
  ),
  route('PUT', '/applications/:app/guilds/:guild/commands', (ctx, req, p) =>
    withCommands(ctx, p, (list) => overwriteCommands(ctx, list, req.body, p.guild ?? null)),
  ),
  route('POST', '/applications/:app/guilds/:guild/commands', (ctx, req, p) =>
    withCommands(ctx, p, (list) => upsertCommand(ctx, list, req.body, p.guild ?? null)),
  ),
  route('GET', '/applications/:app/guilds/:guild/commands/:command', (ctx, _req, p) =>
    withCommand(ctx, p, (_list, command) => ok(command)),
  ),
  route('PATCH', '/applications/:app/guilds/:guild/commands/:command', (ctx, req, p) =>
    withCommand(ctx, p, (list, command) => patchCommand(ctx, list, command, req.body)),
  ),
  route('DELETE', '/applications/:app/guilds/:guild/commands/:command', (ctx, _req, p) =>
    withCommand(ctx, p, (list, command) => deleteCommand(list, command)),
  ),
  route('GET', '/guilds/:guild', (ctx, req, p) =>
    withGuild(ctx, p, (guild) =>
      ok(
        req.query.get('with_counts') === 'true'
          ? {
              ...toApiGuild(guild),
              approximate_member_count: guild.members.size,
              approximate_presence_count: 0,
            }
          : toApiGuild(guild),
      ),
    ),
  ),
  route('GET', '/guilds/:guild/roles', (ctx, _req, p) =>
    withGuild(ctx, p, (guild) => ok([...guild.roles.values()])),
  ),
  route('POST', '/guilds/:guild/roles', (ctx, req, p) =>
    withGuild(ctx, p, (guild) => createRole(ctx, guild, req)),
  ),
  route('GET', '/guilds/:guild/channels', (ctx, _req, p) =>
    withGuild(ctx, p, (guild) => ok([...guild.channels.values()])),
  ),
  route('GET', '/guilds/:guild/members', (ctx, req, p) =>
    withGuild(ctx, p, (guild) => listMembers(guild, req.query)),
  ),
  route('GET', '/guilds/:guild/members/:user', (ctx, _req, p) =>
    withGuild(ctx, p, (guild) => {
      const member = guild.members.get(p.user ?? '');
      return member ? ok(member) : UNKNOWN_MEMBER;
    }),
  ),
  route('PATCH', '/guilds/:guild/members/:user', (ctx, req, p) =>
    withGuild(ctx, p, (guild) => patchMember(ctx, guild, req, p.user ?? '')),
  ),
  route('PUT', '/guilds/:guild/members/:user/roles/:role', (ctx, req, p) =>
    withGuild(ctx, p, (guild) => changeMemberRole(ctx, guild, req, p.user ?? '', p.role ?? '', 'add')),
  ),
  route('DELETE', '/guilds/:guild/members/:user/roles/:role', (ctx, req, p) =>
    withGuild(ctx, p, (guild) => changeMemberRole(ctx, guild, req, p.user ?? '', p.role ?? '', 'remove')),
  ),
  route('GET', '/channels/:channel', (ctx, _req, p) => {
    const channel = findChannel(ctx.state, p.channel ?? '');
    return channel ? ok(channel.channel) : UNKNOWN_CHANNEL;
  }),
  route('POST', '/channels/:channel/messages', (ctx, req, p) =>
    postChannelMessage(ctx, req, p.channel ?? ''),
  ),
  route('GET', '/channels/:channel/messages/:message', (ctx, _req, p) => {
    const message = ctx.state.messages.get(p.message ?? '');
    return message && message.channel_id === p.channel ? ok(message) : UNKNOWN_MESSAGE;
  }),
  route('PATCH', '/channels/:channel/messages/:message', (ctx, req, p) =>
    patchChannelMessage(ctx, req, p.channel ?? '', p.message ?? ''),
  ),
  route('DELETE', '/channels/:channel/messages/:message', (ctx, _req, p) => {
    const message = ctx.state.messages.get(p.message ?? '');
    if (!message || message.channel_id !== p.channel) return UNKNOWN_MESSAGE;
    ctx.state.messages.delete(message.id);
    return noContent;
  }),
  route(
    'POST',
    '/interactions/:id/:token/callback',
    (ctx, req, p) => ctx.interactions.callback(p.id ?? '', p.token ?? '', req.query, req.body, req.files),
    false,
  ),
  route(
    'POST',
    '/webhooks/:app/:token',
    (ctx, req, p) => ctx.interactions.followUp(p.app ?? '', p.token ?? '', req.query, req.body, req.files),
    false,
  ),
  ...['GET', 'PATCH', 'DELETE'].map((method) =>
    route(
      method,
      '/webhooks/:app/:token/messages/:message',
      (ctx, req, p) =>
        ctx.interactions.webhookMessage(
          method,
          p.app ?? '',
          p.token ?? '',
          p.message ?? '',
          req.body,
          req.files,
        ),
      false,
    ),
  ),
];

function withGuild(ctx: RestContext, params: Params, use: (guild: FakeGuild) => Answer): Answer {
  const guild = ctx.state.guilds.get(params.guild ?? '');
  return guild ? use(guild) : UNKNOWN_GUILD;
}

function commandList(ctx: RestContext, params: Params): APIApplicationCommand[] | null {
  if (params.app !== ctx.applicationId) return null;
  if (!params.guild) return ctx.state.commands.global;
  if (!ctx.state.guilds.has(params.guild)) return null;
  let list = ctx.state.commands.guilds.get(params.guild);
  if (!list) {
    list = [];
    ctx.state.commands.guilds.set(params.guild, list);
  }
  return list;
}

function withCommands(
  ctx: RestContext,
  params: Params,
  use: (list: APIApplicationCommand[]) => Answer,
): Answer {
  const list = commandList(ctx, params);
  if (!list) return params.app === ctx.applicationId ? UNKNOWN_GUILD : UNKNOWN_APPLICATION;
  return use(list);
}

function withCommand(
  ctx: RestContext,
  params: Params,
  use: (list: APIApplicationCommand[], command: APIApplicationCommand) => Answer,
): Answer {
  return withCommands(ctx, params, (list) => {
    const command = list.find((candidate) => candidate.id === params.command);
    return command ? use(list, command) : UNKNOWN_COMMAND;
  });
}

const COMMAND_NAME = /^[-_'\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;

/** Fields only global commands take (discord-api-types omits them from the guild routes' bodies). */
const GLOBAL_ONLY_FIELDS = ['contexts', 'integration_types', 'dm_permission'] as const;

/** A guild command with a global-only field: refused, as discord-api-types' guild body types refuse it. */
function guildRouteProblems(
  body: Record<string, unknown>,
  path: (string | number)[],
  guildId: string | null,
) {
  if (guildId === null) return [];
  return GLOBAL_ONLY_FIELDS.filter((field) => body[field] !== undefined).map(
    (field): FieldError => ({
      path: [...path, field],
      code: 'GUILD_COMMAND_GLOBAL_ONLY_FIELD',
      message: `${field} is only valid for global commands`,
    }),
  );
}

/** Light checks of a command definition, with Discord's 50035 shape. */
function commandProblems(body: Record<string, unknown>, path: (string | number)[]): FieldError[] {
  const problems: FieldError[] = [];
  const type = Number(body.type ?? ApplicationCommandType.ChatInput);
  const name = typeof body.name === 'string' ? body.name : '';
  const isChat = type === ApplicationCommandType.ChatInput;
  const nameOk = isChat
    ? COMMAND_NAME.test(name) && name === name.toLowerCase()
    : name.length >= 1 && name.length <= 32;
  if (!nameOk)
    problems.push({
      path: [...path, 'name'],
      code: 'APPLICATION_COMMAND_INVALID_NAME',
      message: 'Command name is invalid',
    });
  const description = typeof body.description === 'string' ? body.description : '';
  if (isChat && (description.length < 1 || description.length > 100)) {
    problems.push({
      path: [...path, 'description'],
      code: 'BASE_TYPE_BAD_LENGTH',
      message: 'Must be between 1 and 100 in length.',
    });
  }
  // Discord refuses a localization under an unknown locale code or outside 1 to 100 characters.
  for (const [locale, text] of Object.entries(asRecord(body.description_localizations) ?? {})) {
    const known = (Object.values(Locale) as string[]).includes(locale);
    if (!known || typeof text !== 'string' || text.length < 1 || text.length > 100) {
      problems.push({
        path: [...path, 'description_localizations', locale],
        code: known ? 'BASE_TYPE_BAD_LENGTH' : 'LOCALE_INVALID',
        message: known ? 'Must be between 1 and 100 in length.' : 'Invalid locale.',
      });
    }
  }
  const options = Array.isArray(body.options) ? body.options : [];
  if (options.length > 25)
    problems.push({
      path: [...path, 'options'],
      code: 'BASE_TYPE_MAX_LENGTH',
      message: 'Must be 25 or fewer in length.',
    });
  options.forEach((raw, index) => {
    const option = asRecord(raw) ?? {};
    problems.push(
      ...commandProblems({ ...option, type: ApplicationCommandType.ChatInput }, [...path, 'options', index]),
    );
    const choices = Array.isArray(option.choices) ? option.choices : [];
    if (choices.length > 25) {
      problems.push({
        path: [...path, 'options', index, 'choices'],
        code: 'BASE_TYPE_MAX_LENGTH',
        message: 'Must be 25 or fewer in length.',
      });
    }
  });
  return problems;
}

function toCommand(
  ctx: RestContext,
  body: Record<string, unknown>,
  guildId: string | null,
  id: string,
): APIApplicationCommand {
  const type = Number(body.type ?? ApplicationCommandType.ChatInput) as ApplicationCommandType;
  const permissions = body.default_member_permissions;
  return {
    ...(body as Partial<APIApplicationCommand>),
    id,
    application_id: ctx.applicationId,
    ...(guildId ? { guild_id: guildId } : {}),
    type,
    name: String(body.name),
    description: typeof body.description === 'string' ? body.description : '',
    options: Array.isArray(body.options) ? (body.options as APIApplicationCommandOption[]) : [],
    default_member_permissions:
      permissions === undefined || permissions === null ? null : String(permissions),
    nsfw: body.nsfw === true,
    version: nextSnowflake(),
  };
}

function sameCommand(command: APIApplicationCommand, body: Record<string, unknown>): boolean {
  return command.name === body.name && command.type === Number(body.type ?? ApplicationCommandType.ChatInput);
}

function overwriteCommands(
  ctx: RestContext,
  list: APIApplicationCommand[],
  body: unknown,
  guildId: string | null,
): Answer {
  if (!Array.isArray(body))
    return invalidFormBody([
      { path: [], code: 'ARRAY_TYPE_CONVERT', message: 'Only iterables may be used in a ListType' },
    ]);
  const entries = body.map((raw) => asRecord(raw) ?? {});
  const problems = entries.flatMap((entry, index) => [
    ...commandProblems(entry, [index]),
    ...guildRouteProblems(entry, [index], guildId),
  ]);
  if (problems.length > 0) return invalidFormBody(problems);
  const next = entries.map((entry) =>
    toCommand(ctx, entry, guildId, list.find((c) => sameCommand(c, entry))?.id ?? nextSnowflake()),
  );
  list.splice(0, list.length, ...next);
  return ok(next);
}

function upsertCommand(
  ctx: RestContext,
  list: APIApplicationCommand[],
  body: unknown,
  guildId: string | null,
): Answer {
  const entry = asRecord(body) ?? {};
  const problems = [...commandProblems(entry, []), ...guildRouteProblems(entry, [], guildId)];
  if (problems.length > 0) return invalidFormBody(problems);
  const index = list.findIndex((c) => sameCommand(c, entry));
  const command = toCommand(ctx, entry, guildId, list[index]?.id ?? nextSnowflake());
  if (index >= 0) list[index] = command;
  else list.push(command);
  return { status: index >= 0 ? 200 : 201, body: command };
}

function patchCommand(
  ctx: RestContext,
  list: APIApplicationCommand[],
  command: APIApplicationCommand,
  body: unknown,
): Answer {
  const patch = asRecord(body) ?? {};
  const merged = { ...command, ...patch };
  const problems = [
    ...commandProblems(merged, []),
    ...guildRouteProblems(patch, [], command.guild_id ?? null),
  ];
  if (problems.length > 0) return invalidFormBody(problems);
  const next = toCommand(ctx, merged, command.guild_id ?? null, command.id);
  list.splice(list.indexOf(command), 1, next);
  return ok(next);
}

function deleteCommand(list: APIApplicationCommand[], command: APIApplicationCommand): Answer {
  list.splice(list.indexOf(command), 1);
  return noContent;
}

function auditReason(req: ParsedRequest): string | null {
  const raw = req.headers['x-audit-log-reason'];
  if (raw === undefined) return null;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** Discord's role-edit rule: Manage Roles, and the role strictly below the bot's highest; never managed. */
function roleManageable(ctx: RestContext, guild: FakeGuild, roleId: string): Answer | null {
  const role = guild.roles.get(roleId);
  if (!role || role.id === guild.everyoneRoleId) return UNKNOWN_ROLE;
  const bot = guild.members.get(ctx.state.botUser.id);
  if (!bot) return apiError(403, 50_001, 'Missing Access');
  const canManageRoles = (memberPermissions(guild, bot) & PermissionFlagsBits.ManageRoles) !== 0n;
  if (!canManageRoles || role.managed || compareRoles(role, highestRole(guild, bot)) >= 0)
    return MISSING_PERMISSIONS;
  return null;
}

function rateLimited(
  ctx: RestContext,
  guild: FakeGuild,
): { limited: Answer } | { headers: Record<string, string> } {
  return ctx.limiter.take(guild.id) ?? { headers: {} };
}

function changeMemberRole(
  ctx: RestContext,
  guild: FakeGuild,
  req: ParsedRequest,
  userId: string,
  roleId: string,
  change: 'add' | 'remove',
): Answer {
  const limit = rateLimited(ctx, guild);
  if ('limited' in limit) return limit.limited;
  const member = guild.members.get(userId);
  if (!member) return UNKNOWN_MEMBER;
  const denied = roleManageable(ctx, guild, roleId);
  if (denied) return denied;
  const has = member.roles.includes(roleId);
  ctx.state.auditLog.push({
    guildId: guild.id,
    userId,
    action: change === 'add' ? 'member_role_add' : 'member_role_remove',
    roleIds: [roleId],
    reason: auditReason(req),
    at: Date.now(),
  });
  if (has !== (change === 'add')) {
    const roles = change === 'add' ? [...member.roles, roleId] : member.roles.filter((id) => id !== roleId);
    updateMember(ctx, guild, { ...member, roles });
  }
  return { ...noContent, headers: limit.headers };
}

function patchMember(ctx: RestContext, guild: FakeGuild, req: ParsedRequest, userId: string): Answer {
  const limit = rateLimited(ctx, guild);
  if ('limited' in limit) return limit.limited;
  const member = guild.members.get(userId);
  if (!member) return UNKNOWN_MEMBER;
  const body = asRecord(req.body) ?? {};
  let next: APIGuildMember = { ...member };
  if (Array.isArray(body.roles)) {
    const roles = [...new Set(body.roles.map(String))];
    const changed = [
      ...roles.filter((id) => !member.roles.includes(id)),
      ...member.roles.filter((id) => !roles.includes(id)),
    ];
    for (const roleId of changed) {
      const denied = roleManageable(ctx, guild, roleId);
      if (denied) return denied;
    }
    next = { ...next, roles };
  }
  if ('nick' in body)
    next = { ...next, nick: typeof body.nick === 'string' && body.nick !== '' ? body.nick : null };
  ctx.state.auditLog.push({
    guildId: guild.id,
    userId,
    action: 'member_update',
    roleIds: next.roles,
    reason: auditReason(req),
    at: Date.now(),
  });
  updateMember(ctx, guild, next);
  return { status: 200, body: next, headers: limit.headers };
}

function updateMember(ctx: RestContext, guild: FakeGuild, member: APIGuildMember): void {
  guild.members.set(member.user.id, member);
  ctx.dispatch(GatewayDispatchEvents.GuildMemberUpdate, memberEvent(guild.id, member));
}

function listMembers(guild: FakeGuild, query: URLSearchParams): Answer {
  const limit = Number(query.get('limit') ?? 1);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000) {
    return invalidFormBody([
      { path: ['limit'], code: 'NUMBER_TYPE_MAX', message: 'int value should be between 1 and 1000.' },
    ]);
  }
  const after = query.get('after') ?? '0';
  const members = [...guild.members.values()]
    .filter((member) => compareSnowflakes(member.user.id, after) > 0)
    .sort((a, b) => compareSnowflakes(a.user.id, b.user.id))
    .slice(0, limit);
  return ok(members);
}

function createRole(ctx: RestContext, guild: FakeGuild, req: ParsedRequest): Answer {
  const bot = guild.members.get(ctx.state.botUser.id);
  if (!bot || (memberPermissions(guild, bot) & PermissionFlagsBits.ManageRoles) === 0n)
    return MISSING_PERMISSIONS;
  const body = asRecord(req.body) ?? {};
  const role = makeRole({
    name: typeof body.name === 'string' ? body.name : 'new role',
    permissions: body.permissions === undefined ? '0' : String(body.permissions),
    color: typeof body.color === 'number' ? body.color : 0,
    hoist: body.hoist === true,
    mentionable: body.mentionable === true,
  });
  guild.roles.set(role.id, role);
  ctx.dispatch(GatewayDispatchEvents.GuildRoleCreate, { guild_id: guild.id, role });
  return ok(role);
}

function findChannel(state: FakeDiscordState, channelId: string) {
  for (const guild of state.guilds.values()) {
    const channel = guild.channels.get(channelId);
    if (channel) return { channel, guild };
  }
  const dm = state.dmChannels.get(channelId);
  return dm ? { channel: dm, guild: null } : null;
}

function postChannelMessage(ctx: RestContext, req: ParsedRequest, channelId: string): Answer {
  const found = findChannel(ctx.state, channelId);
  if (!found) return UNKNOWN_CHANNEL;
  if (found.guild) {
    const bot = found.guild.members.get(ctx.state.botUser.id);
    const permissions =
      bot && 'permission_overwrites' in found.channel
        ? channelPermissions(found.guild, bot, found.channel)
        : 0n;
    if ((permissions & PermissionFlagsBits.ViewChannel) === 0n)
      return apiError(403, 50_001, 'Missing Access');
    if ((permissions & PermissionFlagsBits.SendMessages) === 0n) return MISSING_PERMISSIONS;
  }
  const payload = asRecord(req.body) ?? {};
  const invalid = validateMessagePayload(payload, { isCreate: true, hasFiles: req.files.length > 0 });
  if (invalid) return invalid;
  const target: MessageTarget = {
    state: ctx.state,
    origin: ctx.origin,
    channelId,
    guildId: found.guild?.id ?? null,
  };
  const message = createMessage(target, ctx.state.botUser, payload, req.files);
  ctx.dispatch(
    GatewayDispatchEvents.MessageCreate,
    found.guild ? { ...message, guild_id: found.guild.id } : message,
  );
  return ok(message);
}

function patchChannelMessage(
  ctx: RestContext,
  req: ParsedRequest,
  channelId: string,
  messageId: string,
): Answer {
  const message = ctx.state.messages.get(messageId);
  if (!message || message.channel_id !== channelId) return UNKNOWN_MESSAGE;
  if (message.author.id !== ctx.state.botUser.id)
    return apiError(403, 50_005, 'Cannot edit a message authored by another user');
  const payload = asRecord(req.body) ?? {};
  const invalid = validateMessagePayload(payload, { isCreate: false, hasFiles: req.files.length > 0 });
  if (invalid) return invalid;
  const guildId = findChannel(ctx.state, channelId)?.guild?.id ?? null;
  return ok(
    editMessage({ state: ctx.state, origin: ctx.origin, channelId, guildId }, message, payload, req.files),
  );
}
