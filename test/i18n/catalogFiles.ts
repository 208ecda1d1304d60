/** The shipped catalogs as files: each locale's three (the bot's, gating's, the web pages') merged. */
import { readFileSync } from 'node:fs';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';

export const CATALOG_DIRS = ['', 'gating/', 'web/'] as const;
const LOCALES = new URL('../../src/i18n/locales/', import.meta.url);

export function catalogFile(dir: string, locale: string): Record<string, string> {
  return JSON.parse(readFileSync(new URL(`${dir}${locale}.json`, LOCALES), 'utf8')) as Record<string, string>;
}

/** Every message of `locale`, the three catalogs merged (their keys never overlap). */
export function messagesOf(locale: string): Record<string, string> {
  return Object.assign({}, ...CATALOG_DIRS.map((dir) => catalogFile(dir, locale)));
}

export const TRANSLATED_LOCALES = SHIPPED_LOCALES.filter((l) => l !== 'en-US');
