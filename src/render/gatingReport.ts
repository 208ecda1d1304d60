/**
 * Gating reports about one member: `/whoami`, `/gating check`, the "Check web3 credentials" context menu
 * and a moderator's member re-check: proofs, credentials, and each gated role wanted vs held. Pure.
 */
import type { APIEmbedField } from 'discord-api-types/v10';
import { type IdentityEvidence, notBeforeOf, type RoleDecision } from '../gating/rules/rules.ts';
import type { MemberReport, MemberSync, PendingRemoval } from '../gating/types.ts';
import { t } from '../i18n/index.ts';
import type { LinkRecord } from '../store/types.ts';
import { DISCORD_LIMITS, discordTime, escapeLine } from '../text/safety.ts';
import { credentialVerdict } from '../web3bio/credentials.ts';
import { credentialCounts, verdictLine } from './credentials.ts';
import { joinLinesWithin } from './format.ts';
import {
  blockedNote,
  decisionReason,
  diffLines,
  embed,
  type GuildNames,
  identityText,
  LIST_MAX,
  notBeforeText,
  plain,
  reasonText,
  roleLabel,
  userLabel,
} from './gatingLabels.ts';
import { type LinkedRoleStatus, linkedRoleField } from './gatingMember.ts';
import { exemptByText } from './gatingNotices.ts';
import { finishPayload } from './payload.ts';
import { COLORS, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';
import {
  type Audience,
  type SignButtonId,
  signButtonRows,
  uncountedLines,
  walletsToSign,
} from './uncountedCredentials.ts';

function proofText(link: LinkRecord, locale: string): string {
  const when = discordTime(link.provenAt / 1000, 'R');
  return link.proofMethod === 'record'
    ? t(locale, 'gating.proof.record', { when })
    : t(locale, 'gating.proof.signature', { when });
}

function decisionState(d: RoleDecision, has: boolean, locale: string): string {
  if (d.want === null) return t(locale, has ? 'gating.decision.keptHeld' : 'gating.decision.keptNotHeld');
  if (d.want) return t(locale, has ? 'gating.decision.wantedHeld' : 'gating.decision.wantedNotHeld');
  return t(locale, has ? 'gating.decision.unwantedHeld' : 'gating.decision.unwantedNotHeld');
}

function decisionLine(d: RoleDecision, held: ReadonlySet<string>, names: GuildNames, locale: string): string {
  const state = decisionState(d, held.has(d.roleId), locale);
  return `${roleLabel(d.roleId, names, locale)}: ${state}\n  ↳ ${decisionReason(d, locale)}`;
}

function evidenceFor(report: MemberReport, identity: string): IdentityEvidence | undefined {
  return report.evidence.find((e) => e.identity === identity);
}

/** What the report shows with its fields: whose view it is, and the wallets the member has a button for. */
interface ReportView {
  audience: Audience;
  buttons: ReadonlySet<string>;
}

function linkField(
  link: LinkRecord,
  evidence: IdentityEvidence | undefined,
  ctx: RenderContext,
  view: ReportView,
): APIEmbedField {
  const { locale } = ctx;
  const credentials = evidence ? evidence.credentials : link.lastResult;
  const uncounted = evidence?.uncounted ?? [];
  const lines = [proofText(link, locale)];
  if (credentials) {
    const verdict = credentialVerdict(credentials, ctx.nowSec);
    lines.push(
      verdict === 'none' && uncounted.length > 0
        ? t(locale, 'gating.report.noneCounting')
        : verdictLine(verdict, locale),
      credentialCounts(credentials, ctx.nowSec, locale),
    );
  } else if (evidence) {
    lines.push(t(locale, 'gating.report.lookupFailed'));
  } else {
    lines.push(t(locale, 'gating.report.notChecked'));
  }
  if (link.lastCheckAt !== null) {
    const when = discordTime(link.lastCheckAt / 1000, 'R');
    lines.push(
      t(
        locale,
        link.lastCheckOk === false ? 'gating.report.lastCheckedFailed' : 'gating.report.lastChecked',
        {
          when,
        },
      ),
    );
  }
  lines.push(...uncountedLines(uncounted, view.audience, view.buttons, locale));
  return {
    name: `${identityText(link.identity, locale)} · ${escapeLine(platformName(link.platform))}`,
    value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue),
  };
}

function releasedField(report: MemberReport, locale: string): APIEmbedField | null {
  if (report.released.length === 0) return null;
  const lines = report.released.map((l) =>
    t(locale, 'gating.report.releasedLine', {
      identity: identityText(l.identity, locale),
      when: discordTime((l.releasedAt ?? 0) / 1000, 'R'),
    }),
  );
  return {
    name: t(locale, 'gating.report.releasedTitle'),
    value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue),
  };
}

function pendingText(p: PendingRemoval, names: GuildNames, locale: string): string {
  const [kind, ...rest] = p.subject.split(':');
  const id = rest.join(':');
  const what =
    kind === 'role'
      ? `➖ ${roleLabel(id, names, locale)}`
      : kind === 'link'
        ? `🔗 ${t(locale, 'gating.pending.unlink', { identity: identityText(id, locale) })}`
        : `🚩 ${t(locale, 'gating.pending.releaseFlag', { identity: identityText(id, locale) })}`;
  const state =
    p.heldAt !== null
      ? t(locale, 'gating.pending.held')
      : t(locale, 'gating.pending.confirm', { when: discordTime(p.confirmAt / 1000, 'R') });
  return `${what}: ${reasonText(p.reason)}\n  ↳ ${state}`;
}

function pendingField(report: MemberReport, names: GuildNames, locale: string): APIEmbedField | null {
  const lines = report.pendingRemovals.map((p) => pendingText(p, names, locale));
  const blocked = blockedNote(report.blockedRoleIds, names, locale).trim();
  if (blocked) lines.push(blocked);
  if (lines.length === 0) return null;
  return {
    name: t(locale, 'gating.pending.title'),
    value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue),
  };
}

function decisionsField(report: MemberReport, names: GuildNames, locale: string): APIEmbedField {
  const held = new Set(report.currentRoleIds);
  const lines = report.decisions.map((d) => decisionLine(d, held, names, locale));
  return {
    name: t(locale, 'gating.report.decisionsTitle'),
    value:
      lines.length > 0
        ? joinLinesWithin(lines, DISCORD_LIMITS.fieldValue)
        : t(locale, 'gating.report.noGatedRoles'),
  };
}

function reportFields(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
  view: ReportView,
): APIEmbedField[] {
  return [
    ...report.links.map((link) => linkField(link, evidenceFor(report, link.identity), ctx, view)),
    releasedField(report, ctx.locale),
    decisionsField(report, names, ctx.locale),
    pendingField(report, names, ctx.locale),
  ].filter((f): f is APIEmbedField => f !== null);
}

/** The wallets a member could sign with to make their proven identities' credentials count. */
function walletsOf(report: MemberReport): string[] {
  const proven = new Set(report.links.map((l) => l.identity));
  return walletsToSign(
    report.evidence.filter((e) => proven.has(e.identity)).flatMap((e) => e.uncounted ?? []),
  );
}

/**
 * `/whoami`: my proven identities, and for each gated role why I have it or not. Credentials that do not
 * count say why; with `signButtonId`, each wallet whose signature would count them gets a button.
 */
export function renderWhoami(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
  linkedRole?: LinkedRoleStatus,
  signButtonId?: SignButtonId,
): MessagePayload {
  const { locale } = ctx;
  const extra = linkedRole ? [linkedRoleField(linkedRole, locale)] : [];
  if (report.links.length === 0) {
    const fields =
      report.decisions.length > 0 || report.released.length > 0
        ? reportFields(report, names, ctx, { audience: 'member', buttons: new Set() })
        : [];
    return plain(
      embed(
        t(locale, 'gating.whoami.noneTitle'),
        t(locale, 'gating.whoami.noneDescription'),
        COLORS.neutral,
        [...extra, ...fields].slice(0, DISCORD_LIMITS.fields),
      ),
      ctx,
    );
  }
  const signable = signButtonId ? walletsOf(report).slice(0, DISCORD_LIMITS.buttonsPerRow) : [];
  const rows = signButtonId ? signButtonRows(signable, signButtonId, locale) : [];
  const withButton = new Set(signable);
  const view: ReportView = { audience: 'member', buttons: withButton };
  const fields = [...extra, ...reportFields(report, names, ctx, view)].slice(0, DISCORD_LIMITS.fields);
  const count = t(locale, 'gating.whoami.count', { count: report.links.length });
  const hint =
    withButton.size > 0 ? `\n${t(locale, 'gating.whoami.signHint', { count: withButton.size })}` : '';
  const notBefore = notBeforeOf(report.decisions);
  const waits = notBefore ? `\n${notBeforeText(notBefore, names, locale)}` : '';
  return finishPayload(
    [embed(t(locale, 'gating.whoami.title'), `${count}${hint}${waits}`, COLORS.info, fields)],
    rows,
    { ...ctx, stale: undefined },
  );
}

/** The removals an exemption holds back, as `/gating check` lists them; empty when none. */
function keptText(report: MemberReport, names: GuildNames, locale: string): string {
  const by = report.exemptBy;
  if (!by || !report.kept?.length) return '';
  const exempt = exemptByText(by, locale, (roleId) => roleLabel(roleId, names, locale));
  const lines = report.kept.map((k) =>
    t(locale, 'gating.exempt.keptLine', {
      role: roleLabel(k.roleId, names, locale),
      by: exempt,
      why: reasonText(k.because),
    }),
  );
  return `\n\n${t(locale, 'gating.exempt.keptTitle')}\n${joinLinesWithin(lines, LIST_MAX)}`;
}

/** `/gating check` and "Check web3 credentials": a member's proofs, credentials and roles wanted vs held. */
export function renderMemberReport(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const who = userLabel(report.userId, names, locale);
  const changes = diffLines(report.diff, names, locale);
  const summary =
    report.links.length === 0
      ? t(locale, 'gating.check.none', { who })
      : t(locale, 'gating.check.count', { who, count: report.links.length });
  const pending =
    changes.length > 0
      ? `\n\n${t(locale, 'gating.check.wouldChange')}\n${joinLinesWithin(changes, LIST_MAX)}`
      : `\n\n${t(locale, 'gating.check.rolesMatch')}`;
  return plain(
    embed(
      t(locale, 'gating.check.title'),
      `${summary}${pending}${keptText(report, names, locale)}`,
      COLORS.info,
      reportFields(report, names, ctx, { audience: 'moderator', buttons: new Set() }),
    ),
    ctx,
  );
}

/** `/gating recheck member:`: what changed for one member. */
export function renderMemberRecheck(
  userId: string,
  sync: MemberSync,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const changes = diffLines(sync.applied, names, locale);
  const waiting = sync.waiting.map(
    (w) => `⏸️ ${roleLabel(w.roleId, names, locale)}: ${reasonText(w.because)}`,
  );
  const who = userLabel(userId, names, locale);
  const lines = [
    changes.length === 0 && waiting.length === 0
      ? t(locale, 'gating.recheck.memberMatch', { who })
      : t(locale, 'gating.recheck.member', { who }),
    changes.length > 0
      ? `${t(locale, 'gating.recheck.queued')}\n${joinLinesWithin(changes, LIST_MAX * 2)}`
      : '',
    waiting.length > 0 ? `${t(locale, 'gating.recheck.waiting')}\n${joinLinesWithin(waiting, LIST_MAX)}` : '',
  ];
  return plain(
    embed(
      t(locale, 'gating.recheck.title'),
      lines.filter(Boolean).join('\n'),
      changes.length === 0 ? COLORS.neutral : COLORS.success,
    ),
    ctx,
  );
}
