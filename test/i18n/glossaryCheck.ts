/**
 * The words a locale agreed on, checked: a glossary (`src/i18n/glossary/<locale>.json`) names the approved
 * word for each recurring concept, the variants it replaced (banned), the one form of address and the
 * typography; `glossaryProblems` lists every message of the locale that breaks it, and every count
 * followed by a noun without a plural. Pure: catalogs and glossaries in, problems out.
 */
import { type MessageFormatElement, parse, TYPE } from '@formatjs/icu-messageformat-parser';
import { z } from 'zod';

const Banned = z.object({
  /** RegExp source, compiled with the flags `iu`: “Cargo humano” is banned with “cargo humano”. */
  pattern: z.string().min(1),
  /** Where case carries the meaning (German “Sie” is the register, “sie” is “they”): flags `u` only. */
  caseSensitive: z.boolean().optional(),
  note: z.string().optional(),
  /** Keys allowed to match, each with the reason. */
  except: z.record(z.string(), z.string()).optional(),
  /** Only the keys this RegExp matches (a register per surface: `^web\\.` for the web pages). */
  keys: z.string().optional(),
});

export const GlossarySchema = z.object({
  register: z.object({
    form: z.string().min(1),
    note: z.string().optional(),
    banned: z.array(Banned).default([]),
  }),
  terms: z
    .array(
      z.object({
        en: z.string().min(1),
        /** Where en-US says it (flags `iu`)… */
        enPattern: z.string().optional(),
        use: z.string().min(1),
        /** …the translation says this (flags `iu`), once for each time en-US says it… */
        match: z.string().optional(),
        /**
         * …or one of these inflected forms, where the language inflects the term: literal, flags `iu`, found
         * inside longer words too (German compounds), so a form another form contains is not listed again.
         */
        forms: z.array(z.string().min(1)).optional(),
        banned: z.array(Banned).default([]),
        except: z.record(z.string(), z.string()).optional(),
        note: z.string().optional(),
      }),
    )
    .default([]),
  typography: z.object({ note: z.string().optional(), banned: z.array(Banned).default([]) }),
  /** Words that may follow `{n, number} ` without a plural (prepositions, units). */
  afterNumber: z.array(z.string()).default([]),
  /** The language keeps a noun singular after a numeral (Turkish “3 üye”): no plural is asked for. */
  numeralsTakeSingular: z.boolean().default(false),
});
export type Glossary = z.infer<typeof GlossarySchema>;

/**
 * The concepts every translated locale must not only name but bind: the entry says where en-US uses the
 * term (`enPattern`) and how the translation says it (`match` or `forms`), so each occurrence is checked.
 */
export const BINDING_TERMS = [
  'role gating',
  're-check',
  'identity',
  'proven',
  'humanity score',
  'held removal',
  'exemption',
  'Linked Roles',
  'credential',
  'spam flag',
] as const;

/** The concepts every translated locale must name (the Discord ones as Discord's own client says them). */
export const REQUIRED_TERMS = [
  ...BINDING_TERMS,
  'proof',
  'prove',
  'verify',
  'wallet',
  'gated role',
  'human role',
  'flag',
  'score',
  'dry run',
  'role',
  'channel',
  'Server Settings',
  'Manage Roles',
  'Connections',
] as const;

export type Messages = Readonly<Record<string, string>>;

/** The plural categories a locale selects for whole numbers 0…1000 (ru: one, few, many, other). */
export function integerCategories(locale: string): Set<string> & { locale: string } {
  const rules = new Intl.PluralRules(locale);
  const categories = Object.assign(new Set<string>(), { locale });
  for (let n = 0; n <= 1000; n += 1) categories.add(rules.select(n));
  return categories;
}

/** True when `=n` options name every whole number 0…1000 the locale puts in `category`. */
function exactlyCovered(category: string, options: Record<string, unknown>, locale: string): boolean {
  const rules = new Intl.PluralRules(locale);
  for (let n = 0; n <= 1000; n += 1) if (rules.select(n) === category && !(`=${n}` in options)) return false;
  return true;
}

/** ICU elements of a message; literal text keeps its place so what follows an argument can be read. */
function elementsOf(message: string): MessageFormatElement[] {
  return parse(message, { ignoreTag: true });
}

/** `{x, number}` arguments directly followed by a word, and plurals missing a category, anywhere. */
function pluralProblems(
  elements: MessageFormatElement[],
  categories: Set<string> & { locale: string },
  afterNumber: ReadonlySet<string>,
  out: string[],
): void {
  elements.forEach((element, i) => {
    if (element.type === TYPE.number) {
      const next = elements[i + 1];
      const word =
        next?.type === TYPE.literal ? /^\s+(\p{L}[\p{L}\p{M}'’-]*)/u.exec(next.value)?.[1] : undefined;
      if (word !== undefined && !afterNumber.has(word) && !afterNumber.has(word.toLowerCase()))
        out.push(`{${element.value}, number} is followed by “${word}”: a counted noun needs a plural`);
    }
    if (element.type === TYPE.plural) {
      if (element.pluralType !== 'ordinal') {
        // `=1 {a minute}` covers `one` where 1 is the only number the locale calls `one` (en, de…).
        const missing = [...categories]
          .sort()
          .filter((c) => !(c in element.options) && !exactlyCovered(c, element.options, categories.locale));
        if (missing.length > 0) out.push(`the plural of {${element.value}} lacks ${missing.join(', ')}`);
      }
      for (const option of Object.values(element.options))
        pluralProblems(option.value, categories, afterNumber, out);
    }
    if (element.type === TYPE.select)
      for (const option of Object.values(element.options))
        pluralProblems(option.value, categories, afterNumber, out);
  });
}

/** `\b` in a glossary means a word boundary in any script (JavaScript's own sees only ASCII letters). */
const UNICODE_BOUNDARY =
  '(?:(?<![\\p{L}\\p{N}_])(?=[\\p{L}\\p{N}_])|(?<=[\\p{L}\\p{N}_])(?![\\p{L}\\p{N}_]))';

function compile(source: string, flags: string, where: string): RegExp {
  try {
    return new RegExp(source.replaceAll('\\b', UNICODE_BOUNDARY), flags);
  } catch (error) {
    throw new Error(`${where}: not a RegExp: ${source} (${String(error)})`);
  }
}

/**
 * Every problem of `locale`'s messages against its glossary and en-US: banned words, a term the English
 * uses but the translation does not, counts without plurals, straight apostrophes. One line each.
 */
export function glossaryProblems(
  locale: string,
  messages: Messages,
  english: Messages,
  glossary: Glossary,
): string[] {
  const problems: string[] = [];
  const bannedLists: { banned: z.infer<typeof Banned>[]; what: string }[] = [
    { banned: glossary.register.banned, what: `register (${glossary.register.form})` },
    { banned: glossary.typography.banned, what: 'typography' },
    ...glossary.terms.map((term) => ({ banned: term.banned, what: `“${term.en}” is “${term.use}”` })),
  ];
  for (const { banned, what } of bannedLists) {
    for (const rule of banned) {
      const pattern = compile(rule.pattern, rule.caseSensitive ? 'u' : 'iu', `${locale} ${what}`);
      const keys = rule.keys === undefined ? undefined : compile(rule.keys, 'u', `${locale} ${what}`);
      for (const [key, message] of Object.entries(messages)) {
        if (rule.except?.[key] !== undefined || (keys && !keys.test(key))) continue;
        const found = bannedIn(pattern, message);
        if (found)
          problems.push(
            `${locale} ${key}: “${found[0]}” breaks ${what}${rule.note ? ` (${rule.note})` : ''}`,
          );
      }
    }
  }
  for (const term of glossary.terms) {
    const inLocale = termMatcher(term, locale);
    if (term.enPattern === undefined || inLocale === undefined) continue;
    const inEnglish = compile(term.enPattern, 'giu', `${locale} “${term.en}”`);
    for (const [key, source] of Object.entries(english)) {
      const message = messages[key];
      if (message === undefined || term.except?.[key] !== undefined) continue;
      const wanted = occurrences(inEnglish, elementsOf(source));
      if (wanted === 0) continue;
      const found = occurrences(inLocale, elementsOf(message));
      if (found === 0)
        problems.push(
          `${locale} ${key}: en-US says “${term.en}”, the translation lacks “${term.use}”: “${message}”${term.note ? ` (${term.note})` : ''}`,
        );
      else if (found < wanted)
        problems.push(
          `${locale} ${key}: en-US says “${term.en}” ${wanted} times, the translation “${term.use}” ${found}: “${message}”`,
        );
    }
  }
  const categories = integerCategories(locale);
  // A language that keeps the noun singular after a numeral (Turkish) needs neither.
  if (categories.size > 1 && !glossary.numeralsTakeSingular) {
    const afterNumber = new Set(glossary.afterNumber);
    for (const [key, message] of Object.entries(messages)) {
      const found: string[] = [];
      pluralProblems(elementsOf(message), categories, afterNumber, found);
      for (const problem of found) problems.push(`${locale} ${key}: ${problem}`);
    }
  }
  for (const [key, message] of Object.entries(messages)) {
    // ICU reads a straight apostrophe before `{` as an escape: the catalogs write ’.
    if (message.includes("'")) problems.push(`${locale} ${key}: a straight apostrophe (write ’)`);
  }
  return problems;
}

/** An argument's name (`identity` in `{identity}`, `{identity, select, …}`): no word of the sentence. */
const ARGUMENT_NAME = /(?<=\{)\s*[\p{L}_][\p{L}\p{N}_]*\s*(?=[,}])/gu;

/** The first match of a banned pattern outside argument names, case-insensitive as it is. */
function bannedIn(pattern: RegExp, message: string): RegExpExecArray | undefined {
  const names = [...message.matchAll(ARGUMENT_NAME)].map((m) => [m.index, m.index + m[0].length]);
  const global = new RegExp(pattern.source, `${pattern.flags}g`);
  for (const found of message.matchAll(global)) {
    const end = found.index + found[0].length;
    if (found[0] !== '' && !names.some(([from = 0, to = 0]) => found.index >= from && end <= to))
      return found;
  }
  return undefined;
}

/**
 * How often `pattern` (flag `g`) occurs in one rendering of a message: the text between arguments is read
 * as written (an argument as `{name}`), and a plural or select counts its branch that says it most, so
 * `one {# identity} other {# identities}` is one occurrence, as a language without `one` writes it.
 */
function occurrences(pattern: RegExp, elements: readonly MessageFormatElement[]): number {
  let total = 0;
  let text = '';
  for (const element of elements) {
    if (element.type === TYPE.literal) text += element.value;
    else if (element.type === TYPE.pound) text += '#';
    else if (element.type === TYPE.plural || element.type === TYPE.select) {
      const branches = Object.values(element.options).map((option) => occurrences(pattern, option.value));
      total += Math.max(0, ...branches);
      text += `{${element.value}}`;
    } else if ('value' in element) text += `{${String(element.value)}}`;
  }
  return total + [...text.matchAll(pattern)].length;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** How the translation says a term: its `match`, else any of its inflected `forms`; undefined when neither. */
function termMatcher(term: Glossary['terms'][number], locale: string): RegExp | undefined {
  const sources = [
    ...(term.match === undefined ? [] : [term.match]),
    ...(term.forms ?? []).map(escapeRegExp),
  ];
  if (sources.length === 0) return undefined;
  return compile(sources.map((s) => `(?:${s})`).join('|'), 'giu', `${locale} “${term.en}”`);
}

/** Problems of the glossary itself: a required concept not named, a binding one named but not bound. */
export function glossaryGaps(glossary: Glossary): string[] {
  const named = new Map(glossary.terms.map((t) => [t.en, t]));
  const gaps = REQUIRED_TERMS.filter((term) => !named.has(term)).map((term) => `no entry for “${term}”`);
  for (const en of BINDING_TERMS) {
    const term = named.get(en);
    if (term !== undefined && (term.enPattern === undefined || (term.match ?? term.forms) === undefined))
      gaps.push(`“${en}” is not bound: it needs enPattern and match or forms`);
  }
  return gaps;
}
