import { describe, expect, it } from 'vitest';
import { acceptedLocale, shippedLocale } from '../../src/web/locale.ts';

describe('acceptedLocale', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['de', 'de'],
    ['de-DE,de;q=0.9,en;q=0.8', 'de'],
    ['fr-CH, fr;q=0.9, en;q=0.8, de;q=0.7, *;q=0.5', 'fr'],
    ['en;q=0.5, ja;q=0.9', 'ja'],
    ['ja;q=0.5, ko;q=0.5', 'ja'],
    ['es-MX', 'es-ES'],
    ['pt', 'pt-BR'],
    ['PT-br', 'pt-BR'],
    ['zh-CN', 'zh-CN'],
    ['zh', 'zh-CN'],
    ['zh-Hans-CN', 'zh-CN'],
    ['zh-TW, ru;q=0.4', 'ru'],
    ['zh-Hant', undefined],
    ['nl, sv;q=0.9', undefined],
    ['nl, *;q=0.1', 'en-US'],
    ['de;q=0, tr', 'tr'],
    ['de;q=abc, ko;q=0.2', 'ko'],
    ['en-GB', 'en-US'],
    ['<script>, ru', 'ru'],
  ])('%j → %s', (header, expected) => {
    expect(acceptedLocale(header)).toBe(expected);
  });

  it('reads only the first ranges of a huge header', () => {
    expect(acceptedLocale(`${'xx, '.repeat(5_000)}de`)).toBeUndefined();
  });
});

describe('shippedLocale', () => {
  it.each([
    ['de', 'de'],
    ['es-419', 'es-ES'],
    ['en-GB', 'en-US'],
    ['pt-BR', 'pt-BR'],
    ['zh-TW', undefined],
    ['hu', undefined],
  ])('Discord locale %s → %s', (tag, expected) => {
    expect(shippedLocale(tag)).toBe(expected);
  });
});
