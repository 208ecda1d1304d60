import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { GatewayReadyDispatchData } from 'discord-api-types/v10';
import { GatewayDispatchEvents, GatewayIntentBits, GatewayOpcodes } from 'discord-api-types/v10';
import { type RawData, WebSocket, WebSocketServer } from 'ws';
import { asRecord } from './messages.ts';
import { shardOf } from './snowflake.ts';

/** What the gateway needs from the rest of the fake, as functions of the moment they are called. */
export interface GatewayHooks {
  readonly token: string;
  readonly heartbeatIntervalMs: number;
  /** READY for a session of `shard` ([id, count]); its `guilds` are those `owns` says the shard serves. */
  ready(
    sessionId: string,
    shard: [number, number] | undefined,
    owns: (guildId: string) => boolean,
  ): GatewayReadyDispatchData;
  /** GUILD_CREATE payloads for a session identifying with these intents, of the guilds it `owns`. */
  guildCreates(intents: number, owns: (guildId: string) => boolean): unknown[];
  /** Guilds one shard may serve before Discord closes it with 4011 "sharding required" (default 2500). */
  readonly maxGuildsPerShard?: number;
  /** Every guild id (to count a shard's guilds against `maxGuildsPerShard`). */
  guildIds(): Iterable<string>;
  /** GUILD_MEMBERS_CHUNK payloads answering op 8. */
  memberChunks(request: Record<string, unknown>): unknown[];
}

interface Session {
  readonly id: string;
  readonly intents: number;
  /** [shard_id, num_shards] from IDENTIFY; [0, 1] without sharding. */
  readonly shard: [number, number];
  seq: number;
  socket: WebSocket | null;
  /** Sent (or queued while disconnected) dispatches, for replay on RESUME. */
  readonly frames: { seq: number; text: string }[];
}

const MAX_REPLAY = 1000;
/** Close codes after which Discord will not let the session resume. */
const NON_RESUMABLE = new Set([1000, 4004, 4007, 4009, 4010, 4011, 4012, 4013, 4014]);

const GUILD_EVENTS = new Set<string>([
  GatewayDispatchEvents.GuildCreate,
  GatewayDispatchEvents.GuildUpdate,
  GatewayDispatchEvents.GuildDelete,
  GatewayDispatchEvents.GuildRoleCreate,
  GatewayDispatchEvents.GuildRoleUpdate,
  GatewayDispatchEvents.GuildRoleDelete,
  GatewayDispatchEvents.ChannelCreate,
  GatewayDispatchEvents.ChannelUpdate,
  GatewayDispatchEvents.ChannelDelete,
]);
const MEMBER_EVENTS = new Set<string>([
  GatewayDispatchEvents.GuildMemberAdd,
  GatewayDispatchEvents.GuildMemberUpdate,
  GatewayDispatchEvents.GuildMemberRemove,
]);
const MESSAGE_EVENTS = new Set<string>([
  GatewayDispatchEvents.MessageCreate,
  GatewayDispatchEvents.MessageUpdate,
  GatewayDispatchEvents.MessageDelete,
]);

/** Whether Discord would send this event to a session with these intents. */
export function intentAllows(intents: number, event: string, data: unknown): boolean {
  if (GUILD_EVENTS.has(event)) return (intents & GatewayIntentBits.Guilds) !== 0;
  if (MEMBER_EVENTS.has(event)) return (intents & GatewayIntentBits.GuildMembers) !== 0;
  if (MESSAGE_EVENTS.has(event)) {
    const inGuild = typeof asRecord(data)?.guild_id === 'string';
    return (intents & (inGuild ? GatewayIntentBits.GuildMessages : GatewayIntentBits.DirectMessages)) !== 0;
  }
  return true;
}

/**
 * The guild a dispatch belongs to (its `guild_id`, or the guild itself for GUILD_CREATE/UPDATE/DELETE);
 * undefined for DMs and user-level events, which Discord sends to shard 0.
 */
export function dispatchGuildId(event: string, data: unknown): string | undefined {
  const record = asRecord(data);
  if (typeof record?.guild_id === 'string') return record.guild_id;
  const isGuild =
    event === GatewayDispatchEvents.GuildCreate ||
    event === GatewayDispatchEvents.GuildUpdate ||
    event === GatewayDispatchEvents.GuildDelete;
  return isGuild && typeof record?.id === 'string' ? record.id : undefined;
}

/** Whether a session of `shard` gets a dispatch for this guild (undefined: shard 0 only). */
export function shardServes(shard: [number, number], guildId: string | undefined): boolean {
  return guildId === undefined ? shard[0] === 0 : shardOf(guildId, shard[1]) === shard[0];
}

/**
 * The gateway side of the fake: plain JSON frames, HELLO, heartbeat ACKs, IDENTIFY -> READY + GUILD_CREATE,
 * RESUME with replay of what the client missed, and op 8 member requests. Sharded like Discord: a session
 * identifying as shard [id, count] gets only the guilds with `(guild_id >> 22) % count === id` (DMs on
 * shard 0); an invalid shard closes with 4010, too many guilds on one shard with 4011.
 * @see https://discord.com/developers/docs/events/gateway#connection-lifecycle
 */
export class FakeGateway {
  readonly #hooks: GatewayHooks;
  readonly #wss: WebSocketServer;
  readonly #sessions = new Map<string, Session>();

  constructor(server: Server, hooks: GatewayHooks) {
    this.#hooks = hooks;
    this.#wss = new WebSocketServer({ server });
    this.#wss.on('connection', (socket) => this.#accept(socket));
  }

  /** Whether any session exists (connected, or disconnected and still resumable). */
  get hasSession(): boolean {
    return this.#sessions.size > 0;
  }

  /** Whether any session has a live, identified socket. */
  get hasConnectedSession(): boolean {
    return [...this.#sessions.values()].some((session) => session.socket?.readyState === WebSocket.OPEN);
  }

  /** Every IDENTIFY accepted, in order: its shard and when. */
  readonly identifies: { shard: [number, number]; at: number }[] = [];

  /** The [shard_id, num_shards] of each identified session, connected or resumable. */
  get shards(): [number, number][] {
    return [...this.#sessions.values()].map((session) => session.shard);
  }

  /**
   * Sends a dispatch to every session whose shard serves its guild and whose intents allow it;
   * disconnected sessions get it on resume.
   */
  dispatch(event: string, data: unknown): void {
    const guildId = dispatchGuildId(event, data);
    for (const session of this.#sessions.values()) {
      if (shardServes(session.shard, guildId) && intentAllows(session.intents, event, data))
        this.#send(session, event, data);
    }
  }

  /** Closes every gateway socket with `code` (1006: drop without a close frame). */
  disconnect(code: number): void {
    for (const session of this.#sessions.values()) {
      const socket = session.socket;
      session.socket = null;
      if (NON_RESUMABLE.has(code)) this.#sessions.delete(session.id);
      if (!socket) continue;
      if (code === 1006) socket.terminate();
      else socket.close(code, 'Disconnected by the fake');
    }
  }

  /** Drops every socket and session. */
  async close(): Promise<void> {
    for (const socket of this.#wss.clients) socket.terminate();
    this.#sessions.clear();
    await new Promise<void>((resolve) => this.#wss.close(() => resolve()));
  }

  #accept(socket: WebSocket): void {
    let session: Session | null = null;
    socket.send(
      JSON.stringify({
        op: GatewayOpcodes.Hello,
        d: { heartbeat_interval: this.#hooks.heartbeatIntervalMs },
        s: null,
        t: null,
      }),
    );
    socket.on('message', (raw: RawData, isBinary: boolean) => {
      const frame = isBinary ? null : parseFrame(raw);
      if (!frame) {
        socket.close(4002, 'Error while decoding payload.');
        return;
      }
      if (frame.op === GatewayOpcodes.Heartbeat) {
        socket.send(JSON.stringify({ op: GatewayOpcodes.HeartbeatAck }));
      } else if (frame.op === GatewayOpcodes.Identify || frame.op === GatewayOpcodes.Resume) {
        if (session) {
          socket.close(4005, 'Already authenticated.');
          return;
        }
        session =
          frame.op === GatewayOpcodes.Identify
            ? this.#identify(socket, frame.d)
            : this.#resume(socket, frame.d);
      } else if (!session) {
        socket.close(4003, 'Not authenticated.');
      } else if (frame.op === GatewayOpcodes.RequestGuildMembers) {
        const shard = session.shard;
        for (const chunk of this.#hooks.memberChunks(frame.d)) {
          if (shardServes(shard, dispatchGuildId('', chunk)))
            this.#send(session, GatewayDispatchEvents.GuildMembersChunk, chunk);
        }
      } else if (frame.op !== GatewayOpcodes.PresenceUpdate && frame.op !== GatewayOpcodes.VoiceStateUpdate) {
        socket.close(4001, 'Unknown opcode.');
      }
    });
    socket.on('close', (code: number) => {
      if (!session || session.socket !== socket) return;
      session.socket = null;
      if (code === 1000 || code === 1001) this.#sessions.delete(session.id);
    });
  }

  #identify(socket: WebSocket, d: Record<string, unknown>): Session | null {
    if (!this.#tokenMatches(d.token)) {
      socket.close(4004, 'Authentication failed.');
      return null;
    }
    const shard = Array.isArray(d.shard)
      ? ([Number(d.shard[0]), Number(d.shard[1])] as [number, number])
      : undefined;
    const [shardId, shardCount] = shard ?? [0, 1];
    if (
      !(Number.isInteger(shardId) && Number.isInteger(shardCount) && shardId >= 0 && shardId < shardCount)
    ) {
      socket.close(4010, 'Invalid shard.');
      return null;
    }
    const owns = (guildId: string) => shardOf(guildId, shardCount) === shardId;
    let served = 0;
    for (const guildId of this.#hooks.guildIds()) if (owns(guildId)) served += 1;
    if (served > (this.#hooks.maxGuildsPerShard ?? 2500)) {
      socket.close(4011, 'Sharding required.');
      return null;
    }
    const session: Session = {
      id: randomUUID().replaceAll('-', ''),
      intents: Number(d.intents ?? 0),
      shard: [shardId, shardCount],
      seq: 0,
      socket,
      frames: [],
    };
    this.#sessions.set(session.id, session);
    this.identifies.push({ shard: [shardId, shardCount], at: Date.now() });
    this.#send(session, GatewayDispatchEvents.Ready, this.#hooks.ready(session.id, shard, owns));
    for (const guild of this.#hooks.guildCreates(session.intents, owns))
      this.#send(session, GatewayDispatchEvents.GuildCreate, guild);
    return session;
  }

  #resume(socket: WebSocket, d: Record<string, unknown>): Session | null {
    const session = this.#sessions.get(String(d.session_id));
    if (!session || !this.#tokenMatches(d.token) || session.socket) {
      socket.send(JSON.stringify({ op: GatewayOpcodes.InvalidSession, d: false }));
      return null;
    }
    session.socket = socket;
    const seen = Number(d.seq ?? 0);
    for (const frame of session.frames) if (frame.seq > seen) socket.send(frame.text);
    this.#send(session, GatewayDispatchEvents.Resumed, null);
    return session;
  }

  #tokenMatches(token: unknown): boolean {
    return typeof token === 'string' && token.replace(/^Bot /, '') === this.#hooks.token;
  }

  #send(session: Session, event: string, data: unknown): void {
    session.seq += 1;
    const text = JSON.stringify({ op: GatewayOpcodes.Dispatch, t: event, s: session.seq, d: data });
    session.frames.push({ seq: session.seq, text });
    if (session.frames.length > MAX_REPLAY) session.frames.shift();
    if (session.socket?.readyState === WebSocket.OPEN) session.socket.send(text);
  }
}

function parseFrame(raw: RawData): { op: number; d: Record<string, unknown> } | null {
  try {
    const frame = asRecord(JSON.parse(raw.toString()));
    if (!frame || typeof frame.op !== 'number') return null;
    return { op: frame.op, d: asRecord(frame.d) ?? {} };
  } catch {
    return null;
  }
}
