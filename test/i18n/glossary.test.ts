/**
 * Each locale keeps to its glossary: the approved word for every recurring concept (never a drifted
 * variant), Discord's own client terms, one form of address, its typography, and plurals wherever a count
 * is followed by a noun. The checker itself is tested on a small made-up catalog first.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import { messagesOf, TRANSLATED_LOCALES } from './catalogFiles.ts';
import {
  BINDING_TERMS,
  type Glossary,
  GlossarySchema,
  glossaryGaps,
  glossaryProblems,
  integerCategories,
  REQUIRED_TERMS,
} from './glossaryCheck.ts';

function glossaryOf(locale: string): Glossary {
  const url = new URL(`../../src/i18n/glossary/${locale}.json`, import.meta.url);
  return GlossarySchema.parse(JSON.parse(readFileSync(url, 'utf8')));
}

const english = messagesOf('en-US');

describe('the glossaries', () => {
  it.each(SHIPPED_LOCALES)('%s: its messages keep to its glossary, plurals included', (locale) => {
    const glossary = glossaryOf(locale);
    expect(glossaryProblems(locale, messagesOf(locale), english, glossary)).toEqual([]);
  });

  it.each(TRANSLATED_LOCALES)('%s: names every required concept, and its form of address', (locale) => {
    const glossary = glossaryOf(locale);
    expect(glossaryGaps(glossary)).toEqual([]);
    expect(glossary.register.form.trim()).not.toBe('');
  });
});

describe('the glossary checker', () => {
  const made: Glossary = GlossarySchema.parse({
    register: { form: 'du', banned: [{ pattern: '\\b(Sie|Ihnen|Ihre?)\\b', note: 'Sie-form' }] },
    terms: [
      {
        en: 'gated role',
        enPattern: 'gated roles?',
        use: 'geschützte Rolle',
        match: 'geschützte\\p{L}* Rolle',
        banned: [{ pattern: 'gesteuerte Rolle', except: { 'a.quoted': 'quotes the old name' } }],
        except: { 'a.exempt': 'names no role' },
        note: 'the protected role',
      },
    ],
    typography: { banned: [{ pattern: '"' }] },
    afterNumber: ['von'],
  });
  const en = {
    'a.role': 'Pick a gated role',
    'a.quoted': 'Pick a gated role',
    'a.exempt': 'Gated roles stay',
    'a.count': '{n, number} members',
    'a.page': 'page {p, number} of {n, number}',
  };
  const good = {
    'a.role': 'Wähle eine geschützte Rolle',
    'a.quoted': 'Wähle eine geschützte Rolle (früher „gesteuerte Rolle“)',
    'a.exempt': 'Sie bleiben',
    'a.count': '{n, plural, one {# Mitglied} other {# Mitglieder}}',
    'a.page': 'Seite {p, number} von {n, number}',
  };

  it('passes a catalog that keeps to it, honouring each exception', () => {
    expect(glossaryProblems('de', { ...good, 'a.exempt': 'Bleiben' }, en, made)).toEqual([]);
  });

  it('finds a banned variant, the other register, a term left out, a count without a plural, typography', () => {
    const problems = glossaryProblems(
      'de',
      {
        ...good,
        'a.role': 'Wähle eine gesteuerte Rolle, die Sie "magst"',
        'a.count': '{n, number} Mitglieder',
        'a.page': 'Seite {p, number} aus {n, number}',
      },
      en,
      made,
    );
    expect(problems).toEqual([
      'de a.role: “Sie” breaks register (du) (Sie-form)',
      'de a.exempt: “Sie” breaks register (du) (Sie-form)',
      'de a.role: “"” breaks typography',
      'de a.role: “gesteuerte Rolle” breaks “gated role” is “geschützte Rolle”',
      'de a.role: en-US says “gated role”, the translation lacks “geschützte Rolle”: “Wähle eine gesteuerte Rolle, die Sie "magst"” (the protected role)',
      'de a.count: {n, number} is followed by “Mitglieder”: a counted noun needs a plural',
      'de a.page: {p, number} is followed by “aus”: a counted noun needs a plural',
      // An exception from the term's rule still leaves the register rule standing.
    ]);
  });

  it('asks every plural for the categories its locale uses: ru needs few and many', () => {
    expect([...integerCategories('ru')].sort()).toEqual(['few', 'many', 'one']);
    expect([...integerCategories('ja')]).toEqual(['other']);
    const ru = { ...made, afterNumber: [], terms: [], register: { form: 'вы', banned: [] } };
    expect(glossaryProblems('ru', { x: '{n, plural, one {# роль} other {# ролей}}' }, {}, ru)).toEqual([
      'ru x: the plural of {n} lacks few, many',
    ]);
    expect(glossaryProblems('ja', { x: '{n, number} 件' }, {}, ru)).toEqual([]);
    expect(glossaryProblems('ru', { x: "it's" }, {}, ru)).toEqual(['ru x: a straight apostrophe (write ’)']);
    // `\\b` is a word boundary in every script: “tes” inside “requêtes” is no word of its own.
    const fr = { ...ru, register: { form: 'vous', banned: [{ pattern: '\\b[Tt]es\\b' }] } };
    expect(glossaryProblems('fr', { x: 'les requêtes', y: 'tes rôles' }, {}, fr)).toEqual([
      'fr y: “tes” breaks register (vous)',
    ]);
  });

  it('names a required concept a glossary leaves out, and a binding one it names without binding', () => {
    expect(glossaryGaps(made)).toContain('no entry for “credential”');
    expect(glossaryGaps(made)).not.toContain('no entry for “gated role”');
    const named = GlossarySchema.parse({
      ...made,
      terms: [
        { en: 'credential', use: 'Nachweis' },
        { en: 're-check', enPattern: '\\bre-check', use: 'Neuprüfung', forms: ['Neuprüfung', 'neu prüfen'] },
      ],
    });
    expect(glossaryGaps(named)).toContain('“credential” is not bound: it needs enPattern and match or forms');
    expect(glossaryGaps(named).join('\n')).not.toMatch(/re-check/);
    for (const term of BINDING_TERMS) expect(REQUIRED_TERMS).toContain(term);
  });
});

describe('a glossary that binds', () => {
  const base = { register: { form: 'tu', banned: [] }, typography: { banned: [] } };
  const fr = GlossarySchema.parse({
    ...base,
    register: { form: 'tu', banned: [{ pattern: '\\btoi seule?\\b', note: 'genré' }] },
    terms: [
      { en: 're-check', enPattern: '\\bre-check', use: 'revérification', match: 'revérifi' },
      { en: 'human role', use: 'rôle humain', banned: [{ pattern: 'rôle d’humain' }] },
      { en: 'identity', enPattern: 'identit(y|ies)', use: 'identité', forms: ['identité', 'identités'] },
    ],
  });
  const en = {
    held: 'Held back: this re-check would remove it. A later re-check that agrees applies it.',
    count: '{n, plural, one {# identity} other {# identities}} linked',
    panel: 'Only you see the answers.',
  };

  it('checks each occurrence of the English term, not one per message', () => {
    const once = {
      held: 'Retenu : cette revérification le retirerait. Une vérification ultérieure l’appliquera.',
    };
    expect(glossaryProblems('fr', once, en, fr)).toEqual([
      `fr held: en-US says “re-check” 2 times, the translation “revérification” 1: “${once.held}”`,
    ]);
    const twice = {
      held: 'Retenu : cette revérification le retirerait. Une revérification ultérieure l’appliquera.',
    };
    expect(glossaryProblems('fr', twice, en, fr)).toEqual([]);
  });

  it('counts a plural once, as the branch that says it most, and knows a term’s inflected forms', () => {
    // ja and zh have no `one`: one branch says it once, as English says it once in each of its two.
    expect(glossaryProblems('ja', { count: '{n, plural, other {# identités}} liées' }, en, fr)).toEqual([]);
    expect(glossaryProblems('fr', { count: '{n, plural, one {# liée} other {# liées}}' }, en, fr)).toEqual([
      'fr count: en-US says “identity”, the translation lacks “identité”: “{n, plural, one {# liée} other {# liées}}”',
    ]);
  });

  it('bans case-insensitively, outside argument names, unless the rule keeps case', () => {
    const pt = GlossarySchema.parse({
      ...base,
      terms: [{ en: 'human role', use: 'cargo de humano', banned: [{ pattern: 'cargo humano' }] }],
    });
    expect(
      glossaryProblems('pt-BR', { a: 'Cargo humano', b: 'o cargo humano', c: 'Cargo de humano' }, {}, pt),
    ).toEqual([
      'pt-BR a: “Cargo humano” breaks “human role” is “cargo de humano”',
      'pt-BR b: “cargo humano” breaks “human role” is “cargo de humano”',
    ]);
    expect(glossaryProblems('fr', { panel: 'Toi seul vois les réponses.' }, en, fr)).toEqual([
      'fr panel: “Toi seul” breaks register (tu) (genré)',
    ]);
    const de = GlossarySchema.parse({
      ...base,
      register: { form: 'du', banned: [{ pattern: '\\b(Ihnen|Sie haben)\\b', caseSensitive: true }] },
      terms: [{ en: 'channel', use: 'Kanal', banned: [{ pattern: '\\bchannel\\b' }] }],
    });
    expect(
      glossaryProblems(
        'de',
        { a: 'weil sie ihnen gehört', b: 'Sie haben', c: 'in {channel}', d: 'Channel' },
        {},
        de,
      ),
    ).toEqual(['de b: “Sie haben” breaks register (du)', 'de d: “Channel” breaks “channel” is “Kanal”']);
  });
});
