/**
 * All three catalogs (the bot's, gating's, the web pages') agree with en-US: the same keys, the same ICU
 * arguments read the same way, every message compiles (so every plural and select has `other`); and every
 * command name and description fits Discord in every locale.
 */
import { readdirSync } from 'node:fs';
import type { APIApplicationCommandOption } from 'discord-api-types/v10';
import { IntlMessageFormat } from 'intl-messageformat';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import { localizations, type MessageKey, registerCatalog, SHIPPED_LOCALES, t } from '../../src/i18n/index.ts';
import { ACCEPTED_FORMS } from '../../src/web3bio/identity.ts';
import { argumentsOf, CATALOG_DIRS, catalogFile, elementsOf } from './catalogFiles.ts';

const DESCRIPTION_MAX = 100;

describe.each(CATALOG_DIRS)('catalogs in locales/%s', (dir) => {
  const english = catalogFile(dir, 'en-US');

  it('ship one file per shipped locale, and nothing else', () => {
    const files = readdirSync(new URL(`../../src/i18n/locales/${dir}`, import.meta.url), {
      withFileTypes: true,
    })
      .filter((f) => f.isFile())
      .map((f) => f.name);
    expect(files.sort()).toEqual(SHIPPED_LOCALES.map((l) => `${l}.json`).sort());
  });

  it.each(SHIPPED_LOCALES)('%s has exactly the en-US keys', (locale) => {
    expect(Object.keys(catalogFile(dir, locale)).sort()).toEqual(Object.keys(english).sort());
  });

  it.each(SHIPPED_LOCALES)('%s: every message compiles and reads the en-US arguments', (locale) => {
    // Straight apostrophes and the plural categories are checked in all three catalogs by glossary.test.ts.
    const problems: string[] = [];
    for (const [key, message] of Object.entries(catalogFile(dir, locale))) {
      const elements = elementsOf(message, locale);
      const expected = argumentsOf(elementsOf(english[key] ?? '', 'en-US')).join(' ');
      const found = argumentsOf(elements).join(' ');
      if (message.trim() === '') problems.push(`${key}: empty`);
      if (found !== expected)
        problems.push(`${key}: reads ${found || 'nothing'}, en-US ${expected || 'nothing'}`);
    }
    expect(problems).toEqual([]);
  });
});

describe('catalog checks', () => {
  it('see a missing argument, a count read as text, and a plural without other', () => {
    const args = (message: string) => argumentsOf(elementsOf(message, 'de'));
    expect(args('{n, plural, one {# von {total, number}} other {#}} {name}')).toEqual([
      'n:count',
      'name:text',
      'total:count',
    ]);
    expect(args('{n, number}')).toEqual(args('{n, plural, other {#}}'));
    expect(args('{n}')).not.toEqual(args('{n, number}'));
    expect(() => elementsOf('{k, select, a {x} other {{n, plural, one {#}}}}', 'de')).toThrow(/OTHER/);
    expect(() => elementsOf('{k, select, a {x} other {y}}', 'de')).not.toThrow();
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
      const all = CATALOG_DIRS.flatMap((dir) => Object.entries(catalogFile(dir, locale)));
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
    expect(t('fr', 'creds.score', { score: 47.825 })).toBe('Score\u00a0: **47,83**');
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
