import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIGuildMember, APIRole, APIUser } from 'discord-api-types/v10';
import {
  ApplicationFlags,
  GatewayDispatchEvents,
  GatewayIntentBits,
  MessageType,
} from 'discord-api-types/v10';
import { FakeGateway } from './gateway.ts';
import { type Answer, apiError, type ParsedRequest, readBody, writeAnswer } from './http.ts';
import { HttpInteractionDelivery, type HttpInteractionsApi } from './httpDelivery.ts';
import {
  ATTACHMENT_SIZE_LIMIT,
  type AutocompleteInput,
  buildAutocompleteInteraction,
  buildCommandInteraction,
  buildComponentInteraction,
  buildModalSubmitInteraction,
  type CommandInput,
  type ComponentInput,
  type ModalInput,
} from './interactionPayloads.ts';
import { type InteractionResult, InteractionTracker, type WaitUntil } from './interactions.ts';
import { asRecord } from './messages.ts';
import { type FakeOAuth, FakeOAuthProvider } from './oauth.ts';
import {
  DiscordRateLimits,
  type RateLimitCounts,
  type RateLimitOptions,
  RoleEditLimiter,
  tooManyRequests,
} from './rateLimit.ts';
import { handleRest, type RestContext } from './rest.ts';
import { nextSnowflake } from './snowflake.ts';
import {
  type AddGuildInput,
  createGuild,
  createState,
  currentUserGuilds,
  type FakeDiscordState,
  type FakeGuild,
  makeMember,
  makeRole,
  makeUser,
  memberEvent,
  type OverwriteInput,
  setOverwrite,
  toApiGuild,
  toGuildCreate,
} from './state.ts';
import { FakeWebhookEvents } from './webhookEvents.ts';

export type {
  DeliverInteractionInput,
  EndpointAnswer,
  HttpDelivery,
  HttpInteractionsApi,
  Tamper,
} from './httpDelivery.ts';
export { InteractionFailedError } from './httpDelivery.ts';
export type { InteractionResult, WaitUntil } from './interactions.ts';
export type { FakeOAuth } from './oauth.ts';
export type { RateLimitCounts, RateLimitOptions, RouteBucket } from './rateLimit.ts';
export { roleEditBucket } from './rateLimit.ts';
export type {
  AuditEntry,
  FakeDiscordState,
  FakeGuild,
  FakeMessage,
  OverwriteInput,
  StoredFile,
} from './state.ts';

export interface FakeDiscordOptions {
  /** The bot token the fake accepts (default 'test-token'). */
  token?: string;
  applicationId?: string;
  botUserId?: string;
  botUsername?: string;
  /** HELLO's heartbeat interval (default 41 250 ms, Discord's). */
  heartbeatIntervalMs?: number;
  /** Callbacks later than this after dispatch get 404 10062, as on Discord (default 3000 ms). */
  interactionAckDeadlineMs?: number;
  /** The OAuth2 client secret the token endpoint accepts (default 'test-client-secret'). */
  clientSecret?: string;
  /** Guilds one shard may serve before IDENTIFY is closed with 4011 (default 2500, as on Discord). */
  maxGuildsPerShard?: number;
  /** What `GET /gateway/bot` recommends as `shards` (default one per 1,000 guilds, at least 1). */
  recommendedShards?: number;
  /** `session_start_limit.max_concurrency` in `GET /gateway/bot` (default 1). */
  maxConcurrency?: number;
}

export interface RecordedRestRequest {
  method: string;
  /** The route below `/api/v10`, percent-decoded. */
  path: string;
  query: Record<string, string>;
  /** Parsed JSON body, or a multipart request's `payload_json`; null without a body. */
  body: unknown;
  /** Files of a multipart request. */
  files: { field: string; filename: string; contentType: string; size: number }[];
  /** Lower-cased header names. */
  headers: Record<string, string>;
  /** Arrival time, `Date.now()`. */
  at: number;
  /** The status the fake answered. */
  status: number;
  /** Whether an `addFault` rule produced the answer. */
  fault: boolean;
}

export interface FaultRule {
  method?: string;
  /** Matched against the decoded route, e.g. /\/guilds\/\d+\/members\/\d+\/roles\//. */
  path: RegExp;
  /** How many requests to fail (default 1; Infinity for all). */
  times?: number;
  status: number;
  /** For 429s, `retry_after` (seconds, default 0.25) and `global` are honoured and the rate-limit headers added. */
  body?: unknown;
  headers?: Record<string, string>;
}

export interface AddMemberOptions {
  roles?: string[];
  /** Granted through an extra role holding exactly these permissions. */
  permissions?: bigint;
  /** Dispatch GUILD_MEMBER_ADD (a member joining). */
  dispatchJoin?: boolean;
}

export interface RunCommandInput extends CommandInput {
  /** Default 5000 ms. */
  timeoutMs?: number;
  until?: WaitUntil;
}

export interface TypeInOptionInput extends AutocompleteInput {
  /** Default 5000 ms. */
  timeoutMs?: number;
}

export interface ClickComponentInput extends ComponentInput {
  timeoutMs?: number;
  until?: WaitUntil;
}

export interface SubmitModalInput extends ModalInput {
  /** The result of the command or click the bot answered with the modal. */
  opened: InteractionResult;
  timeoutMs?: number;
  until?: WaitUntil;
}

export interface FakeDiscord extends HttpInteractionsApi {
  /** 'http://127.0.0.1:PORT/api': pass as the Client's `rest.api` (DISCORD_API_URL). */
  readonly apiUrl: string;
  /** 'ws://127.0.0.1:PORT', also what `GET /gateway/bot` answers. */
  readonly gatewayUrl: string;
  readonly token: string;
  readonly applicationId: string;
  readonly botUserId: string;
  /** Every REST request, in the order answered. */
  readonly requests: RecordedRestRequest[];
  /** OAuth2: the authorize page at `{origin}/oauth2/authorize`, the token endpoint, bearer `/users/@me`. */
  readonly oauth: FakeOAuth;
  /** Webhook Events: the app's key pair, its Webhook Events URL, signed events (a user's deauthorization). */
  readonly webhookEvents: FakeWebhookEvents;
  readonly state: FakeDiscordState;
  /** Creates a guild with @everyone, the bot's managed role and member, an owner, and text channel(s). */
  addGuild(guild?: Partial<AddGuildInput>): FakeGuild;
  /** Adds a role (position 1 unless told); dispatches GUILD_ROLE_CREATE. */
  addRole(guildId: string, role: Partial<APIRole>): APIRole;
  /** Adds a user who may not share a guild with the bot (for DMs and user options). */
  addUser(user: Partial<APIUser> & Pick<APIUser, 'id' | 'username'>): APIUser;
  /** Adds a guild member; GUILD_MEMBER_ADD when `dispatchJoin`. */
  addMember(
    guildId: string,
    user: Partial<APIUser> & Pick<APIUser, 'id' | 'username'>,
    options?: AddMemberOptions,
  ): APIGuildMember;
  /**
   * Changes a member as a moderator would (roles, nickname, a timeout until an ISO time or null to lift
   * it); dispatches GUILD_MEMBER_UPDATE.
   */
  updateMember(
    guildId: string,
    userId: string,
    change: { roles?: string[]; nick?: string | null; communicationDisabledUntil?: string | null },
  ): APIGuildMember;
  /** Removes a member; dispatches GUILD_MEMBER_REMOVE. */
  removeMember(guildId: string, userId: string): void;
  /** Renames a guild as its owner would; dispatches GUILD_UPDATE. */
  renameGuild(guildId: string, name: string): void;
  /**
   * Sets one permission overwrite on a channel (a role's, @everyone's with the guild's id, or a member's)
   * as an admin would; with neither `allow` nor `deny` it is removed. Dispatches CHANNEL_UPDATE. From then
   * on interactions in that channel carry the member's permissions there.
   */
  setChannelOverwrite(guildId: string, channelId: string, overwrite: OverwriteInput): void;
  /**
   * Plays a user running a slash command (or user context menu); resolves when the response is complete:
   * a type-4 reply, a type-5 deferral then an edit of @original (or a first follow-up), or a modal.
   */
  runCommand(input: RunCommandInput): Promise<InteractionResult>;
  /**
   * Plays a user typing `value` into the autocomplete option `focused` of a slash command (an interaction
   * of type 4); resolves at the bot's type-8 answer, whose `data.choices` is checked against Discord's limits.
   */
  typeInOption(input: TypeInOptionInput): Promise<InteractionResult>;
  /** Plays a click on a component of a message the bot sent (select menu values or button). */
  clickComponent(input: ClickComponentInput): Promise<InteractionResult>;
  /** Plays the same user submitting the modal the bot showed; inputs are checked against the modal. */
  submitModal(input: SubmitModalInput): Promise<InteractionResult>;
  /** The interaction JSON `runCommand` would send (fresh id and token), without sending or tracking it. */
  buildCommandInteraction(input: CommandInput): ReturnType<typeof buildCommandInteraction>;
  /** Sends any gateway dispatch to the connected bot(s): to the shard that serves its guild. */
  dispatch(event: string, data: unknown): void;
  /** [shard_id, num_shards] of each identified gateway session. */
  readonly gatewayShards: [number, number][];
  /** Every IDENTIFY accepted, in order: its shard and when (`Date.now()`). */
  readonly gatewayIdentifies: { shard: [number, number]; at: number }[];
  /** The first recorded request, past or future, that matches; rejects after `timeoutMs` (default 5000). */
  waitForRequest(
    predicate: (request: RecordedRestRequest) => boolean,
    timeoutMs?: number,
  ): Promise<RecordedRestRequest>;
  /** Makes the next matching REST request(s) fail with this answer. */
  addFault(fault: FaultRule): void;
  /** Drops every fault rule not used up yet. */
  clearFaults(): void;
  /** Per-guild limit on member role edits: beyond `perSecond`, 429 with retry_after and X-RateLimit-* headers. */
  limitRoleEdits(guildId: string, perSecond: number | null): void;
  /**
   * Enforces Discord's global limit per bot token and per-route buckets (rateLimit.ts), with their headers
   * and 429s; replaces earlier limits and zeroes `rateLimitCounts`. `{}` lifts them.
   */
  enforceRateLimits(options: RateLimitOptions): void;
  /** The 429s answered for `enforceRateLimits`' limits since it was last called. */
  readonly rateLimitCounts: Readonly<RateLimitCounts>;
  /** Closes the gateway sockets with `code` (default 4000: the client resumes). 1006 drops them without a frame. */
  disconnectGateway(code?: number): void;
  close(): Promise<void>;
}

const DEFAULT_TIMEOUT_MS = 5000;

/** Starts the stand-in Discord (REST under /api and the gateway) on 127.0.0.1, on a free port. */
export async function startFakeDiscord(options: FakeDiscordOptions = {}): Promise<FakeDiscord> {
  const token = options.token ?? 'test-token';
  const applicationId = options.applicationId ?? nextSnowflake();
  const botUser = makeUser({
    id: options.botUserId ?? applicationId,
    username: options.botUsername ?? 'web3bio-bot',
    bot: true,
    verified: true,
    mfa_enabled: false,
  });
  const state = createState(botUser);
  const oauth = new FakeOAuthProvider({
    applicationId,
    clientSecret: options.clientSecret ?? 'test-client-secret',
    botToken: token,
    users: state.users,
    guildsOf: (userId) => currentUserGuilds(state, userId),
  });
  const webhookEvents = new FakeWebhookEvents({ applicationId, oauth, users: state.users });
  const requests: RecordedRestRequest[] = [];
  const requestWaiters = new Set<(request: RecordedRestRequest) => void>();
  const faults: (FaultRule & { left: number })[] = [];
  const limiter = new RoleEditLimiter();
  const rateLimits = new DiscordRateLimits();

  const server = createServer((req, res) => {
    handleHttp(req, res).catch((error: unknown) => {
      if (!res.headersSent) writeAnswer(res, apiError(500, 0, `fake Discord failed: ${String(error)}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  const gatewayUrl = `ws://127.0.0.1:${port}`;

  const gateway = new FakeGateway(server, {
    token,
    heartbeatIntervalMs: options.heartbeatIntervalMs ?? 41_250,
    ...(options.maxGuildsPerShard === undefined ? {} : { maxGuildsPerShard: options.maxGuildsPerShard }),
    guildIds: () => state.guilds.keys(),
    ready: (sessionId, shard, owns) => ({
      v: 10,
      user: botUser,
      guilds: [...state.guilds.keys()].filter(owns).map((id) => ({ id, unavailable: true })),
      session_id: sessionId,
      resume_gateway_url: gatewayUrl,
      application: {
        id: applicationId,
        flags: ApplicationFlags.GatewayMessageContentLimited,
        flags_new: String(ApplicationFlags.GatewayMessageContentLimited),
      },
      ...(shard ? { shard } : {}),
    }),
    guildCreates: (intents, owns) =>
      [...state.guilds.values()]
        .filter((guild) => owns(guild.id))
        .map((guild) => toGuildCreate(guild, botUser.id, (intents & GatewayIntentBits.GuildPresences) !== 0)),
    memberChunks: (request) => memberChunks(state, request),
  });
  const ackDeadlineMs = options.interactionAckDeadlineMs ?? 3000;
  const interactions = new InteractionTracker({ state, origin, applicationId, ackDeadlineMs });
  const http = new HttpInteractionDelivery({
    applicationId,
    tracker: interactions,
    ackDeadlineMs,
    sign: (body, timestampSeconds) => webhookEvents.sign(body, timestampSeconds),
  });
  const dispatch = (event: string, data: unknown) => gateway.dispatch(event, data);
  const rest: RestContext = {
    state,
    token,
    applicationId,
    origin,
    gatewayUrl,
    recommendedShards: () => options.recommendedShards ?? Math.max(1, Math.ceil(state.guilds.size / 1000)),
    maxConcurrency: options.maxConcurrency ?? 1,
    interactions,
    limiter,
    dispatch,
  };

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', origin);
    if (req.method === 'GET' && url.pathname.startsWith('/attachments/')) {
      writeAnswer(res, serveAttachment(state, url.pathname));
      return;
    }
    if (req.method === 'GET' && url.pathname === '/oauth2/authorize') {
      req.resume();
      writeAnswer(res, oauth.authorize(url.searchParams));
      return;
    }
    const at = Date.now();
    const routePath = /^\/api(?:\/v\d+)?(\/.*)$/.exec(url.pathname)?.[1];
    const read = await readBody(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
    );
    const parsed: ParsedRequest = {
      method: req.method ?? 'GET',
      path: decodePath(routePath ?? url.pathname),
      query: url.searchParams,
      headers,
      body: 'status' in read ? null : read.body,
      files: 'status' in read ? [] : read.files,
    };
    const fault = routePath === undefined || 'status' in read ? null : takeFault(parsed);
    let answer: Answer;
    if (routePath === undefined) answer = apiError(404, 0, '404: Not Found');
    else if ('status' in read) answer = read;
    else answer = fault ?? limitedOrAnswered(parsed, at);
    writeAnswer(res, answer);
    record(parsed, at, answer.status, fault !== null);
  }

  /**
   * Discord's rate limits first (`enforceRateLimits`), counted at the request's arrival, not after its body
   * was read; then the route's answer with the bucket's headers.
   */
  function limitedOrAnswered(req: ParsedRequest, arrivedAt: number): Answer {
    const limits = rateLimits.take(
      { method: req.method, path: req.path, authorization: req.headers.authorization },
      arrivedAt,
    );
    if ('limited' in limits) return limits.limited;
    const answer = oauth.handle(req) ?? answerSafely(rest, req);
    if (Object.keys(limits.headers).length === 0) return answer;
    return { ...answer, headers: { ...limits.headers, ...answer.headers } };
  }

  function takeFault(req: ParsedRequest): Answer | null {
    const rule = faults.find(
      (f) => f.left > 0 && f.path.test(req.path) && (!f.method || f.method.toUpperCase() === req.method),
    );
    if (!rule) return null;
    rule.left -= 1;
    if (rule.status === 429) {
      const body = asRecord(rule.body) ?? {};
      const answer = tooManyRequests({
        retryAfterSeconds: typeof body.retry_after === 'number' ? body.retry_after : 0.25,
        global: body.global === true,
      });
      return { ...answer, headers: { ...answer.headers, ...rule.headers } };
    }
    return {
      status: rule.status,
      body: rule.body ?? { message: `fault ${rule.status}`, code: 0 },
      headers: rule.headers ?? {},
    };
  }

  function record(req: ParsedRequest, at: number, status: number, fault: boolean): void {
    const entry: RecordedRestRequest = {
      method: req.method,
      path: req.path,
      query: Object.fromEntries(req.query),
      body: req.body,
      files: req.files.map((file) => ({
        field: file.field,
        filename: file.filename,
        contentType: file.contentType,
        size: file.data.byteLength,
      })),
      headers: req.headers,
      at,
      status,
      fault,
    };
    requests.push(entry);
    for (const waiter of requestWaiters) waiter(entry);
  }

  function guildOrThrow(guildId: string): FakeGuild {
    const guild = state.guilds.get(guildId);
    if (!guild) throw new Error(`unknown guild ${guildId}`);
    return guild;
  }

  function addUser(input: Partial<APIUser> & Pick<APIUser, 'id' | 'username'>): APIUser {
    const user = makeUser({ ...state.users.get(input.id), ...input });
    state.users.set(user.id, user);
    return user;
  }

  function addRole(guildId: string, input: Partial<APIRole>): APIRole {
    const guild = guildOrThrow(guildId);
    const role = makeRole(input);
    guild.roles.set(role.id, role);
    dispatch(GatewayDispatchEvents.GuildRoleCreate, { guild_id: guild.id, role });
    return role;
  }

  function play<T extends { timeoutMs?: number; until?: WaitUntil }>(
    input: T,
    build: (
      id: string,
      token: string,
    ) => {
      payload: unknown;
      track: Omit<
        Parameters<InteractionTracker['track']>[0],
        'id' | 'token' | 'until' | 'timeoutMs' | 'attachmentSizeLimit'
      >;
    },
  ): Promise<InteractionResult> {
    if (http.url === null && !gateway.hasSession)
      return Promise.reject(new Error('no bot is connected to the fake gateway'));
    const id = nextSnowflake();
    const interactionToken = newInteractionToken(id);
    let built: ReturnType<typeof build>;
    try {
      built = build(id, interactionToken);
    } catch (error) {
      return Promise.reject(error);
    }
    const result = interactions.track({
      ...built.track,
      id,
      token: interactionToken,
      until: input.until ?? 'done',
      timeoutMs: input.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      attachmentSizeLimit:
        (built.payload as { attachment_size_limit?: number }).attachment_size_limit ?? ATTACHMENT_SIZE_LIMIT,
    });
    if (http.url === null) dispatch(GatewayDispatchEvents.InteractionCreate, built.payload);
    else
      http
        .deliver({ id, token: interactionToken, kind: built.track.kind }, built.payload)
        .catch((error: unknown) =>
          interactions.abandon(id, new Error(`fake Discord failed: ${String(error)}`)),
        );
    return result;
  }

  const fake: FakeDiscord = {
    get gatewayShards() {
      return gateway.shards;
    },
    get gatewayIdentifies() {
      return gateway.identifies;
    },
    apiUrl: `${origin}/api`,
    gatewayUrl,
    token,
    applicationId,
    botUserId: botUser.id,
    requests,
    oauth,
    webhookEvents,
    applicationPublicKey: webhookEvents.publicKey,
    get interactionsEndpoint() {
      return http.url;
    },
    httpDeliveries: http.deliveries,
    useInteractionsEndpoint: (url) => http.use(url),
    saveInteractionsEndpoint: (url) => http.save(url),
    pingInteractionsEndpoint: (url) => http.ping(url),
    deliverInteraction: (input) => http.raw(input),
    buildCommandInteraction(input) {
      const id = nextSnowflake();
      return buildCommandInteraction({ state, applicationId }, input, id, newInteractionToken(id));
    },
    state,
    addGuild(input = {}) {
      const guild = createGuild(state, input);
      if (input.botInstalled !== false)
        gateway.dispatch(GatewayDispatchEvents.GuildCreate, toGuildCreate(guild, botUser.id, false));
      return guild;
    },
    addRole,
    addUser,
    addMember(guildId, input, memberOptions = {}) {
      const guild = guildOrThrow(guildId);
      const user = addUser(input);
      const roles = [...(memberOptions.roles ?? [])];
      if (memberOptions.permissions !== undefined) {
        const name = `perms-${memberOptions.permissions.toString(16)}`;
        roles.push(addRole(guildId, { name, permissions: memberOptions.permissions.toString() }).id);
      }
      const member = makeMember(user, roles);
      guild.members.set(user.id, member);
      if (memberOptions.dispatchJoin)
        dispatch(GatewayDispatchEvents.GuildMemberAdd, memberEvent(guild.id, member));
      return member;
    },
    updateMember(guildId, userId, change) {
      const guild = guildOrThrow(guildId);
      const member = guild.members.get(userId);
      if (!member) throw new Error(`user ${userId} is not a member of guild ${guildId}`);
      const next = {
        ...member,
        ...(change.roles ? { roles: change.roles } : {}),
        ...('nick' in change ? { nick: change.nick ?? null } : {}),
        ...('communicationDisabledUntil' in change
          ? { communication_disabled_until: change.communicationDisabledUntil ?? null }
          : {}),
      };
      guild.members.set(userId, next);
      dispatch(GatewayDispatchEvents.GuildMemberUpdate, memberEvent(guild.id, next));
      return next;
    },
    removeMember(guildId, userId) {
      const guild = guildOrThrow(guildId);
      const member = guild.members.get(userId);
      if (!member) return;
      guild.members.delete(userId);
      dispatch(GatewayDispatchEvents.GuildMemberRemove, { guild_id: guild.id, user: member.user });
    },
    setChannelOverwrite(guildId, channelId, overwrite) {
      const guild = guildOrThrow(guildId);
      const channel = guild.channels.get(channelId);
      if (!channel) throw new Error(`unknown channel ${channelId} in guild ${guildId}`);
      setOverwrite(channel, overwrite);
      dispatch(GatewayDispatchEvents.ChannelUpdate, { ...channel, guild_id: guild.id });
    },
    renameGuild(guildId, name) {
      const guild = guildOrThrow(guildId);
      guild.name = name;
      dispatch(GatewayDispatchEvents.GuildUpdate, toApiGuild(guild));
    },
    runCommand(input) {
      return play(input, (id, interactionToken) => {
        const payload = buildCommandInteraction({ state, applicationId }, input, id, interactionToken);
        return {
          payload,
          track: {
            kind: 'command',
            user: payload.member?.user ?? payload.user ?? botUser,
            channelId: payload.channel_id,
            guildId: payload.guild_id ?? null,
            sourceMessageId: null,
            openedBy: null,
            commandName: input.name,
            messageType:
              input.type === 'user' || input.type === 'message'
                ? MessageType.ContextMenuCommand
                : MessageType.ChatInputCommand,
          },
        };
      });
    },
    typeInOption(input) {
      return play(input, (id, interactionToken) => {
        const payload = buildAutocompleteInteraction({ state, applicationId }, input, id, interactionToken);
        return {
          payload,
          track: {
            kind: 'autocomplete',
            user: payload.member?.user ?? payload.user ?? botUser,
            channelId: payload.channel_id ?? '0',
            guildId: payload.guild_id ?? null,
            sourceMessageId: null,
            openedBy: null,
            commandName: input.name,
            messageType: MessageType.ChatInputCommand,
          },
        };
      });
    },
    clickComponent(input) {
      return play(input, (id, interactionToken) => {
        const payload = buildComponentInteraction({ state, applicationId }, input, id, interactionToken);
        return {
          payload,
          track: {
            kind: 'component',
            user: payload.member?.user ?? payload.user ?? botUser,
            channelId: payload.channel_id,
            guildId: payload.guild_id ?? null,
            sourceMessageId: payload.message.id,
            openedBy: null,
            commandName: input.customId,
            messageType: MessageType.Default,
          },
        };
      });
    },
    submitModal(input) {
      return play(input, (id, interactionToken) => {
        const opened = interactions.openedModal(input.opened.interactionId);
        if (!opened) throw new Error('submitModal: that interaction was not answered with a modal');
        const payload = buildModalSubmitInteraction(
          { state, applicationId },
          opened.input,
          opened.modal,
          input,
          id,
          interactionToken,
        );
        return {
          payload,
          track: {
            kind: 'modal',
            user: opened.input.user,
            channelId: opened.input.channelId,
            guildId: opened.input.guildId,
            sourceMessageId: opened.input.sourceMessageId,
            openedBy: opened.input.id,
            commandName: payload.data.custom_id,
            messageType: MessageType.Default,
          },
        };
      });
    },
    dispatch,
    waitForRequest(predicate, timeoutMs = DEFAULT_TIMEOUT_MS) {
      const seen = requests.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const waiter = (request: RecordedRestRequest) => {
          if (!predicate(request)) return;
          cleanup();
          resolve(request);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new Error(`no matching REST request within ${timeoutMs} ms (saw ${requests.length} requests)`),
          );
        }, timeoutMs);
        const cleanup = () => {
          clearTimeout(timer);
          requestWaiters.delete(waiter);
        };
        requestWaiters.add(waiter);
      });
    },
    clearFaults() {
      faults.length = 0;
    },
    addFault(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    limitRoleEdits(guildId, perSecond) {
      limiter.set(guildId, perSecond);
    },
    enforceRateLimits(options) {
      rateLimits.enforce(options);
    },
    get rateLimitCounts() {
      return rateLimits.counts;
    },
    disconnectGateway(code = 4000) {
      gateway.disconnect(code);
    },
    async close() {
      interactions.closeAll();
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}

function newInteractionToken(id: string): string {
  return `fake-interaction.${id}.${randomBytes(12).toString('hex')}`;
}

/** A bug in the fake must still be answered and recorded, not hang the client. */
function answerSafely(rest: RestContext, req: ParsedRequest): Answer {
  try {
    return handleRest(rest, req);
  } catch (error) {
    return apiError(500, 0, `fake Discord failed: ${String(error)}`);
  }
}

function decodePath(path: string): string {
  return path
    .split('/')
    .map((segment) => {
      try {
        return decodeURIComponent(segment);
      } catch {
        return segment;
      }
    })
    .join('/');
}

function serveAttachment(state: FakeDiscordState, pathname: string): Answer {
  const attachmentId = pathname.split('/')[3] ?? '';
  const file = state.files.get(attachmentId);
  if (!file) return apiError(404, 0, '404: Not Found');
  return { status: 200, body: file.data, headers: { 'Content-Type': file.contentType } };
}

/** Answers op 8 (Request Guild Members) with GUILD_MEMBERS_CHUNK payloads of up to 1000 members. */
function memberChunks(state: FakeDiscordState, request: Record<string, unknown>): unknown[] {
  const guildIds = Array.isArray(request.guild_id)
    ? request.guild_id.map(String)
    : [String(request.guild_id)];
  const nonce = typeof request.nonce === 'string' ? { nonce: request.nonce } : {};
  return guildIds.flatMap((guildId) => {
    const guild = state.guilds.get(guildId);
    if (!guild) return [];
    let members = [...guild.members.values()];
    let notFound: string[] = [];
    if (request.user_ids !== undefined) {
      const ids = (Array.isArray(request.user_ids) ? request.user_ids : [request.user_ids]).map(String);
      members = members.filter((member) => ids.includes(member.user.id));
      notFound = ids.filter((id) => !guild.members.has(id));
    } else {
      const query = String(request.query ?? '').toLowerCase();
      members = members.filter(
        (member) =>
          member.user.username.toLowerCase().startsWith(query) ||
          (member.nick ?? '').toLowerCase().startsWith(query),
      );
      const limit = Number(request.limit ?? 0);
      if (limit > 0) members = members.slice(0, limit);
    }
    const chunks: unknown[] = [];
    const count = Math.max(1, Math.ceil(members.length / 1000));
    for (let index = 0; index < count; index += 1) {
      chunks.push({
        guild_id: guildId,
        members: members.slice(index * 1000, (index + 1) * 1000),
        chunk_index: index,
        chunk_count: count,
        ...(index === 0 && notFound.length > 0 ? { not_found: notFound } : {}),
        ...nonce,
      });
    }
    return chunks;
  });
}
