/** The gating catalog's own rules; keys and arguments against en-US are checked in catalogs.test.ts. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES, t } from '../../src/i18n/index.ts';
import { argumentsOf, elementsOf } from './catalogFiles.ts';

const DIR = new URL('../../src/i18n/locales/gating/', import.meta.url);
const read = (locale: string): Record<string, string> =>
  JSON.parse(readFileSync(new URL(`${locale}.json`, DIR), 'utf8'));
const EN = read('en-US');
const KEYS = Object.keys(EN);
/** Every shipped locale has its gating catalog written. */
const TRANSLATED = SHIPPED_LOCALES;

describe('the gating catalogs', () => {
  it('keep every key under gating.', () => {
    expect(KEYS.length).toBeGreaterThan(100);
    expect(KEYS.filter((k) => !k.startsWith('gating.'))).toEqual([]);
  });

  for (const locale of TRANSLATED) {
    it(`${locale}: formats with every argument filled in`, () => {
      for (const key of KEYS) {
        const names = argumentsOf(elementsOf(EN[key] ?? '', 'en-US')).map((a) => a.split(':')[0]);
        const values = Object.fromEntries(names.map((name) => [name, 2]));
        for (const count of [0, 1, 2, 5, 21]) {
          const text = t(locale, key as Parameters<typeof t>[1], { ...values, count });
          expect(text, `${locale} ${key}`).not.toMatch(/[{}]/);
        }
      }
    });
  }
});
