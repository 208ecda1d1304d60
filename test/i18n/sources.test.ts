/**
 * Every translation records the en-US text it was made from (src/i18n/sources/<locale>.json): when the
 * English changes and a locale does not follow, this fails and names each message to translate again.
 */
import { describe, expect, it } from 'vitest';
import { messagesOf, readRecord, recorded, staleTranslations } from '../../scripts/i18n/sources.ts';
import { TRANSLATED_LOCALES } from './catalogFiles.ts';

const english = messagesOf('en-US');

describe('translation records', () => {
  it.each(TRANSLATED_LOCALES)('%s was translated from today’s English, every message of it', (locale) => {
    const fix = `translate each message named again from today’s English, then run: npm run i18n:record -- ${locale} <key …>`;
    expect(staleTranslations(locale, english, readRecord(locale)), fix).toEqual([]);
  });

  it('names a translation whose English changed, one never recorded, and one en-US dropped', () => {
    const en = { a: 'Pick a role', b: 'Done', c: 'New' };
    const record = { a: 'Choose a role', b: 'Done', gone: 'Old' };
    expect(staleTranslations('de', en, record)).toEqual([
      'de a: translated from “Choose a role”, the English is now “Pick a role”',
      'de c: no record of the English it was translated from',
      'de gone: recorded, but en-US has no such message',
    ]);
    // Recording only the keys translated again leaves the others stale.
    const after = recorded(en, record, ['a']);
    expect(after).toEqual({ a: 'Pick a role', b: 'Done' });
    expect(staleTranslations('de', en, after)).toEqual([
      'de c: no record of the English it was translated from',
    ]);
  });
});
