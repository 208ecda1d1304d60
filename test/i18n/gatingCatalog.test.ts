import { readdirSync, readFileSync } from 'node:fs';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES, t } from '../../src/i18n/index.ts';

const DIR = new URL('../../src/i18n/locales/gating/', import.meta.url);
const read = (locale: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`${locale}.json`, DIR), 'utf8'));
const EN = read('en-US');
const KEYS = Object.keys(EN);
/** Every shipped locale has its gating catalog written. */
const TRANSLATED = SHIPPED_LOCALES;

type Element = { type: number; value?: unknown; options?: Record<string, { value: Element[] }> };

/** The ICU argument names a message uses, anywhere in its plurals and selects. */
function argumentNames(elements: readonly Element[], into = new Set<string>()): Set<string> {
  for (const e of elements) {
    // 0 literal, 7 pound (#), 8 tag: no argument name.
    if (e.type !== 0 && e.type !== 7 && e.type !== 8 && typeof e.value === 'string') into.add(e.value);
    for (const option of Object.values(e.options ?? {})) argumentNames(option.value, into);
  }
  return into;
}

/** Every plural and select keeps an `other` branch (ICU requires it for an unmatched value). */
function missingOther(elements: readonly Element[]): boolean {
  return elements.some(
    (e) =>
      (e.options !== undefined && !Object.hasOwn(e.options, 'other')) ||
      Object.values(e.options ?? {}).some((o) => missingOther(o.value)),
  );
}

function ast(message: string, locale: string): Element[] {
  return new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).getAst() as Element[];
}

describe('the gating catalogs', () => {
  it('ship one file per shipped locale, and nothing else', () => {
    const files = readdirSync(DIR).map((f) => f.replace(/\.json$/, ''));
    expect(files.sort()).toEqual([...SHIPPED_LOCALES].sort());
  });

  it('keep every key under gating.', () => {
    expect(KEYS.length).toBeGreaterThan(100);
    expect(KEYS.filter((k) => !k.startsWith('gating.'))).toEqual([]);
  });

  for (const locale of TRANSLATED) {
    it(`${locale}: every key, the same arguments, and each message compiles`, () => {
      const catalog = read(locale);
      expect(Object.keys(catalog).sort()).toEqual([...KEYS].sort());
      for (const key of KEYS) {
        const message = catalog[key] ?? '';
        expect(message.trim(), `${locale} ${key}`).not.toBe('');
        const elements = ast(message, locale);
        const names = [...argumentNames(elements)].sort();
        expect(names, `${locale} ${key}`).toEqual([...argumentNames(ast(EN[key] ?? '', 'en-US'))].sort());
        expect(missingOther(elements), `${locale} ${key} lacks an "other" branch`).toBe(false);
      }
    });

    it(`${locale}: formats with every argument filled in`, () => {
      for (const key of KEYS) {
        const values = Object.fromEntries(
          [...argumentNames(ast(EN[key] ?? '', 'en-US'))].map((name) => [name, 2]),
        );
        for (const count of [0, 1, 2, 5, 21]) {
          const text = t(locale, key as Parameters<typeof t>[1], { ...values, count });
          expect(text, `${locale} ${key}`).not.toMatch(/[{}]/);
        }
      }
    });
  }

  it('names the context menu within Discord’s 32 characters in every locale', () => {
    for (const locale of TRANSLATED) {
      const name = t(locale, 'gating.command.checkCredentials');
      expect(name.length, locale).toBeLessThanOrEqual(32);
    }
  });
});
