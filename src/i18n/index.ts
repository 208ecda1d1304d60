/**
 * The bot's words in every shipped locale: ICU MessageFormat catalogs (one JSON file per locale, flat
 * dotted keys), `t` to format one message for a user's locale, and `localizations` for the
 * `description_localizations` of commands and options.
 */
import type { LocalizationMap } from 'discord-api-types/v10';
import { IntlMessageFormat } from 'intl-messageformat';
import de from './locales/de.json' with { type: 'json' };
import enUS from './locales/en-US.json' with { type: 'json' };
import esES from './locales/es-ES.json' with { type: 'json' };
import fr from './locales/fr.json' with { type: 'json' };
import gatingDe from './locales/gating/de.json' with { type: 'json' };
import gatingEnUS from './locales/gating/en-US.json' with { type: 'json' };
import gatingEsES from './locales/gating/es-ES.json' with { type: 'json' };
import gatingFr from './locales/gating/fr.json' with { type: 'json' };
import gatingJa from './locales/gating/ja.json' with { type: 'json' };
import gatingKo from './locales/gating/ko.json' with { type: 'json' };
import gatingPtBR from './locales/gating/pt-BR.json' with { type: 'json' };
import gatingRu from './locales/gating/ru.json' with { type: 'json' };
import gatingTr from './locales/gating/tr.json' with { type: 'json' };
import gatingZhCN from './locales/gating/zh-CN.json' with { type: 'json' };
import ja from './locales/ja.json' with { type: 'json' };
import ko from './locales/ko.json' with { type: 'json' };
import ptBR from './locales/pt-BR.json' with { type: 'json' };
import ru from './locales/ru.json' with { type: 'json' };
import tr from './locales/tr.json' with { type: 'json' };
import webDe from './locales/web/de.json' with { type: 'json' };
import webEnUS from './locales/web/en-US.json' with { type: 'json' };
import webEsES from './locales/web/es-ES.json' with { type: 'json' };
import webFr from './locales/web/fr.json' with { type: 'json' };
import webJa from './locales/web/ja.json' with { type: 'json' };
import webKo from './locales/web/ko.json' with { type: 'json' };
import webPtBR from './locales/web/pt-BR.json' with { type: 'json' };
import webRu from './locales/web/ru.json' with { type: 'json' };
import webTr from './locales/web/tr.json' with { type: 'json' };
import webZhCN from './locales/web/zh-CN.json' with { type: 'json' };
import zhCN from './locales/zh-CN.json' with { type: 'json' };

export type MessageKey = keyof typeof enUS | keyof typeof gatingEnUS | keyof typeof webEnUS;
export type MessageValues = Readonly<Record<string, string | number>>;
/** A locale's messages; a missing key falls back to the next locale in the chain, finally en-US. */
export type Catalog = Readonly<Partial<Record<MessageKey, string>>>;

export const DEFAULT_LOCALE = 'en-US';

/** The shipped catalogs by Discord locale code. */
const SHIPPED: Readonly<Record<string, Catalog>> = {
  'en-US': { ...enUS, ...gatingEnUS, ...webEnUS },
  de: { ...de, ...gatingDe, ...webDe },
  fr: { ...fr, ...gatingFr, ...webFr },
  'es-ES': { ...esES, ...gatingEsES, ...webEsES },
  'pt-BR': { ...ptBR, ...gatingPtBR, ...webPtBR },
  ja: { ...ja, ...gatingJa, ...webJa },
  ko: { ...ko, ...gatingKo, ...webKo },
  'zh-CN': { ...zhCN, ...gatingZhCN, ...webZhCN },
  ru: { ...ru, ...gatingRu, ...webRu },
  tr: { ...tr, ...gatingTr, ...webTr },
};

/** Discord locales served by a catalog of another code. */
const FALLBACKS: Readonly<Record<string, string>> = { 'en-GB': 'en-US', 'es-419': 'es-ES' };

/** The Discord locale codes with their own catalog. */
export const SHIPPED_LOCALES: readonly string[] = Object.keys(SHIPPED);

const catalogs = new Map<string, Catalog>(Object.entries(SHIPPED));

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
    if (code !== undefined && catalogs.has(code) && !chain.includes(code)) chain.push(code);
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

function compile(message: string, catalogLocale: string, key: string, numbersLocale: string) {
  const cacheKey = `${catalogLocale}\u0000${numbersLocale}\u0000${key}`;
  const cached = compiled.get(cacheKey);
  if (cached) return cached;
  // ignoreTag: Discord markup such as `<t:…>` is text, not an ICU rich-text tag.
  const format = new IntlMessageFormat(message, numbersLocale, undefined, { ignoreTag: true });
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
    const message = catalogs.get(catalogLocale)?.[key];
    if (message === undefined) continue;
    // Literal text needs no formatter (nor its Intl objects, for every locale's command descriptions).
    if (!ICU_SYNTAX.test(message)) return message;
    const numbersLocale = formatLocale(locale, catalogLocale);
    return String(compile(message, catalogLocale, key, numbersLocale).format(values));
  }
  throw new Error(`i18n: no message "${key}" in ${DEFAULT_LOCALE}`);
}

/** `description_localizations` for Discord: the message in every shipped locale other than en-US. */
export function localizations(key: MessageKey): LocalizationMap {
  const out: LocalizationMap = {};
  for (const [locale, catalog] of Object.entries(SHIPPED)) {
    if (locale !== DEFAULT_LOCALE && catalog[key] !== undefined)
      out[locale as keyof LocalizationMap] = t(locale, key);
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
