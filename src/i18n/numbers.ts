/**
 * Numbers in a member's locale. Discord sends one of its own locales, and for those the symbols CLDR
 * gives (decimal and group separators, minus sign, grouping sizes, the percent pattern) are recorded in
 * numberSymbols.json (`npm run i18n:numbers`); test/i18n/numbers.test.ts holds this module's output to
 * Intl.NumberFormat's for each of them. Any other locale or option is Intl.NumberFormat's.
 *
 * Why not Intl.NumberFormat everywhere: V8 answers the first one a process makes (or toLocaleString, or
 * intl-messageformat's locale lookup) by opening every locale ICU holds to see which have number data,
 * which reads about 4 MiB of ICU's data into the process for good: over a third of what 10,000
 * interactions added to a web replica's memory (issue #26; docs/operators/http-interactions.md).
 */
import recorded from './numberSymbols.json' with { type: 'json' };

export interface NumberSymbols {
  decimal: string;
  group: string;
  minus: string;
  /** Digits in the group nearest the decimal separator, and in each group before it (hi: 3 then 2). */
  primary: number;
  secondary: number;
  /** 2 where a four-digit number is written ungrouped (es: 1234, but 12.345). */
  minimumGrouping: number;
  /** What comes before and after a percentage's digits (tr: `%12`; de: `12 %`). */
  percentBefore: string;
  percentAfter: string;
}

/** The options this module formats itself; anything else goes to Intl.NumberFormat. */
export interface NumberOptions {
  style?: 'decimal' | 'percent';
  maximumFractionDigits?: number;
  minimumFractionDigits?: number;
}

/** What `format` needs of a number formatter (intl-messageformat's formatters call only this). */
export interface NumberFormatter {
  format(n: number): string;
}

const SYMBOLS: Readonly<Record<string, NumberSymbols>> = recorded;

/** `n` rounded half away from zero to `digits` decimals, as digit strings: from its shortest decimal form, as ICU rounds. */
function roundedDigits(n: number, shift: number, digits: number): { whole: string; fraction: string } | null {
  const text = String(n);
  if (text.includes('e')) return null;
  const [wholePart = '', fractionPart = ''] = text.split('.');
  // A percentage moves the point two places, on the digits: 0.07 * 100 is 7.000000000000001.
  const padded = fractionPart.padEnd(shift, '0');
  let whole = (wholePart + padded.slice(0, shift)).replace(/^0+(?=\d)/, '');
  let fraction = padded.slice(shift);
  if (fraction.length > digits) {
    const up = fraction.charCodeAt(digits) >= 53; // '5'
    fraction = fraction.slice(0, digits);
    if (up) {
      const all = (BigInt(whole + fraction) + 1n).toString().padStart(whole.length + digits, '0');
      whole = all.slice(0, all.length - digits) || '0';
      fraction = all.slice(all.length - digits);
    }
  }
  return { whole, fraction };
}

function grouped(whole: string, s: NumberSymbols): string {
  if (whole.length < s.primary + s.minimumGrouping) return whole;
  let end = whole.length - s.primary;
  const groups = [whole.slice(end)];
  for (; end > s.secondary; end -= s.secondary) groups.unshift(whole.slice(end - s.secondary, end));
  groups.unshift(whole.slice(0, end));
  return groups.join(s.group);
}

class RecordedFormat implements NumberFormatter {
  readonly #symbols: NumberSymbols;
  readonly #percent: boolean;
  readonly #maxFraction: number;
  readonly #minFraction: number;
  readonly #fallback: () => Intl.NumberFormat;

  constructor(
    symbols: NumberSymbols,
    percent: boolean,
    max: number,
    min: number,
    fallback: () => Intl.NumberFormat,
  ) {
    this.#symbols = symbols;
    this.#percent = percent;
    this.#maxFraction = max;
    this.#minFraction = min;
    this.#fallback = fallback;
  }

  format(n: number): string {
    const negative = n < 0 || Object.is(n, -0);
    const digits = Number.isFinite(n)
      ? roundedDigits(Math.abs(n), this.#percent ? 2 : 0, this.#maxFraction)
      : null;
    if (digits === null || (negative && this.#percent)) return this.#fallback().format(n);
    const s = this.#symbols;
    const fraction = digits.fraction.replace(/0+$/, '').padEnd(this.#minFraction, '0');
    const number = grouped(digits.whole, s) + (fraction === '' ? '' : s.decimal + fraction);
    if (this.#percent) return s.percentBefore + number + s.percentAfter;
    return negative ? s.minus + number : number;
  }
}

const formats = new Map<string, NumberFormatter>();
const FORMATS_MAX = 256;

/** A formatter for `locale` with `options`; a locale Discord does not send, or another option, is Intl.NumberFormat's. */
export function numberFormat(locale: string, options?: Intl.NumberFormatOptions): NumberFormatter {
  const key = `${locale}\u0000${options === undefined ? '' : JSON.stringify(options)}`;
  let format = formats.get(key);
  if (format !== undefined) return format;
  let made: Intl.NumberFormat | undefined;
  const intl = () => {
    made ??= intlFormat(locale, options);
    return made;
  };
  const symbols = Object.hasOwn(SYMBOLS, locale) ? SYMBOLS[locale] : undefined;
  const { style = 'decimal', maximumFractionDigits, minimumFractionDigits = 0, ...other } = options ?? {};
  const percent = style === 'percent';
  const max = maximumFractionDigits ?? (percent ? 0 : 3);
  const own =
    symbols !== undefined &&
    Object.keys(other).length === 0 &&
    (style === 'decimal' || percent) &&
    Number.isInteger(max) &&
    Number.isInteger(minimumFractionDigits) &&
    0 <= minimumFractionDigits &&
    minimumFractionDigits <= max &&
    max <= 20;
  format = own ? new RecordedFormat(symbols, percent, max, minimumFractionDigits, intl) : intl();
  if (formats.size >= FORMATS_MAX) formats.clear();
  formats.set(key, format);
  return format;
}

function intlFormat(locale: string, options: Intl.NumberFormatOptions | undefined): Intl.NumberFormat {
  try {
    return new Intl.NumberFormat(locale, options);
  } catch {
    return new Intl.NumberFormat('en-US', options);
  }
}
