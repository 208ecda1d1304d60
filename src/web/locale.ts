/**
 * Which shipped locale a web answer speaks: the signed-in Discord account's locale when it is known,
 * else the browser's Accept-Language, else en-US.
 * @see https://www.rfc-editor.org/rfc/rfc9110#name-accept-language
 */
import type { FastifyRequest } from 'fastify';
import { DEFAULT_LOCALE, SHIPPED_LOCALES } from '../i18n/index.ts';

// Only one Chinese catalog ships, in Simplified script: Traditional readers get the next choice.
const TRADITIONAL_CHINESE = /^zh-(hant|tw|hk|mo)(-|$)/;
const LANGUAGE_RANGE = /^(\*|[a-z]{1,8}(-[a-z0-9]{1,8})*)$/;
const MAX_RANGES = 20;

/** The shipped locale for a language tag (`de-AT` → `de`, `es-419` → `es-ES`), or undefined. */
export function shippedLocale(tag: string): string | undefined {
  const lower = tag.trim().toLowerCase();
  const exact = SHIPPED_LOCALES.find((l) => l.toLowerCase() === lower);
  if (exact) return exact;
  if (TRADITIONAL_CHINESE.test(lower)) return undefined;
  const language = lower.split('-', 1)[0];
  return SHIPPED_LOCALES.find((l) => l.toLowerCase().split('-', 1)[0] === language);
}

/**
 * The best shipped locale for an Accept-Language header: ranges by q-value (ties keep header order),
 * q=0 excluded, `*` meaning en-US; undefined when nothing shipped is acceptable or the header is absent.
 */
export function acceptedLocale(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const ranges = header
    .split(',', MAX_RANGES)
    .map((part, index) => {
      const [range = '', ...params] = part.split(';').map((p) => p.trim());
      const q = params.find((p) => /^q=/i.test(p));
      const weight = q === undefined ? 1 : Number(q.slice(2));
      return { range: range.toLowerCase(), weight: Number.isFinite(weight) ? weight : 0, index };
    })
    .filter((r) => r.weight > 0 && r.weight <= 1 && LANGUAGE_RANGE.test(r.range))
    .sort((a, b) => b.weight - a.weight || a.index - b.index);
  for (const { range } of ranges) {
    const locale = range === '*' ? DEFAULT_LOCALE : shippedLocale(range);
    if (locale) return locale;
  }
  return undefined;
}

/** The locale of a page or JSON answer: the account's (from Discord) when shipped, else the browser's. */
export function requestLocale(request: FastifyRequest, accountLocale?: string | null): string {
  return (
    (accountLocale ? shippedLocale(accountLocale) : undefined) ??
    acceptedLocale(request.headers['accept-language']) ??
    DEFAULT_LOCALE
  );
}
