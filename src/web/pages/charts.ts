/**
 * Bar charts drawn on the server as inline SVG: no script, no library, nothing fetched. Each chart is a
 * `<figure>` whose SVG has an accessible name and summary, with the same numbers as a table below it (in a
 * `<details>`) for screen readers and for anyone who wants the figures. Words come from the caller. Pure.
 */

import type { NumberFormatter } from '../../i18n/numbers.ts';
import { escapeHtml } from './words.ts';

export interface ChartSeries {
  /** The legend's and the table column's name. */
  label: string;
  values: readonly number[];
  /** A fill with at least 3:1 contrast on white (WCAG 1.4.11). */
  color: string;
}

export interface BarChart {
  /** Unique on the page (ids are made from it). */
  id: string;
  title: string;
  /** One sentence: what the chart shows in numbers. */
  summary: string;
  /** Days, oldest first: the x axis and the table's rows. */
  days: readonly string[];
  series: readonly ChartSeries[];
  /** The table's first column heading, and its disclosure's label. */
  dayHeading: string;
  tableLabel: string;
  /** The page language's number format (made once by the caller: Intl objects are costly). */
  number: NumberFormatter;
}

const WIDTH = 720;
const HEIGHT = 180;
const LEFT = 44;
const RIGHT = 8;
const TOP = 10;
const BOTTOM = 24;

/** The smallest round number at or above `value` (1, 2, 5 × a power of ten), at least 1. */
export function niceCeiling(value: number): number {
  if (value <= 1) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 5, 10]) if (step * power >= value) return step * power;
  return 10 * power;
}

const fixed = (n: number) => Number(n.toFixed(2));

/** The chart as HTML: the figure with its SVG, legend and table. */
export function barChart(c: BarChart): string {
  const number = c.number;
  const max = niceCeiling(Math.max(0, ...c.series.flatMap((s) => s.values)));
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, c.days.length);
  const barWidth = Math.max(1, (slot * 0.8) / Math.max(1, c.series.length));
  const y = (v: number) => TOP + plotHeight - (v / max) * plotHeight;
  // Whole numbers only: a day's count is one.
  const grid = [0, max / 2, max]
    .filter(Number.isInteger)
    .map(
      (v) =>
        `<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${fixed(y(v))}" y2="${fixed(y(v))}" stroke="#d0d4da"/>` +
        `<text x="${LEFT - 6}" y="${fixed(y(v) + 4)}" text-anchor="end">${escapeHtml(number.format(v))}</text>`,
    )
    .join('');
  const bars = c.days
    .map((day, i) =>
      c.series
        .map((s, j) => {
          const v = s.values[i] ?? 0;
          if (v <= 0) return '';
          const x = LEFT + i * slot + slot * 0.1 + j * barWidth;
          return (
            `<rect x="${fixed(x)}" y="${fixed(y(v))}" width="${fixed(barWidth)}" height="${fixed(TOP + plotHeight - y(v))}" fill="${s.color}">` +
            `<title>${escapeHtml(`${day}: ${s.label} ${number.format(v)}`)}</title></rect>`
          );
        })
        .join(''),
    )
    .join('');
  const ticks = [0, Math.floor((c.days.length - 1) / 2), c.days.length - 1]
    .filter((i, k, all) => i >= 0 && all.indexOf(i) === k)
    .map((i) => {
      const anchor = i === 0 ? 'start' : i === c.days.length - 1 ? 'end' : 'middle';
      const x = i === 0 ? LEFT : i === c.days.length - 1 ? WIDTH - RIGHT : LEFT + (i + 0.5) * slot;
      return `<text x="${fixed(x)}" y="${HEIGHT - 6}" text-anchor="${anchor}">${escapeHtml(c.days[i] ?? '')}</text>`;
    })
    .join('');
  const titleId = `${c.id}-title`;
  const descId = `${c.id}-desc`;
  const svg =
    `<svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-labelledby="${titleId} ${descId}" focusable="false" class="chart">` +
    `<title id="${titleId}">${escapeHtml(c.title)}</title><desc id="${descId}">${escapeHtml(c.summary)}</desc>` +
    `<g class="axis">${grid}${ticks}</g>${bars}</svg>`;
  const legend =
    c.series.length > 1
      ? `<ul class="legend">${c.series
          .map(
            (s) =>
              `<li><svg class="swatch" viewBox="0 0 12 12" aria-hidden="true" focusable="false"><rect width="12" height="12" fill="${s.color}"/></svg>${escapeHtml(s.label)}</li>`,
          )
          .join('')}</ul>`
      : '';
  const rows = c.days
    .map(
      (day, i) =>
        `<tr><th scope="row">${escapeHtml(day)}</th>${c.series
          .map((s) => `<td>${escapeHtml(number.format(s.values[i] ?? 0))}</td>`)
          .join('')}</tr>`,
    )
    .join('');
  const table =
    `<details><summary>${escapeHtml(c.tableLabel)}</summary><table><caption>${escapeHtml(c.title)}</caption>` +
    `<thead><tr><th scope="col">${escapeHtml(c.dayHeading)}</th>${c.series
      .map((s) => `<th scope="col">${escapeHtml(s.label)}</th>`)
      .join('')}</tr></thead><tbody>${rows}</tbody></table></details>`;
  return `<figure class="chart-figure"><figcaption><h3>${escapeHtml(c.title)}</h3><p>${escapeHtml(c.summary)}</p></figcaption>${svg}${legend}${table}</figure>`;
}
