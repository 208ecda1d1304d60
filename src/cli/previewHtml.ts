/**
 * A self-contained HTML page that shows a bot message the way Discord does, built on the
 * `@skyra/discord-components-core` web components. Every piece of message text is escaped: the
 * payload carries hostile user data.
 */
import { createHash } from 'node:crypto';
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIComponentInMessageActionRow,
  type APIEmbed,
  type APIEmbedField,
  ButtonStyle,
  ComponentType,
  MessageFlags,
} from 'discord-api-types/v10';
import { build } from 'esbuild';
import type { MessagePayload } from '../render/types.ts';

/** A message as Discord's API takes it: the render payload, plus `flags: 64` when only the user sees it. */
export interface PreviewMessage extends MessagePayload {
  flags?: number;
}

/** How to show the message: who ran what, and how to write times and images. */
export interface PreviewPageOptions {
  /** The slash command shown above the message, e.g. `/whois`. */
  command: string;
  /** Locale for dates, e.g. `en-US` or `de`; unknown tags fall back to `en-US`. */
  locale: string;
  /** Current Unix time in seconds, for relative times and "Today at". */
  nowSec: number;
  /** IANA time zone for dates; the machine's when absent. */
  timeZone?: string | undefined;
  /** Replace every remote image with a generated local placeholder (no network when viewing). */
  offlineImages: boolean;
  botName?: string;
}

export type TimeStyle = 't' | 'T' | 'd' | 'D' | 'f' | 'F' | 'R';

export interface TimeContext {
  locale: string;
  nowSec: number;
  timeZone?: string | undefined;
}

type Emphasis = 'bold' | 'italic' | 'underline' | 'strike' | 'spoiler';

/** A parsed piece of Discord markdown. */
export type MarkdownNode =
  | { kind: 'text'; text: string }
  | { kind: 'break' }
  | { kind: 'code'; text: string; block: boolean }
  | { kind: 'time'; unixSec: number; style: TimeStyle; source: string }
  | { kind: 'link'; url: string; children: MarkdownNode[] }
  | { kind: Emphasis; children: MarkdownNode[] };

const BOT_NAME = 'Web3.bio';
const FALLBACK_LOCALE = 'en-US';
const MAX_NESTING = 6;
const EMPHASIS: readonly (readonly [string, Emphasis])[] = [
  ['**', 'bold'],
  ['__', 'underline'],
  ['~~', 'strike'],
  ['||', 'spoiler'],
  ['*', 'italic'],
  ['_', 'italic'],
];
const ESCAPABLE_RE = /[!-/:-@[-`{-~]/;
const WORD_CHAR_RE = /[\p{L}\p{N}]/u;
const TIME_RE = /<t:(-?\d{1,14})(?::([tTdDfFR]))?>/y;
const AUTOLINK_RE = /<(https?:\/\/[^\s<>]+)>/y;
const BARE_URL_RE = /https?:\/\/[^\s<>]+/y;
const LINK_TARGET_RE = /\(\s*<?(https?:\/\/[^\s()<>]+)>?\s*\)/y;
const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escape text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

/** The URL when it is an absolute http(s) URL, else null: nothing else may become a link or an image. */
export function httpUrl(url: string | null | undefined): string | null {
  if (typeof url !== 'string' || !URL.canParse(url)) return null;
  const parsed = new URL(url);
  return parsed.protocol === 'https:' || parsed.protocol === 'http:' ? parsed.href : null;
}

function isEscaped(text: string, index: number): boolean {
  let slashes = 0;
  for (let i = index - 1; i >= 0 && text[i] === '\\'; i--) slashes++;
  return slashes % 2 === 1;
}

function closesEmphasis(text: string, at: number, delimiter: string): boolean {
  if (delimiter === '*') return !/\s/.test(text[at - 1] ?? ' ');
  if (delimiter === '_') return !WORD_CHAR_RE.test(text[at + 1] ?? ' ');
  return true;
}

/** Where `delimiter` closes after `from` (the last of a run, so `***x***` nests), or -1. */
function findCloser(text: string, from: number, delimiter: string): number {
  const single = delimiter.length === 1;
  let at = text.indexOf(delimiter, from);
  while (at !== -1) {
    if (single && text[at + 1] === delimiter) {
      // A doubled marker inside belongs to an inner span: `*a **b** c*`.
      at = text.indexOf(delimiter, at + 2);
      continue;
    }
    let end = at;
    while (!single && text[end + delimiter.length] === delimiter[0]) end++;
    if (end > from && !isEscaped(text, at) && closesEmphasis(text, end, delimiter)) return end;
    at = text.indexOf(delimiter, at + 1);
  }
  return -1;
}

function opensEmphasis(text: string, at: number, delimiter: string): boolean {
  if (delimiter === '*') return !/\s/.test(text[at + 1] ?? ' ');
  if (delimiter === '_') return !WORD_CHAR_RE.test(text[at - 1] ?? ' ');
  return true;
}

function stickyMatch(re: RegExp, text: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(text);
}

/** Trim sentence punctuation after a bare URL, as Discord does. */
function trimBareUrl(url: string): string {
  return url.replace(/[.,:;!?'")\]*_~|]+$/, '');
}

/**
 * Parse the subset of Discord markdown the bot writes: bold, italics, underline, strike, spoilers,
 * inline and block code, masked and bare links, `<t:…>` times, backslash escapes and line breaks.
 * Unmatched markers stay text. Work is bounded: nesting stops at six levels.
 */
export function parseMarkdown(text: string, depth = 0, inLink = false): MarkdownNode[] {
  const nodes: MarkdownNode[] = [];
  let plain = '';
  const push = (node: MarkdownNode) => {
    if (plain) nodes.push({ kind: 'text', text: plain });
    plain = '';
    nodes.push(node);
  };
  // A delimiter with no closer after some point has none after any later point either.
  const noCloserFrom = new Map<string, number>();
  let i = 0;
  while (i < text.length) {
    const ch = text[i] ?? '';
    if (ch === '\\' && ESCAPABLE_RE.test(text[i + 1] ?? '')) {
      plain += text[i + 1];
      i += 2;
      continue;
    }
    if (ch === '\n') {
      push({ kind: 'break' });
      i++;
      continue;
    }
    if (text.startsWith('```', i)) {
      const end = text.indexOf('```', i + 3);
      if (end > i + 3) {
        const body = text.slice(i + 3, end).replace(/^[\w+-]*\n/, '');
        push({ kind: 'code', text: body.replace(/\n$/, ''), block: true });
        i = end + 3;
        continue;
      }
    }
    if (ch === '`') {
      const ticks = text.startsWith('``', i) ? '``' : '`';
      const end = text.indexOf(ticks, i + ticks.length);
      if (end > i + ticks.length) {
        push({ kind: 'code', text: text.slice(i + ticks.length, end).trim(), block: false });
        i = end + ticks.length;
        continue;
      }
      plain += ticks;
      i += ticks.length;
      continue;
    }
    if (ch === '<') {
      const time = stickyMatch(TIME_RE, text, i);
      if (time) {
        push({
          kind: 'time',
          unixSec: Number(time[1]),
          style: (time[2] ?? 'f') as TimeStyle,
          source: time[0],
        });
        i += time[0].length;
        continue;
      }
      const auto = inLink ? null : stickyMatch(AUTOLINK_RE, text, i);
      if (auto?.[1]) {
        push({ kind: 'link', url: auto[1], children: [{ kind: 'text', text: auto[1] }] });
        i += auto[0].length;
        continue;
      }
    }
    if (ch === '[' && !inLink && depth < MAX_NESTING) {
      const close = findCloser(text, i + 1, ']');
      const target = close === -1 ? null : stickyMatch(LINK_TARGET_RE, text, close + 1);
      if (target?.[1] && close > i + 1) {
        push({
          kind: 'link',
          url: target[1],
          children: parseMarkdown(text.slice(i + 1, close), depth + 1, true),
        });
        i = close + 1 + target[0].length;
        continue;
      }
    }
    if (ch === 'h' && !inLink && !WORD_CHAR_RE.test(text[i - 1] ?? ' ')) {
      const bare = stickyMatch(BARE_URL_RE, text, i);
      const url = bare ? trimBareUrl(bare[0]) : '';
      if (/^https?:\/\/./.test(url)) {
        push({ kind: 'link', url, children: [{ kind: 'text', text: url }] });
        i += url.length;
        continue;
      }
    }
    const emphasis = depth < MAX_NESTING ? matchEmphasis(text, i, noCloserFrom) : null;
    if (emphasis) {
      push({
        kind: emphasis.kind,
        children: parseMarkdown(text.slice(i + emphasis.open, emphasis.close), depth + 1, inLink),
      });
      i = emphasis.close + emphasis.open;
      continue;
    }
    plain += ch;
    i++;
  }
  if (plain) nodes.push({ kind: 'text', text: plain });
  return nodes;
}

function matchEmphasis(
  text: string,
  at: number,
  noCloserFrom: Map<string, number>,
): { kind: Emphasis; open: number; close: number } | null {
  for (const [delimiter, kind] of EMPHASIS) {
    if (!text.startsWith(delimiter, at) || !opensEmphasis(text, at, delimiter)) continue;
    const from = at + delimiter.length;
    if (from >= (noCloserFrom.get(delimiter) ?? Number.POSITIVE_INFINITY)) continue;
    const close = findCloser(text, from, delimiter);
    if (close !== -1) return { kind, open: delimiter.length, close };
    noCloserFrom.set(delimiter, from);
  }
  return null;
}

function safeLocale(locale: string): string {
  try {
    return Intl.DateTimeFormat.supportedLocalesOf(locale).length > 0 ? locale : FALLBACK_LOCALE;
  } catch {
    return FALLBACK_LOCALE;
  }
}

function dateFormat(ctx: TimeContext, options: Intl.DateTimeFormatOptions): Intl.DateTimeFormat {
  const zone = ctx.timeZone ? { timeZone: ctx.timeZone } : {};
  return new Intl.DateTimeFormat(safeLocale(ctx.locale), { ...options, ...zone });
}

const TIME_FORMATS: Record<Exclude<TimeStyle, 'R'>, Intl.DateTimeFormatOptions> = {
  t: { hour: 'numeric', minute: '2-digit' },
  T: { hour: 'numeric', minute: '2-digit', second: '2-digit' },
  d: { day: '2-digit', month: '2-digit', year: 'numeric' },
  D: { dateStyle: 'long' },
  f: { dateStyle: 'long', timeStyle: 'short' },
  F: { dateStyle: 'full', timeStyle: 'short' },
};

const RELATIVE_UNITS: readonly (readonly [Intl.RelativeTimeFormatUnit, number])[] = [
  ['year', 365 * 86_400],
  ['month', 30 * 86_400],
  ['day', 86_400],
  ['hour', 3_600],
  ['minute', 60],
  ['second', 1],
];

/** A `<t:unix:style>` tag as Discord shows it to a reader in `ctx.locale`; null for an impossible date. */
export function formatDiscordTime(unixSec: number, style: TimeStyle, ctx: TimeContext): string | null {
  const date = new Date(unixSec * 1_000);
  if (!Number.isFinite(date.getTime())) return null;
  if (style !== 'R') return dateFormat(ctx, TIME_FORMATS[style]).format(date);
  const delta = unixSec - ctx.nowSec;
  const [unit, size] = RELATIVE_UNITS.find(([, s]) => Math.abs(delta) >= s) ?? ['second', 1];
  return new Intl.RelativeTimeFormat(safeLocale(ctx.locale), { numeric: 'always' }).format(
    Math.trunc(delta / size),
    unit,
  );
}

/** "Today at 4:20 PM" for today, else the date and time, as Discord labels messages and embed timestamps. */
export function formatMessageTime(unixSec: number, ctx: TimeContext): string | null {
  const date = new Date(unixSec * 1_000);
  if (!Number.isFinite(date.getTime())) return null;
  const day = dateFormat(ctx, TIME_FORMATS.d);
  const time = dateFormat(ctx, TIME_FORMATS.t).format(date);
  const today = day.format(date) === day.format(new Date(ctx.nowSec * 1_000));
  return today ? `Today at ${time}` : `${day.format(date)} ${time}`;
}

// Plain elements: the components' own bold and italic put spaces around their text.
const EMPHASIS_TAGS: Record<Emphasis, string> = {
  bold: 'strong',
  italic: 'em',
  underline: 'u',
  strike: 's',
  spoiler: 'discord-spoiler',
};

function nodesToHtml(nodes: MarkdownNode[], ctx: TimeContext, inEmbed: boolean): string {
  return nodes
    .map((node) => {
      switch (node.kind) {
        case 'text':
          return escapeHtml(node.text);
        case 'break':
          return '<br>';
        case 'code':
          return `<discord-code${node.block ? ' multiline' : ''}${inEmbed ? ' embed' : ''}>${escapeHtml(node.text)}</discord-code>`;
        case 'time':
          return `<discord-time>${escapeHtml(formatDiscordTime(node.unixSec, node.style, ctx) ?? node.source)}</discord-time>`;
        case 'link': {
          const inner = nodesToHtml(node.children, ctx, inEmbed);
          const url = httpUrl(node.url);
          return url
            ? `<discord-link href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer nofollow">${inner}</discord-link>`
            : inner;
        }
        default: {
          const tag = EMPHASIS_TAGS[node.kind];
          return `<${tag}>${nodesToHtml(node.children, ctx, inEmbed)}</${tag}>`;
        }
      }
    })
    .join('');
}

/** Discord markdown as escaped HTML using the components' formatting elements. */
export function markdownToHtml(text: string, ctx: TimeContext, inEmbed = false): string {
  return nodesToHtml(parseMarkdown(text), ctx, inEmbed);
}

function nodesToText(nodes: MarkdownNode[], ctx: TimeContext): string {
  return nodes
    .map((node) => {
      if (node.kind === 'text' || node.kind === 'code') return node.text;
      if (node.kind === 'break') return '\n';
      if (node.kind === 'time') return formatDiscordTime(node.unixSec, node.style, ctx) ?? node.source;
      return nodesToText(node.children, ctx);
    })
    .join('');
}

/** Discord markdown as the plain text a reader sees, for places that take text only (titles). */
export function markdownToText(text: string, ctx: TimeContext): string {
  return nodesToText(parseMarkdown(text), ctx);
}

/**
 * The components turn any word holding 17+ digits in a title into a custom emoji loaded from Discord's CDN;
 * an invisible word joiner inside such runs keeps them text.
 */
function keepDigitsText(text: string): string {
  return text.replace(/\d{17,}/g, (digits) => digits.replace(/(\d{16})(?=\d)/g, '$1\u2060'));
}

function hashOf(text: string): number {
  let hash = 0;
  for (const char of text) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return hash;
}

/** Up to two capital letters or digits from `label`, for a placeholder image. */
function initialsOf(label: string): string {
  return (label.match(/[\p{L}\p{N}]/gu) ?? ['?']).slice(0, 2).join('').toUpperCase();
}

/**
 * A local SVG placeholder as a data: URL: a gradient picked from `seed` with the initials of `label`.
 * Only letters and digits of `label` go into it, escaped.
 */
export function placeholderImage(seed: string, label: string, shape: 'square' | 'banner' = 'square'): string {
  const [width, height] = shape === 'banner' ? [400, 160] : [128, 128];
  const hue = hashOf(seed) % 360;
  const svg = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">`,
    '<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">',
    `<stop offset="0" stop-color="hsl(${hue},65%,58%)"/><stop offset="1" stop-color="hsl(${(hue + 50) % 360},65%,40%)"/>`,
    `</linearGradient></defs><rect width="${width}" height="${height}" fill="url(#g)"/>`,
    `<text x="50%" y="50%" dy=".35em" text-anchor="middle" font-family="sans-serif" font-weight="700" `,
    `font-size="${Math.round(height * 0.4)}" fill="#fff">${escapeHtml(initialsOf(label))}</text></svg>`,
  ].join('');
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

const BOT_AVATAR = `data:image/svg+xml,${encodeURIComponent(
  '<svg xmlns="http://www.w3.org/2000/svg" width="128" height="128" viewBox="0 0 128 128">' +
    '<rect width="128" height="128" fill="#1c1c1c"/><circle cx="64" cy="64" r="40" fill="none" ' +
    'stroke="#7ee0c5" stroke-width="10"/><circle cx="64" cy="64" r="14" fill="#7ee0c5"/></svg>',
)}`;

interface Attributes {
  [name: string]: string | boolean | undefined;
}

function attributes(attrs: Attributes): string {
  return Object.entries(attrs)
    .filter(([, value]) => value !== undefined && value !== false && value !== '')
    .map(([name, value]) => (value === true ? ` ${name}` : ` ${name}="${escapeHtml(String(value))}"`))
    .join('');
}

function imageSource(
  url: string | undefined,
  options: PreviewPageOptions,
  label: string,
  shape?: 'banner',
): string | undefined {
  const safe = httpUrl(url);
  if (safe === null) return undefined;
  return options.offlineImages ? placeholderImage(safe, label, shape) : safe;
}

function colorHex(color: number | undefined): string | undefined {
  if (color === undefined || !Number.isInteger(color) || color < 0 || color > 0xffffff) return undefined;
  return `#${color.toString(16).padStart(6, '0')}`;
}

/** Grid columns for each field: inline fields share rows of up to three, as Discord lays them out. */
export function fieldColumns(fields: readonly Pick<APIEmbedField, 'inline'>[]): string[] {
  const columns: string[] = [];
  let run: number[] = [];
  const flush = () => {
    for (let start = 0; start < run.length; start += 3) {
      const row = run.slice(start, start + 3);
      const span = 12 / row.length;
      row.forEach((index, position) => {
        columns[index] = `${1 + position * span} / ${1 + (position + 1) * span}`;
      });
    }
    run = [];
  };
  fields.forEach((field, index) => {
    if (field.inline) run.push(index);
    else {
      flush();
      columns[index] = '1 / 13';
    }
  });
  flush();
  return columns;
}

function embedHtml(embed: APIEmbed, options: PreviewPageOptions): string {
  const title = embed.title ? keepDigitsText(markdownToText(embed.title, options)) : undefined;
  const authorName = embed.author?.name ? keepDigitsText(embed.author.name) : undefined;
  const label = title ?? authorName ?? embed.footer?.text ?? '';
  const head = attributes({
    slot: 'embeds',
    color: colorHex(embed.color),
    'author-name': authorName,
    'author-image': authorName ? imageSource(embed.author?.icon_url, options, authorName) : undefined,
    'author-url': httpUrl(embed.author?.url) ?? undefined,
    'embed-title': title,
    url: httpUrl(embed.url) ?? undefined,
    thumbnail: imageSource(embed.thumbnail?.url, options, label),
    image: imageSource(embed.image?.url, options, label, 'banner'),
  });
  const parts: string[] = [];
  if (embed.description)
    parts.push(
      `<discord-embed-description slot="description">${markdownToHtml(embed.description, options, true)}</discord-embed-description>`,
    );
  const fields = embed.fields ?? [];
  if (fields.length > 0) {
    const columns = fieldColumns(fields);
    const items = fields.map((field, index) => {
      const fieldAttrs = attributes({
        'field-title': keepDigitsText(markdownToText(field.name, options)),
        inline: field.inline === true,
        style: `grid-column: ${columns[index] ?? '1 / 13'}`,
      });
      return `<discord-embed-field${fieldAttrs}>${markdownToHtml(field.value, options, true)}</discord-embed-field>`;
    });
    parts.push(`<discord-embed-fields slot="fields">${items.join('')}</discord-embed-fields>`);
  }
  const timestamp = embed.timestamp ? Date.parse(embed.timestamp) / 1_000 : Number.NaN;
  const timeText = Number.isFinite(timestamp) ? formatMessageTime(timestamp, options) : null;
  if (embed.footer?.text || timeText) {
    const footerAttrs = attributes({
      slot: 'footer',
      'footer-image': imageSource(embed.footer?.icon_url, options, embed.footer?.text ?? ''),
      timestamp: timeText ?? undefined,
    });
    parts.push(
      `<discord-embed-footer${footerAttrs}>${escapeHtml(embed.footer?.text ?? '')}</discord-embed-footer>`,
    );
  }
  return `<discord-embed${head}>${parts.join('')}</discord-embed>`;
}

const BUTTON_TYPES: Partial<Record<ButtonStyle, string>> = {
  [ButtonStyle.Primary]: 'primary',
  [ButtonStyle.Secondary]: 'secondary',
  [ButtonStyle.Success]: 'success',
  [ButtonStyle.Danger]: 'destructive',
};

function buttonHtml(button: APIButtonComponent): string {
  const emoji = 'emoji' in button && button.emoji?.name && !button.emoji.id ? `${button.emoji.name} ` : '';
  const label = `${emoji}${'label' in button ? (button.label ?? '') : ''}`.trim();
  const url = button.style === ButtonStyle.Link ? (httpUrl(button.url) ?? undefined) : undefined;
  const attrs = attributes({
    type: BUTTON_TYPES[button.style] ?? 'secondary',
    url,
    disabled: button.disabled === true || (button.style === ButtonStyle.Link && url === undefined),
  });
  return `<discord-button${attrs}>${escapeHtml(label)}</discord-button>`;
}

function componentHtml(component: APIComponentInMessageActionRow): string {
  if (component.type === ComponentType.Button) return buttonHtml(component);
  const options = component.type === ComponentType.StringSelect ? component.options : [];
  // Discord shows the chosen option in place of the placeholder.
  const chosen = options.find((option) => option.default);
  const shown = chosen?.label ?? component.placeholder ?? 'Make a selection';
  const items = options.map((option) => {
    const emoji = option.emoji?.name && !option.emoji.id ? option.emoji.name : undefined;
    return `<discord-string-select-menu-option${attributes({ label: option.label, description: option.description, emoji })}></discord-string-select-menu-option>`;
  });
  const attrs = attributes({ placeholder: shown, disabled: component.disabled === true });
  return `<discord-string-select-menu${attrs}>${items.join('')}</discord-string-select-menu>`;
}

function rowsHtml(rows: readonly APIActionRowComponent<APIComponentInMessageActionRow>[]): string {
  if (rows.length === 0) return '';
  const html = rows.map(
    (row) => `<discord-action-row>${row.components.map(componentHtml).join('')}</discord-action-row>`,
  );
  return `<discord-attachments slot="components">${html.join('')}</discord-attachments>`;
}

/** The message as `<discord-messages>` markup: the command reply line, content, embeds and components. */
export function messageToHtml(message: PreviewMessage, options: PreviewPageOptions): string {
  const ephemeral = ((message.flags ?? 0) & MessageFlags.Ephemeral) !== 0;
  const attrs = attributes({
    author: options.botName ?? BOT_NAME,
    avatar: BOT_AVATAR,
    bot: true,
    ephemeral,
    timestamp: formatMessageTime(options.nowSec, options) ?? undefined,
  });
  const reply = `<discord-command slot="reply"${attributes({
    author: 'you',
    avatar: placeholderImage('you', 'you'),
    command: options.command,
  })}></discord-command>`;
  const content = message.content ? markdownToHtml(message.content, options) : '';
  const embeds = message.embeds.map((embed) => embedHtml(embed, options)).join('');
  return `<discord-messages><discord-message${attrs}>${reply}${content}${embeds}${rowsHtml(message.components)}</discord-message></discord-messages>`;
}

let bundled: Promise<string> | undefined;

/** The web components as one ESM script (bundled once per process with esbuild). */
export function componentsScript(): Promise<string> {
  bundled ??= build({
    stdin: {
      contents: "import '@skyra/discord-components-core';",
      resolveDir: import.meta.dirname,
      loader: 'js',
    },
    bundle: true,
    format: 'esm',
    minify: true,
    write: false,
    platform: 'browser',
    target: 'chrome120',
    legalComments: 'none',
    logLevel: 'silent',
  }).then((result) => {
    const text = result.outputFiles[0]?.text ?? '';
    // Inline, a "<script" or "</script" in the code would end or garble the script element.
    if (text === '' || /<\/?script/i.test(text)) throw new Error('the components bundle cannot be inlined');
    return text;
  });
  return bundled;
}

const PAGE_STYLE = [
  'html,body{margin:0;background:#313338}',
  'body{padding:8px 16px;font-family:"gg sans","Noto Sans","Helvetica Neue",Helvetica,Arial,sans-serif}',
  'discord-messages{background:#313338;border:none;max-width:760px}',
  'discord-messages:not(:defined){visibility:hidden}',
  // The components leave the 12 field columns undefined, and keep times on one line, which overflows.
  'discord-embed-fields{grid-template-columns:repeat(12,minmax(0,1fr))}',
  'discord-time{white-space:normal}',
  'discord-string-select-menu{display:block;width:440px;max-width:100%}',
].join('');

/**
 * A complete page showing `message`: the components script inline, allowed by its hash in a strict CSP, so
 * nothing from the message could run even if it escaped; no image leaves the page with `offlineImages`.
 */
export async function previewPage(message: PreviewMessage, options: PreviewPageOptions): Promise<string> {
  const script = await componentsScript();
  const hash = createHash('sha256').update(script).digest('base64');
  const images = options.offlineImages ? 'data:' : 'data: https: http:';
  const csp = `default-src 'none'; script-src 'sha256-${hash}'; style-src 'unsafe-inline'; img-src ${images}; font-src data:; base-uri 'none'; form-action 'none'`;
  return [
    '<!doctype html>',
    `<html lang="${escapeHtml(safeLocale(options.locale))}"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="${escapeHtml(csp)}">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="referrer" content="no-referrer"><title>${escapeHtml(`Preview of ${options.command}`)}</title>`,
    `<style>${PAGE_STYLE}</style></head><body>`,
    messageToHtml(message, options),
    `<script type="module">${script}</script>`,
    '</body></html>',
    '',
  ].join('\n');
}
