/**
 * What each translation was made from: `src/i18n/sources/<locale>.json` keeps, for every message of the
 * locale, the en-US text the translator read. When the English changes, the record and en-US differ and
 * the test says which translations to look at again; `npm run i18n:record` writes the record once they
 * are done.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { CATALOG_DIRS } from '../../src/i18n/index.ts';

const LOCALES = new URL('../../src/i18n/locales/', import.meta.url);
const SOURCES = new URL('../../src/i18n/sources/', import.meta.url);

export type Messages = Record<string, string>;

/** The three catalogs of `locale`, merged. */
export function messagesOf(locale: string): Messages {
  return Object.assign(
    {},
    ...CATALOG_DIRS.map(
      (dir) => JSON.parse(readFileSync(new URL(`${dir}${locale}.json`, LOCALES), 'utf8')) as Messages,
    ),
  );
}

export function readRecord(locale: string): Messages {
  try {
    return JSON.parse(readFileSync(new URL(`${locale}.json`, SOURCES), 'utf8')) as Messages;
  } catch {
    return {};
  }
}

export function writeRecord(locale: string, record: Messages): void {
  writeFileSync(new URL(`${locale}.json`, SOURCES), `${JSON.stringify(record, null, 2)}\n`);
}

/** Every translation whose English moved on since it was made (or that records nothing), one line each. */
export function staleTranslations(locale: string, english: Messages, record: Messages): string[] {
  const stale: string[] = [];
  for (const [key, text] of Object.entries(english)) {
    const made = record[key];
    if (made === undefined) stale.push(`${locale} ${key}: no record of the English it was translated from`);
    else if (made !== text)
      stale.push(`${locale} ${key}: translated from “${made}”, the English is now “${text}”`);
  }
  for (const key of Object.keys(record))
    if (!(key in english)) stale.push(`${locale} ${key}: recorded, but en-US has no such message`);
  return stale;
}

/** The record after `keys` (all of en-US when empty) were translated again from today's English. */
export function recorded(english: Messages, record: Messages, keys: readonly string[]): Messages {
  const take = new Set(keys.length > 0 ? keys : Object.keys(english));
  const out: Messages = {};
  for (const [key, text] of Object.entries(english)) {
    const kept = take.has(key) ? text : record[key];
    if (kept !== undefined) out[key] = kept;
  }
  return out;
}
