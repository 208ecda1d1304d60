import type { APIAttachment, APIEmbed, APIMessage, APIUser, MessageFlags } from 'discord-api-types/v10';
import { MessageType } from 'discord-api-types/v10';
import { nextSnowflake } from './snowflake.ts';
import type { FakeDiscordState, FakeMessage, StoredFile } from './state.ts';

/** A file part of a multipart request (`files[n]`). */
export interface UploadedFile {
  readonly field: string;
  readonly filename: string;
  readonly contentType: string;
  readonly data: Uint8Array;
}

export interface MessageTarget {
  readonly state: FakeDiscordState;
  /** `http://127.0.0.1:PORT`, where stored attachments are served. */
  readonly origin: string;
  readonly channelId: string;
  readonly guildId: string | null;
}

export type Payload = Record<string, unknown>;

const MESSAGE_FLAG_EPHEMERAL = 64;
const MESSAGE_FLAG_LOADING = 128;
/** Flags a sender may set: SuppressEmbeds, Ephemeral, SuppressNotifications, IsComponentsV2. */
const SENDABLE_FLAGS = 4 | MESSAGE_FLAG_EPHEMERAL | 4096 | 32_768;

export { MESSAGE_FLAG_EPHEMERAL, MESSAGE_FLAG_LOADING };

/** Narrows unknown JSON to a plain object, or null. */
export function asRecord(value: unknown): Payload | null {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Payload) : null;
}

/** Stores a new message built from a send payload (content, embeds, components, flags, files). */
export function createMessage(
  target: MessageTarget,
  author: APIUser,
  payload: Payload,
  files: UploadedFile[],
  extra: Partial<APIMessage> = {},
): FakeMessage {
  const flags = (Number(payload.flags ?? 0) & SENDABLE_FLAGS) | Number(extra.flags ?? 0);
  const base: FakeMessage = {
    id: nextSnowflake(),
    channel_id: target.channelId,
    author,
    content: '',
    timestamp: new Date().toISOString(),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    components: [],
    pinned: false,
    type: MessageType.Default,
    ...extra,
    flags: flags as MessageFlags,
  };
  const message = applyPayload(target, base, payload, files);
  target.state.messages.set(message.id, message);
  return message;
}

/** Applies an edit payload the way Discord does: only the fields sent change. */
export function editMessage(
  target: MessageTarget,
  message: FakeMessage,
  payload: Payload,
  files: UploadedFile[],
): FakeMessage {
  const edited = applyPayload(
    target,
    { ...message, edited_timestamp: new Date().toISOString() },
    payload,
    files,
  );
  if ('flags' in payload) {
    const keep = Number(message.flags ?? 0) & ~4;
    edited.flags = (keep | (Number(payload.flags ?? 0) & 4)) as MessageFlags;
  }
  target.state.messages.set(edited.id, edited);
  return edited;
}

/** Clears the "thinking…" state of a deferred reply. */
export function withoutLoading(message: FakeMessage): FakeMessage {
  return { ...message, flags: (Number(message.flags ?? 0) & ~MESSAGE_FLAG_LOADING) as MessageFlags };
}

function applyPayload(
  target: MessageTarget,
  message: FakeMessage,
  payload: Payload,
  files: UploadedFile[],
): FakeMessage {
  const next: FakeMessage = { ...message };
  if ('content' in payload) next.content = typeof payload.content === 'string' ? payload.content : '';
  if ('tts' in payload) next.tts = payload.tts === true;
  if ('components' in payload) next.components = Array.isArray(payload.components) ? payload.components : [];
  next.attachments = nextAttachments(target, message.attachments, payload, files);
  if ('embeds' in payload) {
    const embeds = Array.isArray(payload.embeds) ? (payload.embeds as APIEmbed[]) : [];
    next.embeds = embeds.map((embed) => resolveEmbed(embed, next.attachments));
  }
  if ('content' in payload || 'allowed_mentions' in payload) {
    Object.assign(next, computeMentions(target, next.content, asRecord(payload.allowed_mentions)));
  }
  return next;
}

function nextAttachments(
  target: MessageTarget,
  current: APIAttachment[],
  payload: Payload,
  files: UploadedFile[],
): APIAttachment[] {
  const listed = Array.isArray(payload.attachments) ? payload.attachments.map(asRecord) : null;
  const kept = listed
    ? current.filter((attachment) => listed.some((entry) => String(entry?.id) === attachment.id))
    : current;
  const added = files.map((file, index) => {
    const fileIndex = /\[(\d+)\]/.exec(file.field)?.[1] ?? String(index);
    const entry = listed?.find((candidate) => String(candidate?.id) === fileIndex);
    return storeAttachment(target, file, entry);
  });
  return [...kept, ...added];
}

function storeAttachment(
  target: MessageTarget,
  file: UploadedFile,
  entry: Payload | null | undefined,
): APIAttachment {
  const id = nextSnowflake();
  const filename = typeof entry?.filename === 'string' ? entry.filename : file.filename;
  const stored: StoredFile = { id, filename, contentType: file.contentType, data: file.data };
  target.state.files.set(id, stored);
  const url = `${target.origin}/attachments/${target.channelId}/${id}/${encodeURIComponent(filename)}`;
  const attachment: APIAttachment = {
    id,
    filename,
    size: file.data.byteLength,
    url,
    proxy_url: url,
    content_type: file.contentType,
  };
  if (typeof entry?.description === 'string') attachment.description = entry.description;
  return attachment;
}

function resolveEmbed(embed: APIEmbed, attachments: APIAttachment[]): APIEmbed {
  const resolve = (url: string | undefined): string | undefined => {
    if (!url?.startsWith('attachment://')) return url;
    const name = url.slice('attachment://'.length);
    return attachments.find((attachment) => attachment.filename === name)?.url ?? url;
  };
  const resolved: APIEmbed = { type: 'rich' as APIEmbed['type'], ...embed };
  if (embed.image) resolved.image = { ...embed.image, url: resolve(embed.image.url) ?? embed.image.url };
  if (embed.thumbnail) {
    resolved.thumbnail = { ...embed.thumbnail, url: resolve(embed.thumbnail.url) ?? embed.thumbnail.url };
  }
  if (embed.author?.icon_url) resolved.author = { ...embed.author, icon_url: resolve(embed.author.icon_url) };
  if (embed.footer?.icon_url) resolved.footer = { ...embed.footer, icon_url: resolve(embed.footer.icon_url) };
  return resolved;
}

/**
 * Who the content would ping, honouring `allowed_mentions` (absent = everything parses, as on Discord).
 * Embeds never ping, so only `content` counts.
 */
export function computeMentions(
  target: MessageTarget,
  content: string,
  allowed: Payload | null,
): Pick<APIMessage, 'mentions' | 'mention_roles' | 'mention_everyone'> {
  const parse = allowed ? (Array.isArray(allowed.parse) ? allowed.parse.map(String) : []) : null;
  const allowList = (key: 'users' | 'roles'): string[] =>
    Array.isArray(allowed?.[key]) ? (allowed[key] as unknown[]).map(String) : [];
  const allows = (kind: 'users' | 'roles', id: string) =>
    parse === null || parse.includes(kind) || allowList(kind).includes(id);
  const userIds = new Set([...content.matchAll(/<@!?(\d{1,20})>/g)].map((match) => match[1] ?? ''));
  const roleIds = new Set([...content.matchAll(/<@&(\d{1,20})>/g)].map((match) => match[1] ?? ''));
  const guild = target.guildId ? target.state.guilds.get(target.guildId) : undefined;
  const mentions = [...userIds]
    .filter((id) => allows('users', id))
    .map((id) => target.state.users.get(id))
    .filter((user): user is APIUser => user !== undefined);
  const mentionRoles = [...roleIds].filter((id) => guild?.roles.has(id) && allows('roles', id));
  const everyone = /@(everyone|here)/.test(content) && (parse === null || parse.includes('everyone'));
  return { mentions, mention_roles: mentionRoles, mention_everyone: everyone };
}
