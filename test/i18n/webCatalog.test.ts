/** The web catalog's own rules; keys and arguments against en-US are checked in catalogs.test.ts. */
import { describe, expect, it } from 'vitest';
import { type MessageKey, SHIPPED_LOCALES, t } from '../../src/i18n/index.ts';
import webEnUS from '../../src/i18n/locales/web/en-US.json' with { type: 'json' };

const CATALOGS = Object.fromEntries(
  await Promise.all(
    SHIPPED_LOCALES.map(async (locale) => {
      const module = await import(`../../src/i18n/locales/web/${locale}.json`, { with: { type: 'json' } });
      return [locale, module.default as Record<string, string>] as const;
    }),
  ),
);

/** Every shipped locale has its web catalog written. */
const TRANSLATED = SHIPPED_LOCALES;

const TAGS = /<\/?([a-z]+)[^>]*>/g;

describe('the web catalog', () => {
  const keys = Object.keys(webEnUS);

  it('keeps every key under web.', () => {
    for (const key of keys) expect(key).toMatch(/^web\.[a-zA-Z.]+$/);
  });

  it.each(TRANSLATED)('keeps markup to the Html keys, with the same tags as en-US (%s)', (locale) => {
    for (const key of keys) {
      const message = CATALOGS[locale]?.[key] ?? '';
      const tags = [...message.matchAll(TAGS)].map((m) => m[0]).sort();
      if (!key.endsWith('Html')) expect(message, `${locale} ${key}`).not.toMatch(/[<>&]/);
      else {
        const english = [...webEnUS[key as keyof typeof webEnUS].matchAll(TAGS)].map((m) => m[0]).sort();
        expect(tags, `${locale} ${key}`).toEqual(english);
      }
    }
  });

  it.each(TRANSLATED)('formats every %s message with sample values', (locale) => {
    const values = {
      address: '0xabc',
      shared: '0xdef',
      error: 'boom',
      expected: '@alice',
      actual: '@bob',
      time: '2025-01-01 00:00 UTC',
      minutes: 10,
      seconds: 5,
      identity: 'alice.eth',
      reason: 'why',
      username: 'alice',
      proof: 'signature',
      labels: 'A, B',
      more: 2,
      wallet: '0x12…34',
      subject: 'bob.eth',
      lookedUp: 'carol.eth',
      linkedRoles: 'true',
      signer: '0x99',
      refusal: 'Refused.',
      attempts: 10,
      server: 'Guild',
      role: 'Verified',
      days: 30,
      total: 12,
      peak: 4,
      day: 'Nov 3',
      rule: 'all of: score ≥ 30',
      condition: 'score ≥ 30',
      members: 100,
      add: 3,
      remove: 1,
      unknown: 0,
      count: 6,
      shown: 5,
      changes: 2,
      target: '123',
      errors: 1,
      share: 0.25,
      ms: 120,
      match: 'all of',
      conditions: 'score ≥ 30',
      domain: 'verify.example.org',
      fid: 3,
      code: 'raced',
      chains: 'base',
      needed: '9.5 hr',
      interval: '6 hr',
    };
    for (const key of keys) expect(t(locale, key as MessageKey, values)).not.toContain('{');
  });
});
