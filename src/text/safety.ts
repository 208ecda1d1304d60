/**
 * Text safety: the one place that handles hostile text and URLs for Discord, and knows Discord's limits.
 * Every user-controlled string the bot outputs goes through a function here. Imports nothing from the bot,
 * so any layer (render, gating's log lines) can use it.
 */

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

// Ideographic and fullwidth full stops, which browsers read as dots in a host name.
const DOT_LOOKALIKE_RE = /[\u3002\uff0e\uff61]/g;
// A host-like word: dot-separated labels ending in a top-level name of letters (`paypal.com`, `a.co.uk`).
const HOST_WORD_RE = /(?:[\p{L}\p{N}-]+\.)+(\p{L}{2,63})(?![\p{L}\p{N}-])/gu;
/** Endings of web3 names, which are not web hosts: `dwr.eth` may label a link to warpcast.com. */
const WEB3_NAME_ENDINGS = new Set([
  'eth',
  'lens',
  'sol',
  'bit',
  'farcaster',
  'crypto',
  'nft',
  'wallet',
  'dao',
]);

function withoutWww(host: string): string {
  return host.replace(/^www\./, '');
}

/** Whether the text names a web host other than `url`'s own (written as is: a look-alike never matches). */
function namesAnotherHost(text: string, url: string): boolean {
  const own = withoutWww(new URL(url).hostname);
  const words = text.toLowerCase().replace(DOT_LOOKALIKE_RE, '.').matchAll(HOST_WORD_RE);
  for (const [word, ending = ''] of words) {
    if (!WEB3_NAME_ENDINGS.has(ending) && withoutWww(word) !== own) return true;
  }
  return false;
}

/**
 * A masked link `[text](url)` when the URL is safe, else the escaped text alone. Text is cut to `maxText`.
 * Text that itself looks like a URL shows the real URL instead, and text that names a host other than the
 * link's own shows the real host, so a link can never pose as another.
 */
export function maskedLink(text: string, url: string | null, maxText = 100): string {
  const label = escapeLinkText(truncate(cleanLine(text), maxText));
  if (url === null) return label;
  if (label === '' || /:\/\/|^www\./i.test(text)) return `<${url}>`;
  if (namesAnotherHost(cleanLine(text), url)) return `[${escapeLinkText(new URL(url).hostname)}](${url})`;
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
