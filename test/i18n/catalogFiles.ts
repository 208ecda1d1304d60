/** The shipped catalogs as files: each locale's three (the bot's, gating's, the web pages') merged. */
import { readFileSync } from 'node:fs';
import { type MessageFormatElement, TYPE } from '@formatjs/icu-messageformat-parser';
import { IntlMessageFormat } from 'intl-messageformat';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';

export { messagesOf } from '../../scripts/i18n/sources.ts';

export { CATALOG_DIRS } from '../../src/i18n/index.ts';

const LOCALES = new URL('../../src/i18n/locales/', import.meta.url);

export function catalogFile(dir: string, locale: string): Record<string, string> {
  return JSON.parse(readFileSync(new URL(`${dir}${locale}.json`, LOCALES), 'utf8')) as Record<string, string>;
}

export const TRANSLATED_LOCALES = SHIPPED_LOCALES.filter((l) => l !== 'en-US');

/** A message's ICU elements; throws when it does not compile (a plural or select without `other` too). */
export function elementsOf(message: string, locale: string): MessageFormatElement[] {
  return new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).getAst();
}

/** The kind an argument is read as; a number and a plural are both a count (ja writes `{n, number}`). */
const KINDS: Partial<Record<TYPE, string>> = {
  [TYPE.argument]: 'text',
  [TYPE.number]: 'count',
  [TYPE.plural]: 'count',
  [TYPE.select]: 'select',
  [TYPE.date]: 'date',
  [TYPE.time]: 'time',
};

/** Every argument a message reads, nested ones too, as `name:kind`, sorted. */
export function argumentsOf(elements: readonly MessageFormatElement[]): string[] {
  const found = new Set<string>();
  const walk = (nodes: readonly MessageFormatElement[]) => {
    for (const node of nodes) {
      const kind = KINDS[node.type];
      if (kind !== undefined && 'value' in node) found.add(`${node.value}:${kind}`);
      if (node.type === TYPE.plural || node.type === TYPE.select)
        for (const option of Object.values(node.options)) walk(option.value);
      if (node.type === TYPE.tag) walk(node.children);
    }
  };
  walk(elements);
  return [...found].sort();
}
