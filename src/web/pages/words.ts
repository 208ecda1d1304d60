/**
 * The web tier's words from the i18n catalogs, made safe for HTML: `text` escapes the whole message,
 * `rich` keeps the catalog's own markup (keys ending in `Html`: `<code>`, `<strong>` only) and escapes
 * every value, except the `markup` values this code built itself.
 */
import { type MessageKey, type MessageValues, t } from '../../i18n/index.ts';

/** A plain message, escaped for HTML text and attribute values. */
export function text(locale: string, key: MessageKey, values?: MessageValues): string {
  return escapeHtml(t(locale, key, values));
}

/** A message with the catalog's markup: `values` are escaped, `markup` (HTML built here) is not. */
export function rich(
  locale: string,
  key: MessageKey & `${string}Html`,
  values: MessageValues = {},
  markup: Readonly<Record<string, string>> = {},
): string {
  const escaped: Record<string, string | number> = { ...markup };
  for (const [name, value] of Object.entries(values))
    escaped[name] = typeof value === 'string' ? escapeHtml(value) : value;
  return t(locale, key, escaped);
}

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
