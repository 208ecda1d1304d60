/**
 * src/i18n/numbers.ts writes numbers from recorded CLDR symbols instead of Intl.NumberFormat: held here
 * to Intl.NumberFormat's output, digit for digit, for every Discord locale and every option the catalogs
 * use, and checked not to reach Intl.NumberFormat (whose first use reads ~4 MiB of ICU data).
 */
import { Locale } from 'discord-api-types/v10';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { recordedSymbols } from '../../scripts/i18n/numbers.ts';
import { t } from '../../src/i18n/index.ts';
import recorded from '../../src/i18n/numberSymbols.json' with { type: 'json' };
import { numberFormat } from '../../src/i18n/numbers.ts';
import { formatNumber } from '../../src/render/format.ts';

const LOCALES = Object.values(Locale);

// Counts, follower numbers, scores with two decimals, shares: small and large, halves that round either
// way (in their shortest decimal form, as ICU rounds), negatives and zeros.
const VALUES = [
  0,
  -0,
  1,
  2,
  5,
  7,
  12,
  99,
  100,
  999,
  1_000,
  1_234,
  9_999,
  10_000,
  12_345,
  99_999,
  100_000,
  123_456,
  1_234_567,
  12_345_678,
  123_456_789,
  1_234_567_890,
  2 ** 53,
  0.5,
  1.5,
  2.5,
  0.125,
  1.005,
  2.675,
  1.0005,
  12.3456,
  0.333333,
  0.666666,
  0.9995,
  0.99999,
  999.9996,
  1234.5678,
  0.07,
  0.001,
  0.0049,
  0.005,
  0.015,
  0.5049,
  0.995,
  1e-6,
  Math.PI,
  -1,
  -1_234,
  -12_345.678,
  -0.0001,
  -999_999.9999,
  1e20,
  1e21,
  Number.NaN,
  Number.POSITIVE_INFINITY,
];

const OPTIONS: (Intl.NumberFormatOptions | undefined)[] = [
  undefined,
  { maximumFractionDigits: 0 },
  { maximumFractionDigits: 2 },
  { maximumFractionDigits: 2, minimumFractionDigits: 0 },
  { minimumFractionDigits: 1, maximumFractionDigits: 2 },
  { style: 'percent' },
];

describe('numbers in a member’s locale', () => {
  afterEach(() => vi.restoreAllMocks());

  it('records every Discord locale’s symbols as this Node’s Intl.NumberFormat gives them', () => {
    expect(Object.keys(recorded).sort()).toEqual([...LOCALES].sort());
    expect(recorded, 'run: npm run i18n:numbers').toEqual(recordedSymbols());
  });

  it.each(LOCALES)('%s: every value and option written as Intl.NumberFormat writes it', (locale) => {
    const differences: string[] = [];
    for (const options of OPTIONS) {
      const intl = new Intl.NumberFormat(locale, options);
      const ours = numberFormat(locale, options);
      for (const value of options?.style === 'percent' ? VALUES.filter((v) => !(v < 0)) : VALUES) {
        const want = intl.format(value);
        const got = ours.format(value);
        if (got !== want) differences.push(`${JSON.stringify(options)} ${value}: ${got} ≠ ${want}`);
      }
    }
    expect(differences).toEqual([]);
  });

  it('formats Discord’s locales, and catalog messages with numbers and plurals, without Intl.NumberFormat', () => {
    const made = vi.spyOn(Intl, 'NumberFormat');
    const supported = vi.spyOn(Intl.NumberFormat, 'supportedLocalesOf');
    expect(formatNumber(1_234_567, 'de')).toBe('1.234.567');
    expect(numberFormat('fr', { style: 'percent' }).format(0.25)).toBe('25\u00a0%');
    expect(numberFormat('hi').format(12_345_678)).toBe('1,23,45,678');
    // A plural with `#`, a `{n, number}` and a skeleton, in locales not formatted before in this file's process.
    expect(t('ru', 'common.more', { count: 21_000 })).toContain('21\u00a0000');
    expect(t('ru', 'wallet.graph.summary', { count: 1_021, page: 1, pages: 2 })).toContain(
      '1\u00a0021 связанная',
    );
    expect(t('es-ES', 'creds.counts', { human: 1_234, risky: 12_345, spam: 0 })).toContain('1234 · ');
    expect(t('pt-BR', 'creds.score', { score: 1_234.567 })).toBe('Pontuação: **1.234,57**');
    expect(made).not.toHaveBeenCalled();
    expect(supported).not.toHaveBeenCalled();
  });

  it('leaves any other locale or option to Intl.NumberFormat', () => {
    expect(numberFormat('de-AT').format(1_234_567.5)).toBe(
      new Intl.NumberFormat('de-AT').format(1_234_567.5),
    );
    const compact = { notation: 'compact' } as const;
    expect(numberFormat('en-US', compact).format(12_345)).toBe('12K');
    expect(numberFormat('not a locale!').format(1_234)).toBe('1,234');
  });
});
