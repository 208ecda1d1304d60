/**
 * A pseudo-locale for length checks: every en-US message (lookups, gating and web pages) 40% longer,
 * placeholders and plurals untouched. Tests register it with `registerCatalog(PSEUDO, pseudoCatalog())`.
 */
import { readFileSync } from 'node:fs';
import type { Catalog } from '../../src/i18n/index.ts';

export const PSEUDO = 'en-XA';
const PADDING = 'ŀőŗēɱ ïƥşüɱ ďőŀőŗ şïţ ąɱēţ ';
const ENGLISH_FILES = ['en-US.json', 'gating/en-US.json', 'web/en-US.json'];

/** The message with padding words worth 40% of its length appended; placeholders and plurals untouched. */
export function lengthened(message: string): string {
  const extra = Math.ceil(message.length * 0.4);
  return `${message} ${PADDING.repeat(Math.ceil(extra / PADDING.length))
    .slice(0, extra)
    .trim()}`;
}

export function pseudoCatalog(): Catalog {
  const english: Record<string, string> = {};
  for (const file of ENGLISH_FILES) {
    const url = new URL(`../../src/i18n/locales/${file}`, import.meta.url);
    Object.assign(english, JSON.parse(readFileSync(url, 'utf8')) as Record<string, string>);
  }
  return Object.fromEntries(Object.entries(english).map(([key, message]) => [key, lengthened(message)]));
}
