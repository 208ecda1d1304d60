/**
 * Discord markdown for the preview page: a small parser of what Discord renders (emphasis, code, links,
 * `<t:…>` times), and its output as escaped HTML or plain text, with times written as a reader sees them.
 */
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

export function safeLocale(locale: string): string {
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
