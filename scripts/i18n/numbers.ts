/**
 * `npm run i18n:numbers`: records, for every Discord locale, the number symbols CLDR gives it (as this
 * Node's Intl.NumberFormat formats), into src/i18n/numberSymbols.json, which `src/i18n/numbers.ts`
 * formats with. test/i18n/numbers.test.ts names any locale whose record no longer matches Intl.
 */
import { writeFileSync } from 'node:fs';
import { Locale } from 'discord-api-types/v10';
import type { NumberSymbols } from '../../src/i18n/numbers.ts';

export const SYMBOLS_FILE = new URL('../../src/i18n/numberSymbols.json', import.meta.url);

/** What Intl.NumberFormat does in `locale`, read from the parts it formats. */
export function symbolsFromIntl(locale: string): NumberSymbols {
  const parts = new Intl.NumberFormat(locale).formatToParts(-123456789.5);
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  const groups = parts.filter((p) => p.type === 'integer').map((p) => p.value.length);
  const percent = new Intl.NumberFormat(locale, { style: 'percent' }).formatToParts(0.12);
  const at = percent.findIndex((p) => p.type === 'integer');
  const text = (from: number, to: number) =>
    percent
      .slice(from, to)
      .map((p) => p.value)
      .join('');
  const digits = new Intl.NumberFormat(locale, { useGrouping: false }).format(1234567890);
  if (digits !== '1234567890') throw new Error(`${locale} writes digits other than 0-9: ${digits}`);
  if (parts[0]?.type !== 'minusSign') throw new Error(`${locale} does not put its minus sign first`);
  return {
    decimal: part('decimal'),
    group: part('group'),
    minus: part('minusSign'),
    primary: groups.at(-1) ?? 3,
    secondary: groups.at(-2) ?? 3,
    minimumGrouping: new Intl.NumberFormat(locale).format(1234).includes(part('group')) ? 1 : 2,
    percentBefore: text(0, at),
    percentAfter: text(at + 1, percent.length),
  };
}

/** Every Discord locale's symbols, by locale code. */
export function recordedSymbols(): Record<string, NumberSymbols> {
  return Object.fromEntries(Object.values(Locale).map((locale) => [locale, symbolsFromIntl(locale)]));
}

if (import.meta.main) {
  // Spaces and signs other than ASCII written as escapes, so a review sees which (U+202F, U+00A0, U+2212).
  const json = JSON.stringify(recordedSymbols(), null, 2).replace(
    /[^\x20-\x7e\n]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  writeFileSync(SYMBOLS_FILE, `${json}\n`);
  console.log(`wrote ${SYMBOLS_FILE.pathname}`);
}
