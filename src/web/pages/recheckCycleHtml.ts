/**
 * The health page's re-check cycle (issue #37): what the last cycle of every server's periodic passes
 * cost in Web3.bio requests, how many reads another server's check answered, how long the passes and the
 * requests at the quota took, and a problem line when that does not fit in the re-check interval.
 */
import type { CycleHealth } from '../../gating/rechecks/cycleHealth.ts';
import type { DashboardFrame } from './dashboardDocument.ts';
import { timeHtml } from './dashboardParts.ts';
import { escapeHtml, text } from './words.ts';

/** Seconds in the page's language, in the largest unit that keeps the figure readable. */
export function durationText(seconds: number, locale: string): string {
  const [value, unit] =
    seconds < 120
      ? [seconds, 'second']
      : seconds < 7_200
        ? [seconds / 60, 'minute']
        : [seconds / 3_600, 'hour'];
  const format = new Intl.NumberFormat(locale, {
    style: 'unit',
    unit,
    unitDisplay: 'short',
    maximumFractionDigits: 1,
  });
  return format.format(value);
}

/** The problem line when the cycle does not keep up, else null. */
export function cycleProblem(cycle: CycleHealth, locale: string): string | null {
  if (cycle.keepingUp) return null;
  const needed = durationText(Math.max(cycle.passSeconds, cycle.quotaSeconds), locale);
  return text(locale, 'web.dashboard.health.cycleBehind', {
    needed,
    interval: durationText(cycle.intervalSeconds, locale),
  });
}

/** The cycle's figures, as pairs of the health page's list. */
export function cyclePairs(cycle: CycleHealth, frame: Pick<DashboardFrame, 'locale' | 'formats'>): string {
  const { locale, formats } = frame;
  const pair = (key: Parameters<typeof text>[1], value: string) =>
    `<dt>${text(locale, key)}</dt><dd>${value}</dd>`;
  const count = (n: number) => escapeHtml(formats.number.format(n));
  return (
    pair(
      cycle.finished ? 'web.dashboard.health.cycleLast' : 'web.dashboard.health.cycleCurrent',
      timeHtml(cycle.startedAt, formats),
    ) +
    pair('web.dashboard.health.cycleRequests', count(cycle.upstreamRequests)) +
    pair('web.dashboard.health.cycleReused', count(cycle.reusedChecks)) +
    pair('web.dashboard.health.cycleLength', escapeHtml(durationText(cycle.passSeconds, locale))) +
    pair('web.dashboard.health.cycleQuota', escapeHtml(durationText(cycle.quotaSeconds, locale)))
  );
}
