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
import {
  escapeHtml,
  formatMessageTime,
  httpUrl,
  markdownToHtml,
  markdownToText,
  safeLocale,
} from './previewMarkdown.ts';

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

const BOT_NAME = 'Web3.bio';

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
