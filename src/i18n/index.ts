/**
 * The bot's words in every shipped locale: ICU MessageFormat catalogs (one JSON file per locale, flat
 * dotted keys), `t` to format one message for a user's locale, and `localizations` for the
 * `description_localizations` of commands and options.
 */
import { readFileSync } from 'node:fs';
import type { LocalizationMap } from 'discord-api-types/v10';
import { type Formatters, IntlMessageFormat } from 'intl-messageformat';
import type enUS from './locales/en-US.json';
import type gatingEnUS from './locales/gating/en-US.json';
import type webEnUS from './locales/web/en-US.json';
import { numberFormat } from './numbers.ts';

export type MessageKey = keyof typeof enUS | keyof typeof gatingEnUS | keyof typeof webEnUS;
export type MessageValues = Readonly<Record<string, string | number>>;
/** A locale's messages; a missing key falls back to the next locale in the chain, finally en-US. */
export type Catalog = Readonly<Partial<Record<MessageKey, string>>>;

export const DEFAULT_LOCALE = 'en-US';

/** The Discord locale codes with their own catalog. */
export const SHIPPED_LOCALES: readonly string[] = [
  'en-US',
  'de',
  'fr',
  'es-ES',
  'pt-BR',
  'ja',
  'ko',
  'zh-CN',
  'ru',
  'tr',
];

/** Discord locales served by a catalog of another code. */
const FALLBACKS: Readonly<Record<string, string>> = { 'en-GB': 'en-US', 'es-419': 'es-ES' };

/** A shipped locale's three catalog files (the bot's, gating's and the web pages'), one after another. */
export const CATALOG_DIRS = ['', 'gating/', 'web/'] as const;

/**
 * A shipped catalog, read when its locale is first asked for: a process holds the locales its members
 * use, not all ten (about 0.1 MiB of heap each: 1 MiB for the nine after en-US). `code` is one of
 * SHIPPED_LOCALES, never user input. The files sit beside this module (`npm run build` copies them next
 * to the bundle).
 */
function readShipped(code: string): Catalog {
  const catalog: Record<string, string> = {};
  for (const dir of CATALOG_DIRS) {
    const file = new URL(`./locales/${dir}${code}.json`, import.meta.url);
    Object.assign(catalog, JSON.parse(readFileSync(file, 'utf8')) as Record<string, string>);
  }
  return catalog;
}

const shipped = new Set(SHIPPED_LOCALES);
const catalogs = new Map<string, Catalog>();

function catalogOf(code: string): Catalog | undefined {
  let catalog = catalogs.get(code);
  if (catalog === undefined && shipped.has(code)) {
    catalog = readShipped(code);
    catalogs.set(code, catalog);
  }
  return catalog;
}

const hasCatalog = (code: string) => shipped.has(code) || catalogs.has(code);

/**
 * Add a catalog at run time (tests register a lengthened pseudo-locale to check Discord's limits).
 * Registering a shipped locale's code again replaces that catalog.
 */
export function registerCatalog(locale: string, catalog: Catalog): void {
  catalogs.set(locale, catalog);
  compiled.clear();
}

/** The catalogs to try for `locale`, best first, always ending with en-US. */
function catalogChain(locale: string): string[] {
  const chain: string[] = [];
  const add = (code: string | undefined) => {
    if (code !== undefined && hasCatalog(code) && !chain.includes(code)) chain.push(code);
  };
  add(locale);
  add(FALLBACKS[locale]);
  // `de-AT` reads `de`; a language whose only catalog carries a region (zh-TW, pt-PT) stays in English.
  add(locale.split('-', 1)[0]);
  add(DEFAULT_LOCALE);
  return chain;
}

/** Numbers follow the user's own locale when it is a well-formed tag (es-419 groups like es-MX). */
function formatLocale(locale: string, catalogLocale: string): string {
  try {
    return Intl.getCanonicalLocales(locale)[0] ?? catalogLocale;
  } catch {
    return catalogLocale;
  }
}

// Compiling a message parses it (tens of µs); bounded because arbitrary locale tags reach `t`.
const COMPILED_MAX = 4_096;
const compiled = new Map<string, IntlMessageFormat>();

/**
 * One set of formatters for every message (intl-messageformat otherwise makes Intl objects per message):
 * numbers from numbers.ts, so that formatting a message never makes an Intl.NumberFormat for a Discord
 * locale.
 */
const pluralRules = new Map<string, Intl.PluralRules>();
const formatters: Formatters = {
  // intl-messageformat calls only `format` on what this returns.
  getNumberFormat: (locales, options) =>
    numberFormat(String(locales), options) as unknown as Intl.NumberFormat,
  getPluralRules: (locales, options) => {
    const key = `${String(locales)}\u0000${options?.type ?? ''}`;
    let rules = pluralRules.get(key);
    if (rules === undefined) {
      rules = new Intl.PluralRules(locales, options);
      if (pluralRules.size >= COMPILED_MAX) pluralRules.clear();
      pluralRules.set(key, rules);
    }
    return rules;
  },
  getDateTimeFormat: (...args) => new Intl.DateTimeFormat(...args),
};

/**
 * intl-messageformat resolves each message's locale with Intl.NumberFormat.supportedLocalesOf, the call
 * that reads ICU's data for every locale (numbers.ts). The resolved locale serves only date skeletons,
 * which no catalog uses; the tag is well-formed (formatLocale), so it is taken as it is.
 */
IntlMessageFormat.resolveLocale = (locales) =>
  new Intl.Locale(Array.isArray(locales) ? String(locales[0]) : locales);

function compile(message: string, catalogLocale: string, key: string, numbersLocale: string) {
  const cacheKey = `${catalogLocale}\u0000${numbersLocale}\u0000${key}`;
  const cached = compiled.get(cacheKey);
  if (cached) return cached;
  // ignoreTag: Discord markup such as `<t:…>` is text, not an ICU rich-text tag.
  const format = new IntlMessageFormat(message, numbersLocale, undefined, { ignoreTag: true, formatters });
  if (compiled.size >= COMPILED_MAX) compiled.clear();
  compiled.set(cacheKey, format);
  return format;
}

/**
 * Characters that make a message more than literal text: an argument or plural (`{`, `}`) or ICU quoting
 * (`'`). `#` means something only inside a plural, and tags are text here (`ignoreTag`).
 */
const ICU_SYNTAX = /[{}']/;

/** The message `key` for `locale` (unknown locales fall back to en-US), with `values` filled in. */
export function t(locale: string, key: MessageKey, values?: MessageValues): string {
  for (const catalogLocale of catalogChain(locale)) {
    const message = catalogOf(catalogLocale)?.[key];
    if (message === undefined) continue;
    // Literal text needs no formatter (nor its Intl objects, for every locale's command descriptions).
    if (!ICU_SYNTAX.test(message)) return message;
    const numbersLocale = formatLocale(locale, catalogLocale);
    return String(compile(message, catalogLocale, key, numbersLocale).format(values));
  }
  throw new Error(`i18n: no message "${key}" in ${DEFAULT_LOCALE}`);
}

/**
 * `description_localizations` for Discord: the message in every shipped locale other than en-US. Each
 * entry is read when it is read (by JSON.stringify, when commands are deployed), so defining the commands
 * loads no catalog but en-US.
 */
export function localizations(key: MessageKey): LocalizationMap {
  const out: LocalizationMap = {};
  for (const locale of SHIPPED_LOCALES) {
    if (locale === DEFAULT_LOCALE) continue;
    Object.defineProperty(out, locale, { enumerable: true, get: () => t(locale, key) });
  }
  return out;
}

/** A command or option description: the en-US text, and the others as `description_localizations`. */
export function described(key: MessageKey): {
  description: string;
  description_localizations: LocalizationMap;
} {
  return { description: t(DEFAULT_LOCALE, key), description_localizations: localizations(key) };
}

/** A command's or choice's name: the en-US text, and the others as `name_localizations`. */
export function named(key: MessageKey): { name: string; name_localizations: LocalizationMap } {
  return { name: t(DEFAULT_LOCALE, key), name_localizations: localizations(key) };
}
