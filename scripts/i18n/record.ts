/**
 * `npm run i18n:record -- <locale> [key …]`: after updating a translation, record the en-US text it now
 * follows (all keys of the locale, or only those named). `npm run i18n:record -- all` records every locale.
 */
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import { messagesOf, readRecord, recorded, staleTranslations, writeRecord } from './sources.ts';

const [target, ...keys] = process.argv.slice(2);
const translated = SHIPPED_LOCALES.filter((l) => l !== 'en-US');
const locales = target === 'all' ? translated : translated.filter((l) => l === target);
if (locales.length === 0) {
  console.error(`usage: npm run i18n:record -- <${translated.join('|')}|all> [key …]`);
  process.exit(2);
}
const english = messagesOf('en-US');
const unknown = keys.filter((key) => !(key in english));
if (unknown.length > 0) {
  console.error(`no such en-US message: ${unknown.join(', ')}`);
  process.exit(2);
}
for (const locale of locales) {
  const before = staleTranslations(locale, english, readRecord(locale)).length;
  const record = recorded(english, readRecord(locale), keys);
  writeRecord(locale, record);
  const after = staleTranslations(locale, english, record).length;
  console.log(
    `${locale}: recorded ${keys.length || Object.keys(english).length} message(s); ${before} stale before, ${after} now`,
  );
}
