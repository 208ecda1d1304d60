/**
 * The one place that handles hostile text and URLs for Discord, and enforces Discord's message limits.
 * Every user-controlled string a renderer outputs goes through a function here.
 */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIComponentInMessageActionRow,
  type APIEmbed,
  type APIStringSelectComponent,
  ComponentType,
} from 'discord-api-types/v10';
import type { MessagePayload } from './types.ts';

/** Discord's limits for a message body, in UTF-16 code units (never fewer than Discord counts). */
export const DISCORD_LIMITS = {
  content: 2000,
  embeds: 10,
  embedTotal: 6000,
  title: 256,
  description: 4096,
  fields: 25,
  fieldName: 256,
  fieldValue: 1024,
  footer: 2048,
  author: 256,
  url: 2048,
  actionRows: 5,
  buttonsPerRow: 5,
  selectOptions: 25,
  selectOptionLabel: 100,
  selectOptionValue: 100,
  selectOptionDescription: 100,
  selectPlaceholder: 150,
  buttonLabel: 80,
  linkButtonUrl: 512,
  customId: 100,
} as const;

/** What an empty field name or value becomes: Discord rejects empty ones. */
export const EMPTY_FIELD = '\u200b';

const ELLIPSIS = '…';

// Control characters except \n, bidi overrides/isolates/marks, and invisible fillers used to fake blank names.
const STRIP_RE =
  /[^\P{Cc}\n]|[\u061c\u115f\u1160\u180e\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\u3164\ufeff\uffa0]/gu;
const MARKDOWN_RE = /[\\*_~`|>#\-[\]()]/g;
// Line-start list markers that the character escape above does not cover: `1. item` and `+ item`.
const LIST_MARKER_RE = /^(\s*)(\d+)\.(?=\s)|^(\s*)\+(?=\s)/gm;
// `<@id>`, `<@!id>`, `<@&id>`, `<#id>`, `</cmd:id>`, `<t:…>`, `<:emoji:id>`, `<a:emoji:id>`, `<id:…>`.
const ANGLE_MENTION_RE = /<(?=[@#/:]|[a-z]+:)/gi;
const EVERYONE_RE = /@(everyone|here)/gi;
const URL_IN_TEXT_RE = /https?:\/\/[^\s<>\\]+/gi;
const UNSAFE_URL_CHAR_RE = /[\p{Cc}\s\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]/u;

/** Remove control, bidi and invisible filler characters, replace lone surrogates with U+FFFD; keep newlines. */
export function cleanText(s: string): string {
  return s
    .toWellFormed()
    .replace(/\r\n?|[\u2028\u2029]/g, '\n')
    .replace(/\t/g, ' ')
    .replace(STRIP_RE, '');
}

/** `cleanText` on one line: every run of whitespace becomes a single space. For labels and names. */
export function cleanLine(s: string): string {
  return cleanText(s).replace(/\s+/g, ' ').trim();
}

function neutraliseMentions(s: string): string {
  return s.replace(EVERYONE_RE, '@\u200b$1').replace(ANGLE_MENTION_RE, '<\u200b');
}

function escapeMarkdown(s: string): string {
  return s
    .replace(MARKDOWN_RE, '\\$&')
    .replace(LIST_MARKER_RE, (_match, indent: string | undefined, digits: string | undefined, plusIndent) =>
      digits !== undefined ? `${indent ?? ''}${digits}\\.` : `${plusIndent ?? ''}\\+`,
    );
}

function escapeSegment(s: string): string {
  return escapeMarkdown(neutraliseMentions(s));
}

function countOf(s: string, char: string): number {
  return s.split(char).length - 1;
}

/** Drop sentence punctuation after a URL in prose; a closing bracket stays when the URL opened one. */
function trimUrlEnd(url: string): string {
  let end = url.length;
  while (end > 0) {
    const last = url[end - 1] ?? '';
    const head = url.slice(0, end);
    const opener = last === ')' ? '(' : last === ']' ? '[' : null;
    const balanced = opener !== null && countOf(head, opener) >= countOf(head, last);
    if (balanced || !/[.,:;!?'")\]}*_~|]/.test(last)) break;
    end--;
  }
  return url.slice(0, end);
}

/**
 * Escape Discord markdown and neutralise mentions, masked links and control/bidi characters.
 * Safe URLs in the text stay clickable as normalised `<url>` autolinks (escaping inside a URL would
 * corrupt it); other URLs are escaped like the rest.
 */
export function escapeText(s: string): string {
  const text = cleanText(s);
  let out = '';
  let last = 0;
  for (const match of text.matchAll(URL_IN_TEXT_RE)) {
    const token = trimUrlEnd(match[0]);
    const url = safeUrl(token, '')?.replace(EVERYONE_RE, '%40$1');
    if (!url) continue;
    out += `${escapeSegment(text.slice(last, match.index))}<${url}>`;
    last = match.index + token.length;
  }
  return out + escapeSegment(text.slice(last));
}

/** `escapeText` on one line (whitespace runs collapsed), for titles, field names and list items. */
export function escapeLine(s: string): string {
  return escapeText(cleanLine(s));
}

/** Text escaped without keeping URLs clickable, for the text part of a masked link. */
function escapeLinkText(s: string): string {
  return escapeSegment(cleanLine(s));
}

/**
 * A masked link `[text](url)` when the URL is safe, else the escaped text alone. Text is cut to `maxText`.
 * Text that itself looks like a URL shows the real URL instead, so a link can never pose as another.
 */
export function maskedLink(text: string, url: string | null, maxText = 100): string {
  const label = escapeLinkText(truncate(cleanLine(text), maxText));
  if (url === null) return label;
  if (label === '' || /:\/\/|^www\./i.test(text)) return `<${url}>`;
  return `[${label}](${url})`;
}

/**
 * A copyable inline code span of at most `max` characters, cut inside the backticks so the span always
 * closes. Backticks are dropped since code spans cannot escape them.
 */
export function inlineCode(s: string, max = 200): string {
  const code = truncate(neutraliseMentions(cleanLine(s).replace(/`/g, '')), max - 2);
  return code === '' ? '' : `\`${code}\``;
}

function gatewayBase(ipfsGateway: string): string | null {
  if (!URL.canParse(ipfsGateway)) return null;
  const gateway = new URL(ipfsGateway);
  if (gateway.protocol !== 'https:' && gateway.protocol !== 'http:') return null;
  return `${gateway.origin}${gateway.pathname}`.replace(/\/+$/, '');
}

/**
 * A URL that is safe to link from Discord, or null: http(s) only (ipfs:// and ipns:// through the gateway),
 * no credentials, no control or bidi characters, at most 2048 characters. Brackets are percent-encoded so
 * the result can sit inside a markdown link.
 */
export function safeUrl(url: string | null | undefined, ipfsGateway: string): string | null {
  if (typeof url !== 'string') return null;
  let candidate = url.trim();
  if (candidate === '' || candidate.length > DISCORD_LIMITS.url || UNSAFE_URL_CHAR_RE.test(candidate)) {
    return null;
  }
  const ipfs = /^(ipfs|ipns):\/\/(?:(?:ipfs|ipns)\/)?(.+)$/i.exec(candidate);
  if (ipfs) {
    const base = gatewayBase(ipfsGateway);
    const [, scheme = '', path = ''] = ipfs;
    if (base === null) return null;
    candidate = `${base}/${scheme.toLowerCase()}/${path}`;
  }
  if (!URL.canParse(candidate)) return null;
  const parsed = new URL(candidate);
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  if (parsed.username !== '' || parsed.password !== '' || parsed.hostname === '') return null;
  const rest = `${parsed.pathname}${parsed.search}${parsed.hash}`.replace(
    /[()[\]`]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  const href = `${parsed.origin}${rest}`;
  return href.length <= DISCORD_LIMITS.url ? href : null;
}

/** Cut to at most `max` UTF-16 code units, ending with '…' when cut; never splits a surrogate pair. */
export function truncate(s: string, max: number): string {
  const limit = Number.isFinite(max) ? Math.floor(max) : 0;
  if (limit <= 0) return '';
  if (s.length <= limit) return s;
  if (limit === 1) return ELLIPSIS;
  let cut = s.slice(0, limit - 1);
  const lastCode = cut.charCodeAt(cut.length - 1);
  if (lastCode >= 0xd800 && lastCode <= 0xdbff) cut = cut.slice(0, -1);
  return cut + ELLIPSIS;
}

/** A Discord timestamp tag such as `<t:123:R>`; 'unknown' for a time that is not a finite number. */
export function discordTime(unixSec: number, style: 'R' | 'f' | 'F' | 'D' | 'd' | 't' | 'T'): string {
  if (!Number.isFinite(unixSec)) return 'unknown';
  return `<t:${Math.floor(unixSec)}:${style}>`;
}

function clampUrl(url: string | undefined): string | undefined {
  return url !== undefined && url.length <= DISCORD_LIMITS.url ? url : undefined;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Enforce every per-embed limit: text lengths, 25 fields, non-empty field texts, URL lengths, colour range. */
export function clampEmbed(embed: APIEmbed): APIEmbed {
  const title = truncate(embed.title ?? '', DISCORD_LIMITS.title);
  const description = truncate(embed.description ?? '', DISCORD_LIMITS.description);
  const footerText = truncate(embed.footer?.text ?? '', DISCORD_LIMITS.footer);
  const authorName = truncate(embed.author?.name ?? '', DISCORD_LIMITS.author);
  const color = embed.color;
  const image = clampUrl(embed.image?.url);
  const thumbnail = clampUrl(embed.thumbnail?.url);
  return withoutUndefined({
    ...embed,
    title: title || undefined,
    description: description || undefined,
    url: clampUrl(embed.url),
    color:
      color !== undefined && Number.isInteger(color) && color >= 0 && color <= 0xffffff ? color : undefined,
    fields: embed.fields?.slice(0, DISCORD_LIMITS.fields).map((field) =>
      withoutUndefined({
        ...field,
        name: truncate(field.name, DISCORD_LIMITS.fieldName) || EMPTY_FIELD,
        value: truncate(field.value, DISCORD_LIMITS.fieldValue) || EMPTY_FIELD,
      }),
    ),
    footer:
      embed.footer && footerText
        ? withoutUndefined({ ...embed.footer, text: footerText, icon_url: clampUrl(embed.footer.icon_url) })
        : undefined,
    author:
      embed.author && authorName
        ? withoutUndefined({
            ...embed.author,
            name: authorName,
            url: clampUrl(embed.author.url),
            icon_url: clampUrl(embed.author.icon_url),
          })
        : undefined,
    image: embed.image && image ? { ...embed.image, url: image } : undefined,
    thumbnail: embed.thumbnail && thumbnail ? { ...embed.thumbnail, url: thumbnail } : undefined,
  });
}

/** The characters Discord counts towards the 6000 per-message embed total. */
export function embedLength(embed: APIEmbed): number {
  let total = (embed.title?.length ?? 0) + (embed.description?.length ?? 0);
  total += (embed.footer?.text.length ?? 0) + (embed.author?.name.length ?? 0);
  for (const field of embed.fields ?? []) total += field.name.length + field.value.length;
  return total;
}

function totalLength(embeds: APIEmbed[]): number {
  return embeds.reduce((sum, embed) => sum + embedLength(embed), 0);
}

type TextPart = 'description' | 'footer' | 'author' | 'title';

function shrinkPart(embed: APIEmbed, part: TextPart, excess: number): APIEmbed {
  const current =
    part === 'footer' ? embed.footer?.text : part === 'author' ? embed.author?.name : embed[part];
  if (!current) return embed;
  const next = truncate(current, Math.max(0, current.length - excess));
  const shrunk = { ...embed };
  if (part === 'footer') {
    if (next && embed.footer) shrunk.footer = { ...embed.footer, text: next };
    else delete shrunk.footer;
  } else if (part === 'author') {
    if (next && embed.author) shrunk.author = { ...embed.author, name: next };
    else delete shrunk.author;
  } else if (next) {
    shrunk[part] = next;
  } else {
    delete shrunk[part];
  }
  return shrunk;
}

/** Bring the embeds within the 6000-character total: drop trailing fields, then cut descriptions, then the rest. */
function fitTotal(input: APIEmbed[]): APIEmbed[] {
  const embeds = [...input];
  for (let i = embeds.length - 1; i >= 0 && totalLength(embeds) > DISCORD_LIMITS.embedTotal; i--) {
    const embed = embeds[i];
    if (!embed?.fields) continue;
    const fields = [...embed.fields];
    while (fields.length > 0 && totalLength(embeds) > DISCORD_LIMITS.embedTotal) {
      fields.pop();
      embeds[i] = { ...embed, fields };
    }
  }
  for (const part of ['description', 'footer', 'author', 'title'] as const) {
    for (let i = embeds.length - 1; i >= 0; i--) {
      const excess = totalLength(embeds) - DISCORD_LIMITS.embedTotal;
      const embed = embeds[i];
      if (excess <= 0) return embeds;
      if (embed) embeds[i] = shrinkPart(embed, part, excess);
    }
  }
  return embeds;
}

type MessageRow = APIActionRowComponent<APIComponentInMessageActionRow>;
type RowComponent = APIComponentInMessageActionRow;

function clampButton(button: APIButtonComponent): APIButtonComponent | null {
  if (!('label' in button)) return button;
  const label = truncate(button.label ?? '', DISCORD_LIMITS.buttonLabel);
  const labelled = withoutUndefined({ ...button, label: label || undefined });
  if ('url' in labelled) return labelled.url.length <= DISCORD_LIMITS.linkButtonUrl ? labelled : null;
  return { ...labelled, custom_id: truncate(labelled.custom_id, DISCORD_LIMITS.customId) };
}

function clampStringSelect(select: APIStringSelectComponent): APIStringSelectComponent | null {
  const allowsMany = (select.max_values ?? 1) > 1;
  let seenDefault = false;
  const options = select.options.slice(0, DISCORD_LIMITS.selectOptions).map((option) => {
    const isDefault = option.default === true && (allowsMany || !seenDefault);
    seenDefault ||= isDefault;
    const description = truncate(option.description ?? '', DISCORD_LIMITS.selectOptionDescription);
    return withoutUndefined({
      ...option,
      label: truncate(option.label, DISCORD_LIMITS.selectOptionLabel) || EMPTY_FIELD,
      value: truncate(option.value, DISCORD_LIMITS.selectOptionValue),
      description: description || undefined,
      default: isDefault || undefined,
    });
  });
  if (options.length === 0) return null;
  const placeholder = truncate(select.placeholder ?? '', DISCORD_LIMITS.selectPlaceholder);
  const fitCount = (n: number | undefined) => (n === undefined ? undefined : Math.min(n, options.length));
  return withoutUndefined({
    ...select,
    custom_id: truncate(select.custom_id, DISCORD_LIMITS.customId),
    options,
    placeholder: placeholder || undefined,
    min_values: fitCount(select.min_values),
    max_values: fitCount(select.max_values),
  });
}

function clampComponent(component: RowComponent): RowComponent | null {
  if (component.type === ComponentType.Button) return clampButton(component);
  if (component.type === ComponentType.StringSelect) return clampStringSelect(component);
  return { ...component, custom_id: truncate(component.custom_id, DISCORD_LIMITS.customId) };
}

function clampRow(row: MessageRow): MessageRow | null {
  const components = row.components.map(clampComponent).filter((c): c is RowComponent => c !== null);
  const select = components.find((c) => c.type !== ComponentType.Button);
  const kept = select ? [select] : components.slice(0, DISCORD_LIMITS.buttonsPerRow);
  return kept.length > 0 ? { ...row, components: kept } : null;
}

/**
 * Enforce every per-message limit: at most 10 embeds each within its limits, 6000 characters across them
 * (trailing fields go first, then descriptions), at most 5 action rows of valid components, content 2000.
 * Mentions are always disabled.
 */
export function clampMessage(p: MessagePayload): MessagePayload {
  const embeds = fitTotal(p.embeds.slice(0, DISCORD_LIMITS.embeds).map(clampEmbed));
  const components = p.components
    .map(clampRow)
    .filter((row): row is MessageRow => row !== null)
    .slice(0, DISCORD_LIMITS.actionRows);
  const content = truncate(p.content ?? '', DISCORD_LIMITS.content);
  return {
    ...(content ? { content } : {}),
    embeds,
    components,
    allowed_mentions: { parse: [] },
  };
}
