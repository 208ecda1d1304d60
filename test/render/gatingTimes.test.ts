/**
 * Times and counts in gating's words: a relative time is a Discord timestamp standing alone (“in 3 days”,
 * never “from in 3 days”), a date is a Discord date (never an ISO string), and counts are numbers read
 * by ICU plurals (never “1 proven identities”), in English and in the locales whose grammar broke.
 */
import { describe, expect, it } from 'vitest';
import { DAY_MS, evaluateRules, type GatingRules } from '../../src/gating/rules/rules.ts';
import { renderExport } from '../../src/render/gatingExport.ts';
import { decisionReason, type GuildNames, NO_NAMES, notBeforeText } from '../../src/render/gatingLabels.ts';
import { credential, ctx, NOW_SEC } from './fixtures.ts';

const HUMAN = '1000000000000000001';
const NOW = NOW_SEC * 1000;
const names: GuildNames = { ...NO_NAMES, roles: new Map([[HUMAN, 'Verified Human']]) };
const DUE = NOW + 3 * DAY_MS;

const RULES: GatingRules = {
  humanRoleId: HUMAN,
  spamRoleId: null,
  riskyRoleId: null,
  minScore: null,
  spamRemovesHuman: true,
  minAccountAgeDays: 7,
  minJoinAgeDays: 0,
};

describe('when a member too new for the human role gets it', () => {
  it('says the relative time as Discord writes it, after no preposition', () => {
    const at = { roleId: HUMAN, at: DUE };
    const sec = DUE / 1000;
    expect(notBeforeText(at, names, 'en-US')).toBe(`You can get **Verified Human** <t:${sec}:R>.`);
    expect(notBeforeText(at, names, 'fr')).toBe(`Tu pourras obtenir **Verified Human** <t:${sec}:R>.`);
    expect(notBeforeText(at, names, 'es-ES')).toBe(`Podrás obtener **Verified Human** <t:${sec}:R>.`);
    expect(notBeforeText(at, names, 'ru')).toBe(`Вы сможете получить **Verified Human** <t:${sec}:R>.`);
    expect(notBeforeText(at, names, 'tr')).toBe(`**Verified Human** rolünü <t:${sec}:R> alabilirsin.`);
  });

  it('gives the reason with the date as a Discord date, from the rule’s own decision', () => {
    const age = { createdAt: NOW - 4 * DAY_MS, joinedAt: NOW - 30 * DAY_MS };
    const evidence = [
      { identity: 'alice.eth', credentials: { isHuman: [credential()], isRisky: [], isSpam: [] } },
    ];
    const decision = evaluateRules(RULES, evidence, NOW_SEC, age).find((d) => d.roleId === HUMAN);
    expect(decision?.why?.code).toBe('tooNew');
    const sec = (age.createdAt + 7 * DAY_MS) / 1000;
    const english = decision ? decisionReason(decision, 'en-US') : '';
    expect(english).toBe(`too new: the account or its membership here is old enough on <t:${sec}:D>`);
    expect(english).not.toMatch(/\d{4}-\d\d-\d\dT/);
    expect(decision ? decisionReason(decision, 'de') : '').toBe(
      `zu neu: das Konto oder die Mitgliedschaft hier ist am <t:${sec}:D> alt genug`,
    );
  });
});

describe('the export’s summary', () => {
  const summary = (
    counts: { days: number; members: number; roles: number; events: number },
    locale: string,
  ) =>
    renderExport({ ...counts, gzippedOverMiB: null, tooLarge: [] }, ctx({ locale })).content?.split('\n')[0];

  it('counts with plurals read from numbers: one of each is singular, many are grouped', () => {
    expect(summary({ days: 1, members: 1, roles: 1, events: 1 }, 'en-US')).toBe(
      'Gating export for the last day: 1 proven identity, 1 role held through gating, 1 audit event. The CSV files are attached; only you see them.',
    );
    expect(summary({ days: 30, members: 1234, roles: 2, events: 0 }, 'en-US')).toBe(
      'Gating export for the last 30 days: 1,234 proven identities, 2 roles held through gating, 0 audit events. The CSV files are attached; only you see them.',
    );
    expect(summary({ days: 30, members: 1, roles: 1, events: 1 }, 'de')).toContain(
      '1 nachgewiesene Identität, 1 über Gating vergebene Rolle, 1 Audit-Ereignis.',
    );
    expect(summary({ days: 5, members: 3, roles: 5, events: 21 }, 'ru')).toContain(
      'Экспорт данных выдачи ролей за последние 5 дней: 3 доказанные личности, 5 ролей, выданных по правилам, 21 событие аудита.',
    );
  });
});
