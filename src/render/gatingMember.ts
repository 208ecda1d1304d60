/**
 * Gating messages about one member: `/verify` (and why an identity was not linked), `/unverify`,
 * `/whoami`, `/check-credentials` and a moderator's member re-check. Pure: data in, payload out.
 */
import type { APIEmbedField } from 'discord-api-types/v10';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { IdentityEvidence, RoleDecision, RoleDiff } from '../gating/rules/rules.ts';
import type {
  MemberReport,
  MemberSync,
  PendingRemoval,
  VerifyRefusal,
  VerifyResult,
} from '../gating/types.ts';
import { DEFAULT_LOCALE } from '../i18n/index.ts';
import type { LinkRecord } from '../store/types.ts';
import { DISCORD_LIMITS, discordTime, escapeLine, inlineCode, safeUrl, truncate } from '../text/safety.ts';
import { releasedText } from '../web/pages/linkedRolePage.ts';
import { credentialVerdict } from '../web3bio/credentials.ts';
import { credentialCounts, verdictLine } from './credentials.ts';
import { formatNumber, joinLinesWithin } from './format.ts';
import { embed, type GuildNames, LIST_MAX, plain, reasonText, roleLabel, userLabel } from './gatingLabels.ts';
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

const IDENTITY_MAX = 100;

/** The member's Linked Roles connection; `releasedReason` when it no longer backs them (and why). */
type LinkedRoleStatus = { identity: string; stale: boolean; releasedReason?: string | null };

function identityText(identity: string): string {
  return escapeLine(truncate(identity, IDENTITY_MAX)) || 'an identity';
}

/** The promise every signing link repeats: the page asks for a signature and nothing else. */
export const SIGNING_PROMISE =
  'The page only asks your wallet for a signature: it never asks for a transaction, a payment or your seed phrase.';

function proofText(link: LinkRecord): string {
  const how = link.proofMethod === 'record' ? 'its own record names you' : 'wallet signature';
  return `${how} · proven ${discordTime(link.provenAt / 1000, 'R')}`;
}

function diffLines(diff: RoleDiff, names: GuildNames): string[] {
  return [
    ...diff.add.map((d) => `➕ ${roleLabel(d.roleId, names)}: ${reasonText(d.because)}`),
    ...diff.remove.map((d) => `➖ ${roleLabel(d.roleId, names)}: ${reasonText(d.because)}`),
  ];
}

function linkButtonRow(label: string, url: string): MessagePayload['components'] {
  return [
    {
      type: ComponentType.ActionRow,
      components: [{ type: ComponentType.Button, style: ButtonStyle.Link, label, url }],
    },
  ];
}

/** Why an identity was not linked, for the member. */
export function refusalText(refusal: VerifyRefusal): string {
  switch (refusal.code) {
    case 'invalid_identity':
      return `That doesn't look like a web3 identity: ${refusal.reason}.`;
    case 'not_enabled':
      return 'Role gating is not switched on in this server. An admin can set it up with /gating setup.';
    case 'too_many_links':
      return `You already have ${refusal.count} verified identities here (at most ${refusal.max}). Remove one with /unverify first.`;
    case 'lookup_failed':
      return `Web3.bio could not be reached to check ${refusal.identity}. Nothing was changed: try again later.`;
    case 'not_found':
      return `Web3.bio has no profile for ${refusal.identity}. Check the spelling, or verify a wallet address.`;
    case 'no_address':
      return `${refusal.identity} has no Ethereum or Solana address to sign with, and its discord record does not name you. Set its discord record (profile link or com.discord text record) to ${refusal.username}, then run /verify again.`;
    case 'address_taken':
      return `The wallet ${refusal.address} already backs another member here. A name's record can point at any wallet, so only a signature by that wallet can take it over: run /verify ${refusal.address} and sign, or ask the other account to run /unverify.`;
    case 'raced':
      return `Another account proved ${refusal.subject} after your signing link was made, so your signature did not take it over. Nothing was changed: if the wallet is yours, run /verify again and sign the new link.`;
  }
}

function blockedNote(roleIds: readonly string[], names: GuildNames): string {
  if (roleIds.length === 0) return '';
  const roles = roleIds.map((id) => roleLabel(id, names)).join(', ');
  return `\n⏳ Changes of ${roles} wait on a permission problem the server's admins have been told about; they go out as soon as it is fixed.`;
}

/** `/verify`: linked by record, a signing link, or why not. */
export function renderVerifyResult(
  result: VerifyResult,
  identity: string,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  if (result.kind === 'refused') {
    return plain(
      embed(
        '❌ Not verified',
        reasonText(refusalText(result.refusal)) || 'The identity could not be verified.',
        COLORS.warning,
      ),
      ctx,
    );
  }
  if (result.kind === 'linked') {
    const changes = diffLines(result.diff, names);
    const changed = new Set([...result.diff.add, ...result.diff.remove].map((c) => c.roleId));
    const blocked = result.blockedRoleIds.filter((id) => changed.has(id));
    const lines = [
      `✅ **${identityText(result.link.identity)}** is now linked to your Discord account: its own record names you.`,
      result.moved
        ? 'It (or its wallet) was linked to another Discord account here before: that link moved to you, and they were told.'
        : '',
      changes.length > 0
        ? `\n**Role changes** (${blocked.length > 0 ? 'queued' : 'applied in a moment'}):\n${changes.join('\n')}`
        : '',
      blockedNote(blocked, names),
      changes.length === 0 ? '\nYour roles already match its credentials.' : '',
    ];
    return plain(
      embed('Verified', joinLinesWithin(lines.filter(Boolean), LIST_MAX * 4), COLORS.success),
      ctx,
    );
  }
  const url = safeUrl(result.url, ctx.ipfsGateway);
  const expiresSec = result.expiresAt / 1000;
  const description = [
    `To prove you own **${identityText(identity)}**, sign a message with the wallet ${inlineCode(result.address)}.`,
    `Open the page below. The link is for you only and expires ${discordTime(expiresSec, 'R')}.`,
    '',
    `🔒 ${SIGNING_PROMISE}`,
    '',
    `Tip: to skip the signature next time, add your Discord username to the identity’s profile (the \`com.discord\` record) and run /verify again.`,
  ].join('\n');
  const components =
    url && url.length <= DISCORD_LIMITS.linkButtonUrl ? linkButtonRow('Open the signing page', url) : [];
  const withUrl =
    components.length > 0 ? description : `${description}\n\nLink: ${url ? `<${url}>` : 'unavailable'}`;
  return finishPayload([embed('✍️ Sign to verify', withUrl, COLORS.info)], components, {
    ...ctx,
    stale: undefined,
  });
}

/** `/unverify`: how many links were removed. */
export function renderUnverified(
  removed: number,
  identity: string | null,
  ctx: RenderContext,
  linkedRoleCleared = false,
): MessagePayload {
  const linked = linkedRoleCleared
    ? '\nYour Linked Roles connection was cleared too: roles Discord gives from it are removed.'
    : '';
  if (removed === 0 && !linkedRoleCleared) {
    const what = identity
      ? `**${identityText(identity)}** is not linked to you here.`
      : 'You have no linked identity here.';
    return plain(embed('Nothing to unlink', what, COLORS.neutral), ctx);
  }
  const what =
    removed === 0
      ? 'No identity was linked to you in this server.'
      : identity
        ? `**${identityText(identity)}** is no longer linked to you.`
        : `${formatNumber(removed, ctx.locale)} linked ${removed === 1 ? 'identity was' : 'identities were'} removed.`;
  return plain(
    embed(
      'Unlinked',
      `${what}${removed > 0 ? '\nRoles that depended on it are updated in a moment.' : ''}${linked}`,
      COLORS.success,
    ),
    ctx,
  );
}

function decisionLine(d: RoleDecision, held: ReadonlySet<string>, names: GuildNames): string {
  const has = held.has(d.roleId);
  const state =
    d.want === null
      ? has
        ? '⏸️ held, kept while the lookup fails'
        : '⏸️ not held, unchanged while the lookup fails'
      : d.want
        ? has
          ? '✅ wanted · held'
          : '➕ wanted · not held yet'
        : has
          ? '➖ not wanted · still held'
          : '▫️ not wanted · not held';
  return `${roleLabel(d.roleId, names)}: ${state}\n  ↳ ${reasonText(d.because)}`;
}

function evidenceFor(report: MemberReport, identity: string): IdentityEvidence | undefined {
  return report.evidence.find((e) => e.identity === identity);
}

/** What the report shows with its fields: whose view it is, and the wallets the member has a button for. */
interface ReportView {
  audience: Audience;
  buttons: ReadonlySet<string>;
}

const NONE_COUNTING =
  '➖ **No signals that count**: Web3.bio’s credentials here belong to what is not proven yet';

function linkField(
  link: LinkRecord,
  evidence: IdentityEvidence | undefined,
  ctx: RenderContext,
  view: ReportView,
): APIEmbedField {
  const credentials = evidence ? evidence.credentials : link.lastResult;
  const uncounted = evidence?.uncounted ?? [];
  const lines = [proofText(link)];
  if (credentials) {
    const verdict = credentialVerdict(credentials, ctx.nowSec);
    // Gating replies are not translated yet: their credential lines stay English with the rest.
    lines.push(
      verdict === 'none' && uncounted.length > 0 ? NONE_COUNTING : verdictLine(verdict, DEFAULT_LOCALE),
      credentialCounts(credentials, ctx.nowSec, DEFAULT_LOCALE),
    );
  } else if (evidence) {
    lines.push('⚠️ The credential lookup failed: the last known result stands and nothing is removed.');
  } else {
    lines.push('No credentials checked yet.');
  }
  if (link.lastCheckAt !== null) {
    const outcome = link.lastCheckOk === false ? ' (lookup failed)' : '';
    lines.push(`Last checked ${discordTime(link.lastCheckAt / 1000, 'R')}${outcome}`);
  }
  lines.push(...uncountedLines(uncounted, view.audience, view.buttons));
  return {
    name: `${identityText(link.identity)} · ${escapeLine(platformName(link.platform))}`,
    value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue),
  };
}

function releasedField(report: MemberReport): APIEmbedField | null {
  if (report.released.length === 0) return null;
  const lines = report.released.map(
    (l) =>
      `${identityText(l.identity)}: unlinked ${discordTime((l.releasedAt ?? 0) / 1000, 'R')}; its spam or risky flag holds until its own credentials clear`,
  );
  return {
    name: 'Flags held by unlinked identities',
    value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue),
  };
}

function pendingText(p: PendingRemoval, names: GuildNames): string {
  const [kind, ...rest] = p.subject.split(':');
  const id = rest.join(':');
  const what =
    kind === 'role'
      ? `➖ ${roleLabel(id, names)}`
      : kind === 'link'
        ? `🔗 unlink ${identityText(id)}`
        : `🚩 release the flag of ${identityText(id)}`;
  const when =
    p.heldAt !== null
      ? 'held back as part of a mass removal: a later re-check or a moderator confirms it'
      : `confirmed by a re-check from ${discordTime(p.confirmAt / 1000, 'R')} if the loss is still seen`;
  return `${what}: ${reasonText(p.reason)}\n  ↳ pending, ${when}`;
}

function pendingField(report: MemberReport, names: GuildNames): APIEmbedField | null {
  const lines = report.pendingRemovals.map((p) => pendingText(p, names));
  const blocked = blockedNote(report.blockedRoleIds, names).trim();
  if (blocked) lines.push(blocked);
  if (lines.length === 0) return null;
  return { name: 'Pending', value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue) };
}

function reportFields(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
  view: ReportView,
): APIEmbedField[] {
  return [
    ...report.links.map((link) => linkField(link, evidenceFor(report, link.identity), ctx, view)),
    releasedField(report),
    decisionsField(report, names),
    pendingField(report, names),
  ].filter((f): f is APIEmbedField => f !== null);
}

function decisionsField(report: MemberReport, names: GuildNames): APIEmbedField {
  const held = new Set(report.currentRoleIds);
  const lines = report.decisions.map((d) => decisionLine(d, held, names));
  return {
    name: 'Gated roles: wanted vs held',
    value:
      lines.length > 0 ? joinLinesWithin(lines, DISCORD_LIMITS.fieldValue) : 'No gated roles are set up.',
  };
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
  const extra = linkedRole ? [linkedRoleField(linkedRole)] : [];
  return renderWhoamiReport(report, names, ctx, extra, signButtonId);
}

/** The wallets a member could sign with to make their proven identities' credentials count. */
function walletsOf(report: MemberReport): string[] {
  const proven = new Set(report.links.map((l) => l.identity));
  return walletsToSign(
    report.evidence.filter((e) => proven.has(e.identity)).flatMap((e) => e.uncounted ?? []),
  );
}

/** `/whoami` in a server without gating set up: only the member's Linked Roles connection. */
export function renderLinkedRoleStatus(linkedRole: LinkedRoleStatus, ctx: RenderContext): MessagePayload {
  return plain(
    embed(
      'Linked Roles',
      'Role gating is not set up in this server; your Linked Roles connection works in every server.',
      linkedRole.stale || linkedRole.releasedReason ? COLORS.warning : COLORS.info,
      [linkedRoleField(linkedRole)],
    ),
    ctx,
  );
}

function linkedRoleField(linkedRole: LinkedRoleStatus): APIEmbedField {
  return {
    name: 'Linked Roles',
    value: linkedRole.releasedReason
      ? `⚠️ **${identityText(linkedRole.identity)}** no longer backs your Linked Roles: ${releasedText(linkedRole.releasedReason)}. Discord now holds that you are not likely human. Open the app's Linked Roles link to prove an identity of your own.`
      : linkedRole.stale
        ? `⚠️ Discord no longer accepts the connection to **${identityText(linkedRole.identity)}**, so its roles stop following your credentials. Open the app's Linked Roles link again (a role's requirements in the server, or your User Settings › Connections) to reconnect.`
        : `Connected as **${identityText(linkedRole.identity)}**; Discord gives roles from its credentials.`,
  };
}

function renderWhoamiReport(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
  extra: APIEmbedField[],
  signButtonId: SignButtonId | undefined,
): MessagePayload {
  if (report.links.length === 0) {
    return plain(
      embed(
        'No proven identity',
        'You have not linked a web3 identity in this server yet. Run `/verify identity:<name or address>` to start.',
        COLORS.neutral,
        [
          ...extra,
          ...(report.decisions.length > 0 || report.released.length > 0
            ? reportFields(report, names, ctx, { audience: 'member', buttons: new Set() })
            : []),
        ].slice(0, DISCORD_LIMITS.fields),
      ),
      ctx,
    );
  }
  const signable = signButtonId ? walletsOf(report).slice(0, DISCORD_LIMITS.buttonsPerRow) : [];
  const rows = signButtonId ? signButtonRows(signable, signButtonId) : [];
  const withButton = new Set(signable);
  const view: ReportView = { audience: 'member', buttons: withButton };
  const fields = [...extra, ...reportFields(report, names, ctx, view)].slice(0, DISCORD_LIMITS.fields);
  const count = report.links.length;
  const hint =
    withButton.size > 0
      ? `\nSome credentials count only once you sign with their wallet: ${withButton.size === 1 ? 'the button' : 'the buttons'} below start${withButton.size === 1 ? 's' : ''} it.`
      : '';
  return finishPayload(
    [
      embed(
        'Your web3 identities',
        `${formatNumber(count, ctx.locale)} proven ${count === 1 ? 'identity' : 'identities'} in this server.${hint}`,
        COLORS.info,
        fields,
      ),
    ],
    rows,
    { ...ctx, stale: undefined },
  );
}

/** `/gating check` and "Check web3 credentials": a member's proofs, credentials and roles wanted vs held. */
export function renderMemberReport(
  report: MemberReport,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const who = userLabel(report.userId, names);
  const changes = diffLines(report.diff, names);
  const summary =
    report.links.length === 0
      ? `${who} has no proven web3 identity in this server.`
      : `${who} has ${formatNumber(report.links.length, ctx.locale)} proven ${report.links.length === 1 ? 'identity' : 'identities'}.`;
  const pending =
    changes.length > 0
      ? `\n\n**A re-check would change:**\n${joinLinesWithin(changes, LIST_MAX)}`
      : '\n\nTheir roles match the rules.';
  return plain(
    embed(
      'Web3 credentials check',
      `${summary}${pending}`,
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
  const changes = diffLines(sync.applied, names);
  const waiting = sync.waiting.map((w) => `⏸️ ${roleLabel(w.roleId, names)}: ${reasonText(w.because)}`);
  const who = userLabel(userId, names);
  const lines = [
    changes.length === 0 && waiting.length === 0
      ? `Fresh credentials read for ${who}: their roles already match.`
      : `Fresh credentials read for ${who}.`,
    changes.length > 0 ? `Queued:\n${joinLinesWithin(changes, LIST_MAX * 2)}` : '',
    waiting.length > 0
      ? `Not removed yet: Web3.bio's answer did not show the loss for sure (a "not found" for an identity known before proves nothing alone). A later re-check confirms it:\n${joinLinesWithin(waiting, LIST_MAX)}`
      : '',
  ];
  return plain(
    embed(
      'Re-check done',
      lines.filter(Boolean).join('\n'),
      changes.length === 0 ? COLORS.neutral : COLORS.success,
    ),
    ctx,
  );
}
