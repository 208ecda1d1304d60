/**
 * CSV for spreadsheet apps (RFC 4180): comma-separated, CRLF rows, a field quoted when it holds a
 * comma, quote, CR or LF (quotes doubled). A field that a spreadsheet would run as a formula (leading
 * `=`, `+`, `-`, `@`, tab or CR) gets a leading `'` so it stays text.
 * @see https://www.rfc-editor.org/rfc/rfc4180
 * @see https://owasp.org/www-community/attacks/CSV_Injection
 */

/** UTF-8 byte order mark: Excel reads the file as UTF-8 only with it. */
export const CSV_BOM = '\uFEFF';

export type CsvValue = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One field, neutralised and quoted as needed; null and undefined are empty. */
export function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  // Numbers the bot writes itself (ids, counts) are data, not formulas; only text is defended.
  const inert = typeof value === 'string' && FORMULA_START.test(text) ? `'${text}` : text;
  return NEEDS_QUOTES.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

/** One record, CRLF-terminated. */
export function csvRow(values: readonly CsvValue[]): string {
  return `${values.map(csvField).join(',')}\r\n`;
}
