/**
 * The catalogs agree with en-US: the same keys, the same ICU arguments, every message compiles; and every
 * command description fits Discord's 100 characters in every locale.
 */
import { readFileSync } from 'node:fs';
import { type MessageFormatElement, TYPE } from '@formatjs/icu-messageformat-parser';
import type { APIApplicationCommandOption } from 'discord-api-types/v10';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import { localizations, type MessageKey, registerCatalog, SHIPPED_LOCALES, t } from '../../src/i18n/index.ts';
import { ACCEPTED_FORMS } from '../../src/web3bio/identity.ts';

const DESCRIPTION_MAX = 100;

function catalog(locale: string): Record<string, string> {
  const url = new URL(`../../src/i18n/locales/${locale}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Record<string, string>;
}

/** Every argument a message reads, with its kind (`plain`, `number`, `plural`…), nested ones too. */
function argumentsOf(elements: MessageFormatElement[], out = new Set<string>()): Set<string> {
  for (const element of elements) {
    if (element.type === TYPE.literal || element.type === TYPE.pound) continue;
    if (element.type === TYPE.tag) {
      argumentsOf(element.children, out);
      continue;
    }
    out.add(element.value);
    if (element.type === TYPE.plural || element.type === TYPE.select) {
      for (const option of Object.values(element.options)) argumentsOf(option.value, out);
    }
  }
  return out;
}

function parse(message: string, locale: string): MessageFormatElement[] {
  return new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).getAst();
}

const english = catalog('en-US');

describe('catalogs', () => {
  it.each(SHIPPED_LOCALES)('%s has exactly the en-US keys', (locale) => {
    expect(Object.keys(catalog(locale)).sort()).toEqual(Object.keys(english).sort());
  });

  it.each(SHIPPED_LOCALES)('%s: every message compiles and reads the en-US arguments', (locale) => {
    for (const [key, message] of Object.entries(catalog(locale))) {
      const source = english[key] ?? '';
      const expected = [...argumentsOf(parse(source, 'en-US'))].sort();
      expect([...argumentsOf(parse(message, locale))].sort(), `${locale} ${key}`).toEqual(expected);
    }
  });

  it.each(SHIPPED_LOCALES)('%s: plurals have an `other` case', (locale) => {
    // Straight apostrophes and the plural categories are checked in all three catalogs by glossary.test.ts.
    for (const [key, message] of Object.entries(catalog(locale))) {
      const plurals = parse(message, locale).filter((e) => e.type === TYPE.plural);
      for (const plural of plurals)
        expect(Object.keys(plural.options), `${locale} ${key}`).toContain('other');
    }
  });

  it('lists the same accepted identity forms as the identity parser (en-US)', () => {
    for (const locale of SHIPPED_LOCALES) {
      const forms = t(locale, 'errors.invalid_identity.forms').split('\n');
      expect(forms, locale).toHaveLength(ACCEPTED_FORMS.length);
    }
    expect(t('en-US', 'errors.invalid_identity.forms').split('\n')).toEqual(ACCEPTED_FORMS);
  });
});

describe('t', () => {
  it('falls back along the chain to en-US', () => {
    const title = (locale: string) => t(locale, 'whois.empty.title');
    expect(title('en-GB')).toBe('No profiles');
    expect(title('es-419')).toBe(title('es-ES'));
    expect(title('de-AT')).toBe(title('de'));
    expect(title('zh-TW')).toBe('No profiles');
    expect(title('')).toBe('No profiles');
    expect(title('not a locale!!')).toBe('No profiles');
  });

  it('reads catalog files for shipped locale codes only: a locale that looks like a path reads nothing', () => {
    // The locale comes from the interaction (the member's client); catalogs are files read on first use.
    for (const hostile of ['../web/de', 'gating/de', '../../../../etc/passwd', 'de/../../x', 'de\u0000']) {
      expect(t(hostile, 'whois.empty.title')).toBe('No profiles');
    }
    expect(t('de', 'whois.empty.title')).not.toBe('No profiles');
  });

  it('gives literal messages as written, exactly as the ICU formatter would', () => {
    // `t` skips the formatter for text with no ICU syntax; every shipped message must come out the same.
    let literal = 0;
    for (const locale of SHIPPED_LOCALES) {
      const all = ['', 'gating/', 'web/'].flatMap((dir) => Object.entries(catalog(`${dir}${locale}`)));
      for (const [key, message] of all) {
        if (/[{}']/.test(message)) continue;
        const formatted = String(
          new IntlMessageFormat(message, locale, undefined, { ignoreTag: true }).format({}),
        );
        literal += 1;
        expect(t(locale, key as MessageKey), `${locale} ${key}`).toBe(formatted);
      }
    }
    expect(literal).toBeGreaterThan(100);
    // ICU quoting still goes through the formatter.
    registerCatalog('en-x-quote', { 'commands.whois.description': "it''s" });
    expect(t('en-x-quote', 'commands.whois.description')).toBe("it's");
  });

  it('formats plurals and numbers for the locale', () => {
    const summary = (locale: string, count: number) =>
      t(locale, 'wallet.graph.summary', { count, page: 1, pages: 2 });
    expect(summary('en-US', 1)).toBe('1 linked identity · page 1 of 2');
    expect(summary('en-US', 1234)).toBe('1,234 linked identities · page 1 of 2');
    expect(summary('de', 1234)).toBe('1.234 verknüpfte Identitäten · Seite 1 von 2');
    expect(summary('ru', 3)).toBe('3 связанные личности · страница 1 из 2');
    expect(summary('ru', 5)).toBe('5 связанных личностей · страница 1 из 2');
    expect(t('fr', 'creds.score', { score: 47.825 })).toBe('Score : **47,83**');
  });
});

interface Described {
  path: string;
  option: { description?: string; description_localizations?: Record<string, string | null> | null };
}

function* descriptions(
  options: readonly APIApplicationCommandOption[] | undefined,
  path: string,
): Generator<Described> {
  for (const option of options ?? []) {
    yield { path: `${path} ${option.name}`, option };
    if ('options' in option) yield* descriptions(option.options, `${path} ${option.name}`);
  }
}

describe('command descriptions', () => {
  const commands = commandsFor({ GATING_ENABLED: true, LINKED_ROLES_ENABLED: true });
  const described = commands.flatMap((command) => {
    const data = command.data;
    const top: Described[] =
      'description' in data && data.description ? [{ path: `/${data.name}`, option: data }] : [];
    return [...top, ...descriptions('options' in data ? data.options : [], `/${data.name}`)];
  });

  it('are translated into every shipped locale', () => {
    const others = SHIPPED_LOCALES.filter((l) => l !== 'en-US').sort();
    expect(described.length).toBeGreaterThan(20);
    for (const { path, option } of described) {
      expect(Object.keys(option.description_localizations ?? {}).sort(), path).toEqual(others);
    }
  });

  it('fit Discord’s 100 characters in every locale', () => {
    for (const { path, option } of described) {
      const texts = [option.description, ...Object.values(option.description_localizations ?? {})];
      for (const text of texts) {
        expect(text?.length, `${path}: ${text}`).toBeLessThanOrEqual(DESCRIPTION_MAX);
        expect(text?.length, path).toBeGreaterThan(0);
      }
    }
  });

  it('names fit Discord: 32 characters, lower case for slash commands, every context menu localised', () => {
    // Chat-input names: Discord's pattern, lower case where the letter has one; context menus: 1..32 of
    // anything. Choice names: up to 100. @see https://discord.com/developers/docs/interactions/application-commands
    const CHAT_NAME = /^[-_\p{L}\p{N}\p{sc=Deva}\p{sc=Thai}]{1,32}$/u;
    const problems: string[] = [];
    const check = (path: string, name: string, chatInput: boolean, max = 32) => {
      if (name.length < 1 || name.length > max) problems.push(`${path}: “${name}” is ${name.length} long`);
      if (chatInput && (!CHAT_NAME.test(name) || name !== name.toLowerCase()))
        problems.push(`${path}: “${name}” is no chat-input name`);
    };
    type Named = { name: string; name_localizations?: Record<string, string | null> | null };
    const all = (item: Named) => [
      item.name,
      ...Object.values(item.name_localizations ?? {}).flatMap((n) => n ?? []),
    ];
    let contextMenus = 0;
    for (const command of commands) {
      const data = command.data as Named & { type?: number; options?: APIApplicationCommandOption[] };
      const chatInput = data.type === undefined || data.type === 1;
      if (!chatInput) {
        contextMenus += 1;
        expect(Object.keys(data.name_localizations ?? {}).sort(), data.name).toEqual(
          SHIPPED_LOCALES.filter((l) => l !== 'en-US').sort(),
        );
      }
      for (const name of all(data)) check(`/${data.name}`, name, chatInput);
      const walk = (options: readonly APIApplicationCommandOption[] | undefined, path: string) => {
        for (const option of options ?? []) {
          for (const name of all(option as Named)) check(`${path} ${option.name}`, name, true);
          if ('choices' in option)
            for (const choice of option.choices ?? [])
              for (const name of all(choice as Named))
                check(`${path} ${option.name}=${choice.name}`, name, false, 100);
          if ('options' in option) walk(option.options, `${path} ${option.name}`);
        }
      };
      walk(data.options, `/${data.name}`);
    }
    expect(contextMenus).toBe(2);
    expect(problems).toEqual([]);
  });

  it('localizations() leaves en-US to `description`', () => {
    expect(localizations('commands.whois.description')).not.toHaveProperty('en-US');
    expect(localizations('commands.whois.description').de).toBe(t('de', 'commands.whois.description'));
  });
});
