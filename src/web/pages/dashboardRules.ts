/**
 * The Rules page: the setup, the role rules with a Remove button per condition, and the form that adds a
 * condition through the same dry run and Apply as `/gating rule add` (nothing is stored before Apply; the
 * refusals are the command's). Pure.
 */
import type { DashboardAnswer } from '../../gating/dashboard/types.ts';
import type { RuleAddResult, RuleRemoveResult } from '../../gating/ruleGating.ts';
import {
  conditionKey,
  MAX_RULE_VALUE,
  type RoleRule,
  RULE_KINDS,
  RULE_MATCHES,
} from '../../gating/rules/roleRules.ts';
import { t } from '../../i18n/index.ts';
import { conditionText, ruleKindText } from '../../render/gatingRule.ts';
import type { GuildSettings } from '../../store/types.ts';
import { csrfField, type DashboardFrame, dashboardDocument } from './dashboardDocument.ts';
import {
  answerProblem,
  type DashboardNames,
  memberHtml,
  notice,
  roleHtml,
  ruleConditionsText,
  ruleRefusalHtml,
  setupHtml,
} from './dashboardParts.ts';
import { escapeHtml, text } from './words.ts';

export interface RuleForm {
  roleId: string;
  kind: string;
  value: string;
  match: string;
}

export interface RulesPage {
  frame: DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };
  names: DashboardNames;
  settings: GuildSettings | null;
  rules: RoleRule[];
  /** The roles the form offers (no @everyone, no managed role), highest first. */
  roles: { id: string; name: string }[];
  /** What was typed, shown again after a preview or an error. */
  form?: RuleForm;
  /** A notice above everything (an outcome, or why the input was refused). Escaped. */
  notice?: string;
  /** A dry run to apply or cancel. */
  preview?: Extract<RuleAddResult, { kind: 'preview' }>;
}

/** The notice for a preview, Apply or Remove's answer (a preview itself is shown by the page). */
export function ruleOutcome(
  answer: DashboardAnswer,
  names: DashboardNames,
  locale: string,
  waitSeconds: number,
): { notice?: string; preview?: Extract<RuleAddResult, { kind: 'preview' }> } {
  const problem = answerProblem(answer, locale, waitSeconds);
  if (problem !== undefined || answer.kind !== 'answered') return { notice: problem ?? '' };
  const result = answer.result;
  if (result.kind === 'rule') return addOutcome(result.result, names, locale);
  if (result.kind === 'ruleRemove') return { notice: removeOutcome(result.result, names, locale) };
  return { notice: notice('error', text(locale, 'web.dashboard.failed')) };
}

function addOutcome(
  result: RuleAddResult,
  names: DashboardNames,
  locale: string,
): { notice?: string; preview?: Extract<RuleAddResult, { kind: 'preview' }> } {
  switch (result.kind) {
    case 'not_set_up':
      return { notice: notice('error', text(locale, 'web.dashboard.rules.notSetUp')) };
    case 'refused':
      return { notice: notice('error', ruleRefusalHtml(result.refusal, names, locale)) };
    case 'preview':
      return { preview: result };
    case 'applied': {
      const values = {
        role: names.roles.get(result.rule.roleId) ?? result.rule.roleId,
        rule: ruleConditionsText(result.rule, locale),
      };
      return {
        notice: result.changed
          ? notice('success', text(locale, 'web.dashboard.rules.applied', values))
          : notice('info', text(locale, 'web.dashboard.rules.unchanged', values)),
      };
    }
  }
}

function removeOutcome(result: RuleRemoveResult, names: DashboardNames, locale: string): string {
  switch (result.kind) {
    case 'not_set_up':
      return notice('error', text(locale, 'web.dashboard.rules.notSetUp'));
    case 'not_found':
      return notice('error', text(locale, 'web.dashboard.rules.notFound'));
    case 'refused':
      return notice('error', ruleRefusalHtml(result.refusal, names, locale));
    case 'removed':
      return notice(
        'success',
        text(locale, 'web.dashboard.rules.removed', {
          condition: conditionText(result.condition, locale),
          role: names.roles.get(result.roleId) ?? result.roleId,
        }),
      );
  }
}

function rulesTable(p: RulesPage): string {
  const { locale, root } = p.frame;
  const action = escapeHtml(`${root}/${p.frame.guild.id}/rules/remove`);
  if (p.rules.length === 0) return `<p>${text(locale, 'web.dashboard.rules.none')}</p>`;
  const rows = p.rules.flatMap((rule) =>
    rule.conditions.map((c, i) => {
      const condition = conditionText(c, locale);
      const label = t(locale, 'web.dashboard.rules.removeLabel', {
        condition,
        role: p.names.roles.get(rule.roleId) ?? rule.roleId,
      });
      return (
        `<tr>${i === 0 ? `<th scope="row" rowspan="${rule.conditions.length}">${roleHtml(p.names, rule.roleId)}<br><span class="muted">${text(locale, rule.match === 'any' ? 'gating.rule.match.any' : 'gating.rule.match.all')}</span></th>` : ''}` +
        `<td>${escapeHtml(condition)}</td><td><form class="inline" method="post" action="${action}">${csrfField(p.frame)}` +
        `<input type="hidden" name="rule" value="${escapeHtml(`${rule.roleId}:${conditionKey(c)}`)}">` +
        `<button type="submit" class="danger" aria-label="${escapeHtml(label)}">${text(locale, 'web.dashboard.rules.remove')}</button></form></td></tr>`
      );
    }),
  );
  return (
    `<table><caption>${text(locale, 'web.dashboard.rules.title')}</caption><thead><tr>` +
    `<th scope="col">${text(locale, 'web.dashboard.rules.role')}</th><th scope="col">${text(locale, 'web.dashboard.rules.condition')}</th>` +
    `<th scope="col"><span class="muted">${text(locale, 'web.dashboard.rules.actions')}</span></th></tr></thead><tbody>${rows.join('')}</tbody></table>`
  );
}

function addForm(p: RulesPage): string {
  const { locale, root } = p.frame;
  const form = p.form ?? { roleId: '', kind: '', value: '', match: '' };
  const selected = (on: boolean) => (on ? ' selected' : '');
  const roles = p.roles
    .map(
      (r) =>
        `<option value="${escapeHtml(r.id)}"${selected(r.id === form.roleId)}>${escapeHtml(r.name)}</option>`,
    )
    .join('');
  const kinds = RULE_KINDS.map(
    (k) => `<option value="${k}"${selected(k === form.kind)}>${escapeHtml(ruleKindText(k, locale))}</option>`,
  ).join('');
  const matches =
    `<option value=""${selected(form.match === '')}>${text(locale, 'web.dashboard.rules.add.matchKeep')}</option>` +
    RULE_MATCHES.map(
      (m) =>
        `<option value="${m}"${selected(m === form.match)}>${text(locale, m === 'any' ? 'gating.rule.match.any' : 'gating.rule.match.all')}</option>`,
    ).join('');
  return (
    `<h2 id="add">${text(locale, 'web.dashboard.rules.add.title')}</h2><p>${text(locale, 'web.dashboard.rules.add.intro')}</p>` +
    `<form method="post" action="${escapeHtml(`${root}/${p.frame.guild.id}/rules/preview`)}">${csrfField(p.frame)}` +
    `<div class="fields"><div><label for="rule-role">${text(locale, 'web.dashboard.rules.role')}</label>` +
    `<select id="rule-role" name="role" required>${roles}</select></div>` +
    `<div><label for="rule-kind">${text(locale, 'web.dashboard.rules.add.kind')}</label><select id="rule-kind" name="kind" required>${kinds}</select></div>` +
    `<div><label for="rule-value">${text(locale, 'web.dashboard.rules.add.value')}</label>` +
    `<input id="rule-value" name="value" required maxlength="${MAX_RULE_VALUE}" value="${escapeHtml(form.value)}" aria-describedby="rule-value-hint">` +
    `<div id="rule-value-hint" class="muted">${text(locale, 'web.dashboard.rules.add.valueHint')}</div></div>` +
    `<div><label for="rule-match">${text(locale, 'web.dashboard.rules.add.match')}</label><select id="rule-match" name="match">${matches}</select></div></div>` +
    `<div class="actions"><button type="submit">${text(locale, 'web.dashboard.rules.add.preview')}</button></div></form>`
  );
}

function previewBlock(p: RulesPage): string {
  const preview = p.preview;
  if (!preview) return '';
  const { locale, root } = p.frame;
  const { proposal, rule, preview: run } = preview;
  const roleName = p.names.roles.get(proposal.roleId) ?? proposal.roleId;
  const sample = run.sample
    .map((m) => {
      const changes = [
        ...m.add.map((id) =>
          text(locale, 'web.dashboard.rules.preview.gains', { role: p.names.roles.get(id) ?? id }),
        ),
        ...m.remove.map((id) =>
          text(locale, 'web.dashboard.rules.preview.loses', { role: p.names.roles.get(id) ?? id }),
        ),
      ].join(', ');
      const who = m.username
        ? `${escapeHtml(`@${m.username}`)} ${memberHtml(m.userId)}`
        : memberHtml(m.userId);
      return `<tr><td>${who}</td><td>${changes}</td><td>${escapeHtml(m.because.join('; '))}</td></tr>`;
    })
    .join('');
  const sampleTable = sample
    ? `<table><caption>${text(locale, 'web.dashboard.rules.preview.sample')}</caption><thead><tr><th scope="col">${text(locale, 'web.dashboard.rules.preview.member')}</th>` +
      `<th scope="col">${text(locale, 'web.dashboard.rules.preview.change')}</th><th scope="col">${text(locale, 'web.dashboard.rules.preview.because')}</th></tr></thead><tbody>${sample}</tbody></table>`
    : '';
  return (
    `<section aria-labelledby="preview-title" class="notice"><h2 id="preview-title">${text(locale, 'web.dashboard.rules.preview.title')}</h2>` +
    `<p><strong>${roleHtml(p.names, rule.roleId)}</strong>: ${escapeHtml(ruleConditionsText(rule, locale))}</p>` +
    `<p>${text(locale, 'web.dashboard.rules.preview.summary', {
      role: roleName,
      add: run.addCount,
      remove: run.removeCount,
      members: run.members,
      unknown: run.unknownCount,
    })}</p>${sampleTable}` +
    `<form method="post" action="${escapeHtml(`${root}/${p.frame.guild.id}/rules/apply`)}">${csrfField(p.frame)}` +
    `<input type="hidden" name="role" value="${escapeHtml(proposal.roleId)}">` +
    `<input type="hidden" name="condition" value="${escapeHtml(conditionKey(proposal.condition))}">` +
    `<input type="hidden" name="match" value="${escapeHtml(proposal.match ?? '')}">` +
    `<div class="actions"><button type="submit">${text(locale, 'web.dashboard.rules.apply')}</button>` +
    `<a class="button secondary" href="${escapeHtml(`${root}/${p.frame.guild.id}/rules`)}">${text(locale, 'web.dashboard.rules.cancel')}</a></div></form></section>`
  );
}

/** The Rules page. */
export function renderRules(p: RulesPage, cspNonce: string): string {
  const { locale } = p.frame;
  const body =
    (p.notice ?? '') +
    previewBlock(p) +
    setupHtml(p.settings, p.names, locale, p.frame.formats) +
    `<h2 id="rules">${text(locale, 'web.dashboard.rules.title')}</h2>${rulesTable(p)}` +
    (p.settings ? addForm(p) : '');
  return dashboardDocument(p.frame, t(locale, 'web.dashboard.nav.rules'), body, cspNonce);
}
