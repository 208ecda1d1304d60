import type { APIEmbedField } from 'discord-api-types/v10';
import { DEFAULT_LOCALE, t } from '../i18n/index.ts';
import { numberFormat } from '../i18n/numbers.ts';

/** `n` formatted for the locale; bad or unknown locale tags fall back to `en-US`. */
export function formatNumber(n: number, locale: string, options?: Intl.NumberFormatOptions): string {
  return numberFormat(locale, options).format(n);
}

/** The "…and N more" line that ends a list cut short. */
export function moreLine(count: number, locale: string = DEFAULT_LOCALE): string {
  return t(locale, 'common.more', { count });
}

/**
 * Join lines with newlines into at most `max` characters. Whole lines are kept (only a lone first line
 * is cut), and a last line says how many were left out.
 */
export function joinLinesWithin(lines: string[], max: number, locale: string = DEFAULT_LOCALE): string {
  const all = lines.join('\n');
  if (all.length <= max) return all;
  const budget = max - moreLine(lines.length, locale).length - 1;
  const kept: string[] = [];
  let length = 0;
  for (const line of lines) {
    const added = kept.length === 0 ? line.length : line.length + 1;
    if (length + added > budget) break;
    kept.push(line);
    length += added;
  }
  if (kept.length === 0 && lines[0] !== undefined && budget > 1) {
    kept.push(`${lines[0].slice(0, budget - 1)}…`);
  }
  return [...kept, moreLine(lines.length - kept.length, locale)].join('\n');
}

function fieldLength(field: APIEmbedField): number {
  return field.name.length + field.value.length;
}

/**
 * Keep whole fields while they fit in `maxCount` fields and `budget` characters; when some are left out,
 * the last field says how many.
 */
export function fieldsWithin(
  fields: APIEmbedField[],
  maxCount: number,
  budget: number,
  locale: string = DEFAULT_LOCALE,
): APIEmbedField[] {
  const total = fields.reduce((sum, field) => sum + fieldLength(field), 0);
  if (fields.length <= maxCount && total <= budget) return fields;
  const reserve = { name: '\u200b', value: moreLine(fields.length, locale) };
  const kept: APIEmbedField[] = [];
  let length = fieldLength(reserve);
  for (const field of fields) {
    if (kept.length + 1 >= maxCount || length + fieldLength(field) > budget) break;
    kept.push(field);
    length += fieldLength(field);
  }
  return [...kept, { name: '\u200b', value: moreLine(fields.length - kept.length, locale) }];
}
