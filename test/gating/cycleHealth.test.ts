/**
 * A re-check cycle's health (issue #37): the figures `/metrics` and the dashboard's health page show, and
 * the page's words for them in every shipped locale.
 */
import { describe, expect, it } from 'vitest';
import { cycleHealth } from '../../src/gating/rechecks/cycleHealth.ts';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import type { RecheckCycle } from '../../src/store/recheckCycleTypes.ts';
import { createFormats } from '../../src/web/pages/dashboardParts.ts';
import { cyclePairs, cycleProblem, durationText } from '../../src/web/pages/recheckCycleHtml.ts';

const HOUR = 3_600_000;
const KEYLESS = { requests: 5, intervalMs: 10_000 };

function cycle(over: Partial<RecheckCycle> = {}): RecheckCycle {
  return { startedAt: 0, upstreamRequests: 0, reusedChecks: 0, passes: 0, passMs: 0, ...over };
}

describe('cycleHealth', () => {
  it('weighs the last finished cycle: 10,000 identities at the keyless quota need 5.6 hours, which a 6-hour interval holds', () => {
    const health = cycleHealth(
      {
        current: cycle({ startedAt: 6 * HOUR, upstreamRequests: 3 }),
        previous: cycle({ upstreamRequests: 10_000, reusedChecks: 90_000, passes: 100, passMs: HOUR }),
      },
      6 * HOUR,
      KEYLESS,
    );
    expect(health).toMatchObject({
      finished: true,
      startedAt: 0,
      upstreamRequests: 10_000,
      reusedChecks: 90_000,
    });
    expect(health.quotaSeconds).toBe(20_000);
    expect(health.keepingUp).toBe(true);
  });

  it('falls behind when the requests at the quota, or the passes, need more than the interval', () => {
    const requests = cycleHealth(
      { current: cycle({ upstreamRequests: 11_000 }), previous: null },
      6 * HOUR,
      KEYLESS,
    );
    expect([requests.finished, requests.keepingUp]).toEqual([false, false]);
    const passes = cycleHealth({ current: cycle({ passMs: 7 * HOUR }), previous: null }, 6 * HOUR, null);
    expect([passes.quotaSeconds, passes.keepingUp]).toEqual([0, false]);
  });
});

describe('the health page’s cycle', () => {
  const behind = cycleHealth(
    { current: cycle({ upstreamRequests: 12_960, passMs: HOUR }), previous: null },
    6 * HOUR,
    KEYLESS,
  );

  it.each(SHIPPED_LOCALES)(
    '%s: every figure in words, and the problem line only when it falls behind',
    (locale) => {
      const frame = { locale, formats: createFormats(locale) };
      const pairs = cyclePairs(behind, frame);
      expect(pairs.match(/<dt>/g)).toHaveLength(5);
      expect(pairs).toContain(frame.formats.number.format(12_960));
      expect(pairs).not.toMatch(/\{|web\.dashboard/);
      const problem = cycleProblem(behind, locale);
      expect(problem).toContain(durationText(25_920, locale));
      expect(problem).toContain(durationText(6 * 3_600, locale));
      const fine = cycleHealth(
        { current: cycle({ upstreamRequests: 10 }), previous: null },
        6 * HOUR,
        KEYLESS,
      );
      expect(cycleProblem(fine, locale)).toBeNull();
    },
  );

  it('gives durations in the largest readable unit', () => {
    expect([durationText(42, 'en-US'), durationText(600, 'en-US'), durationText(25_920, 'en-US')]).toEqual([
      '42 sec',
      '10 min',
      '7.2 hr',
    ]);
  });
});
