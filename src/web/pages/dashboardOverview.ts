/**
 * The overview of one server: the counts (human role holders and flagged members as the last full
 * re-check counted them, linked members, pending and held removals, queued role changes), the setup and
 * role rules (linking to Rules), the charts of the last 30 or 90 days, and Web3.bio's health from the
 * bot's own metrics. Pure.
 */
import type { Overview } from '../../gating/dashboard/reads.ts';
import { type MessageKey, t } from '../../i18n/index.ts';
import type { UpstreamSample } from '../../store/types.ts';
import { barChart, type ChartSeries } from './charts.ts';
import { type DashboardFrame, dashboardDocument } from './dashboardDocument.ts';
import {
  type DashboardNames,
  dayText,
  roleHtml,
  ruleConditionsText,
  setupHtml,
  timeHtml,
} from './dashboardParts.ts';
import { escapeHtml, text } from './words.ts';

const BLUE = '#1d4ed8';
const ORANGE = '#b45309';
const GREEN = '#15803d';
const RED = '#b91c1c';
const PURPLE = '#6d28d9';
const GREY = '#374151';

export interface OverviewPage {
  frame: DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };
  names: DashboardNames;
  overview: Overview;
}

function count(p: OverviewPage, label: string, value: number | null, more = ''): string {
  const { locale } = p.frame;
  const shown =
    value === null
      ? text(locale, 'web.dashboard.count.unknown')
      : escapeHtml(p.frame.formats.number.format(value));
  return `<div><dt>${label}</dt><dd>${shown}</dd>${more}</div>`;
}

function counts(p: OverviewPage): string {
  const { locale } = p.frame;
  const o = p.overview;
  const held = `${p.frame.root}/${p.frame.guild.id}/held`;
  const humanRole = o.settings
    ? (p.names.roles.get(o.settings.humanRoleId) ?? o.settings.humanRoleId)
    : t(locale, 'web.dashboard.none');
  const holders = o.lastPass?.holders ?? null;
  const asOf = o.lastPass
    ? `<p class="muted">${text(locale, 'web.dashboard.count.asOf')} ${timeHtml(o.lastPass.at, p.frame.formats)}</p>`
    : `<p class="muted">${text(locale, 'web.dashboard.count.noPass')}</p>`;
  return (
    `<h2 id="counts">${text(locale, 'web.dashboard.overview.counts')}</h2><dl class="counts">` +
    count(p, text(locale, 'web.dashboard.count.human', { role: humanRole }), holders?.human ?? null) +
    count(p, text(locale, 'web.dashboard.count.flagged'), holders?.flagged ?? null) +
    count(p, text(locale, 'web.dashboard.count.linked'), o.linked) +
    count(p, text(locale, 'web.dashboard.count.pending'), o.losses.pending) +
    count(p, `<a href="${escapeHtml(held)}">${text(locale, 'web.dashboard.count.held')}</a>`, o.losses.held) +
    count(p, text(locale, 'web.dashboard.count.queued'), o.queued) +
    `</dl>${asOf}`
  );
}

function setup(p: OverviewPage): string {
  return setupHtml(p.overview.settings, p.names, p.frame.locale, p.frame.formats);
}

function rules(p: OverviewPage): string {
  const { locale } = p.frame;
  const link = `<p><a href="${escapeHtml(`${p.frame.root}/${p.frame.guild.id}/rules`)}">${text(locale, 'web.dashboard.rules.manage')}</a></p>`;
  const list = p.overview.rules;
  const body =
    list.length === 0
      ? `<p>${text(locale, 'web.dashboard.rules.none')}</p>`
      : `<ul>${list
          .map(
            (r) =>
              `<li><strong>${roleHtml(p.names, r.roleId)}</strong>: ${escapeHtml(ruleConditionsText(r, locale))}</li>`,
          )
          .join('')}</ul>`;
  return `<h2 id="rules">${text(locale, 'web.dashboard.rules.title')}</h2>${body}${link}`;
}

function charts(p: OverviewPage): string {
  const { locale } = p.frame;
  const o = p.overview;
  const days = o.series.role_added.map((_, i) => dayText(o.firstDay + i, p.frame.formats));
  const base = `${p.frame.root}/${p.frame.guild.id}`;
  const period = `<nav class="period" aria-label="${text(locale, 'web.dashboard.charts.period')}">${(
    [30, 90] as const
  )
    .map(
      (n) =>
        `<a href="${escapeHtml(`${base}?days=${n}`)}"${n === o.days ? ' aria-current="page"' : ''}>${text(locale, 'web.dashboard.charts.days', { days: n })}</a>`,
    )
    .join('')}</nav>`;
  const chart = (id: string, titleKey: MessageKey, series: ChartSeries[]) => {
    const values = series.flatMap((s) => s.values);
    const total = values.reduce((a, b) => a + b, 0);
    let peak = 0;
    let peakDay = 0;
    o.series.role_added.forEach((_, i) => {
      const v = series.reduce((sum, s) => sum + (s.values[i] ?? 0), 0);
      if (v > peak) {
        peak = v;
        peakDay = i;
      }
    });
    const summary =
      total === 0
        ? text(locale, 'web.dashboard.chart.empty', { days: o.days })
        : text(locale, 'web.dashboard.chart.summary', {
            total,
            days: o.days,
            peak,
            day: days[peakDay] ?? '',
          });
    return barChart({
      id,
      title: text(locale, titleKey),
      summary,
      days,
      series,
      dayHeading: text(locale, 'web.dashboard.chart.day'),
      tableLabel: text(locale, 'web.dashboard.chart.table'),
      number: p.frame.formats.number,
    });
  };
  const one = (label: MessageKey, values: readonly number[], color: string): ChartSeries[] => [
    { label: text(locale, label), values, color },
  ];
  return (
    `<h2 id="activity">${text(locale, 'web.dashboard.charts.title')}</h2>${period}` +
    chart('chart-roles', 'web.dashboard.chart.roles', [
      { label: text(locale, 'web.dashboard.chart.grants'), values: o.series.role_added, color: BLUE },
      { label: text(locale, 'web.dashboard.chart.removals'), values: o.series.role_removed, color: ORANGE },
    ]) +
    chart(
      'chart-proofs',
      'web.dashboard.chart.proofs',
      one('web.dashboard.chart.proofsSeries', o.series.linked, GREEN),
    ) +
    chart(
      'chart-flags',
      'web.dashboard.chart.flags',
      one('web.dashboard.chart.flagsSeries', o.series.flag_added, RED),
    ) +
    chart(
      'chart-rechecks',
      'web.dashboard.chart.rechecks',
      one('web.dashboard.chart.rechecksSeries', o.series.recheck_pass, PURPLE),
    ) +
    chart(
      'chart-held',
      'web.dashboard.chart.held',
      one('web.dashboard.chart.heldSeries', o.series.removals_held, GREY),
    )
  );
}

function upstreamRow(p: OverviewPage, label: MessageKey, s: UpstreamSample): string {
  const { locale } = p.frame;
  const number = p.frame.formats.number;
  if (s.requests === 0)
    return `<tr><th scope="row">${text(locale, label)}</th><td colspan="4">${text(locale, 'web.dashboard.upstream.none')}</td></tr>`;
  const cells = [
    escapeHtml(number.format(s.requests)),
    text(locale, 'web.dashboard.upstream.errorsValue', { errors: s.errors, share: s.errors / s.requests }),
    text(locale, 'web.dashboard.upstream.ms', { ms: Math.round((s.seconds / s.requests) * 1000) }),
    escapeHtml(number.format(s.slow)),
  ];
  return `<tr><th scope="row">${text(locale, label)}</th>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
}

function upstream(p: OverviewPage): string {
  const { locale } = p.frame;
  const { lastHour, lastDay } = p.overview.upstream;
  const heads = [
    'web.dashboard.upstream.period',
    'web.dashboard.upstream.requests',
    'web.dashboard.upstream.errors',
    'web.dashboard.upstream.latency',
    'web.dashboard.upstream.slow',
  ] as const;
  return (
    `<h2 id="upstream">${text(locale, 'web.dashboard.upstream.title')}</h2><p class="muted">${text(locale, 'web.dashboard.upstream.intro')}</p>` +
    `<table><caption>${text(locale, 'web.dashboard.upstream.title')}</caption><thead><tr>${heads
      .map((k) => `<th scope="col">${text(locale, k)}</th>`)
      .join('')}</tr></thead><tbody>` +
    upstreamRow(p, 'web.dashboard.upstream.lastHour', lastHour) +
    upstreamRow(p, 'web.dashboard.upstream.lastDay', lastDay) +
    '</tbody></table>'
  );
}

/** The overview page. */
export function renderOverview(p: OverviewPage, cspNonce: string): string {
  const body = counts(p) + setup(p) + rules(p) + charts(p) + upstream(p);
  return dashboardDocument(p.frame, t(p.frame.locale, 'web.dashboard.nav.overview'), body, cspNonce);
}
