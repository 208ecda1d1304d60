/**
 * Messages of the gating commands: pure (data in, payload out), every user-controlled string through
 * text/safety.ts, no pings. Roles, channels and members are shown by name (looked up by the caller), never as
 * mentions, so nothing here can ping and a deleted role still reads sensibly.
 */
import type { APIEmbed, APIEmbedField } from 'discord-api-types/v10';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { RoleProblem } from '../gating/hierarchy.ts';
import type { IdentityEvidence, RoleDecision, RoleDiff } from '../gating/rules.ts';
import type {
  GuildPreview,
  GuildStatus,
  MemberReport,
  MemberSync,
  PendingRemoval,
  RecheckResult,
  VerifyRefusal,
  VerifyResult,
} from '../gating/types.ts';
import type { GuildSettings, LinkRecord } from '../store/types.ts';
import {
  DISCORD_LIMITS,
  discordTime,
  escapeLine,
  escapeText,
  inlineCode,
  safeUrl,
  truncate,
} from '../text/safety.ts';
import { credentialVerdict } from '../web3bio/credentials.ts';
import { credentialCounts, verdictLine } from './credentials.ts';
import { fieldsWithin, formatNumber, joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { unboundLinksField } from './signing.ts';
import { COLORS, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Names the caller resolved from the guild (id -> name); ids missing here are shown as ids. */
export interface GuildNames {
  roles: ReadonlyMap<string, string>;
  channels: ReadonlyMap<string, string>;
  users: ReadonlyMap<string, string>;
}

export const NO_NAMES: GuildNames = { roles: new Map(), channels: new Map(), users: new Map() };

/** The promise every signing link repeats: the page asks for a signature and nothing else. */
export const SIGNING_PROMISE =
  'The page only asks your wallet for a signature: it never asks for a transaction, a payment or your seed phrase.';

const REASON_MAX = 300;
const IDENTITY_MAX = 100;
const NAME_MAX = 80;
const FIELDS_BUDGET = 5000;
const LIST_MAX = 1000;

function identityText(identity: string): string {
  return escapeLine(truncate(identity, IDENTITY_MAX)) || 'an identity';
}

function reasonText(reason: string): string {
  return escapeLine(truncate(reason, REASON_MAX));
}

/** A role by name in bold, or its id when the guild no longer has it. */
export function roleLabel(roleId: string, names: GuildNames): string {
  const name = names.roles.get(roleId);
  const shown = name === undefined ? '' : escapeLine(truncate(name.replace(/^@+/, ''), NAME_MAX));
  return shown ? `**${shown}**` : `a missing role ${inlineCode(roleId)}`;
}

function channelLabel(channelId: string, names: GuildNames): string {
  const name = names.channels.get(channelId);
  const shown = name === undefined ? '' : escapeLine(truncate(name, NAME_MAX));
  return shown ? `**#${shown}**` : `a missing channel ${inlineCode(channelId)}`;
}

/** A member by name, or by id when the name is not known. */
export function userLabel(userId: string, names: GuildNames): string {
  const name = names.users.get(userId);
  const shown = name === undefined ? '' : escapeLine(truncate(name, NAME_MAX));
  return shown ? `**${shown}**` : `member ${inlineCode(userId)}`;
}

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

function embed(title: string, description: string, color: number, fields: APIEmbedField[] = []): APIEmbed {
  return {
    title,
    description,
    color,
    ...(fields.length > 0 ? { fields: fieldsWithin(fields, DISCORD_LIMITS.fields, FIELDS_BUDGET) } : {}),
  };
}

function plain(e: APIEmbed, ctx: RenderContext): MessagePayload {
  return finishPayload([e], [], { ...ctx, stale: undefined });
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
): MessagePayload {
  if (removed === 0) {
    const what = identity
      ? `**${identityText(identity)}** is not linked to you here.`
      : 'You have no linked identity here.';
    return plain(embed('Nothing to unlink', what, COLORS.neutral), ctx);
  }
  const what = identity
    ? `**${identityText(identity)}** is no longer linked to you.`
    : `${formatNumber(removed, ctx.locale)} linked ${removed === 1 ? 'identity was' : 'identities were'} removed.`;
  return plain(
    embed('Unlinked', `${what}\nRoles that depended on it are updated in a moment.`, COLORS.success),
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

function linkField(
  link: LinkRecord,
  evidence: IdentityEvidence | undefined,
  ctx: RenderContext,
): APIEmbedField {
  const credentials = evidence ? evidence.credentials : link.lastResult;
  const lines = [proofText(link)];
  if (credentials) {
    lines.push(
      verdictLine(credentialVerdict(credentials, ctx.nowSec)),
      credentialCounts(credentials, ctx.nowSec),
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
  return {
    name: `${identityText(link.identity)} · ${escapeLine(platformName(link.platform))}`,
    value: lines.join('\n'),
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

function reportFields(report: MemberReport, names: GuildNames, ctx: RenderContext): APIEmbedField[] {
  return [
    ...report.links.map((link) => linkField(link, evidenceFor(report, link.identity), ctx)),
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

/** `/whoami`: my proven identities, and for each gated role why I have it or not. */
export function renderWhoami(report: MemberReport, names: GuildNames, ctx: RenderContext): MessagePayload {
  if (report.links.length === 0) {
    return plain(
      embed(
        'No proven identity',
        'You have not linked a web3 identity in this server yet. Run `/verify identity:<name or address>` to start.',
        COLORS.neutral,
        report.decisions.length > 0 || report.released.length > 0 ? reportFields(report, names, ctx) : [],
      ),
      ctx,
    );
  }
  const fields = reportFields(report, names, ctx);
  const count = report.links.length;
  return plain(
    embed(
      'Your web3 identities',
      `${formatNumber(count, ctx.locale)} proven ${count === 1 ? 'identity' : 'identities'} in this server.`,
      COLORS.info,
      fields,
    ),
    ctx,
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
    embed('Web3 credentials check', `${summary}${pending}`, COLORS.info, reportFields(report, names, ctx)),
    ctx,
  );
}

function problemLines(problems: RoleProblem[]): string[] {
  return problems.map((p) => `⚠️ ${escapeText(truncate(p.fix, REASON_MAX)).replace(/\n+/g, ' ')}`);
}

function rulesFields(settings: GuildSettings, names: GuildNames, ctx: RenderContext): APIEmbedField[] {
  const human =
    settings.minScore === null
      ? `${roleLabel(settings.humanRoleId, names)}: any unexpired isHuman credential that is true`
      : `${roleLabel(settings.humanRoleId, names)}: any unexpired isHuman credential that is true, or a score ≥ ${formatNumber(settings.minScore, ctx.locale)}`;
  const flags = [
    settings.spamRoleId ? `Spam: ${roleLabel(settings.spamRoleId, names)}` : 'Spam: no role',
    settings.riskyRoleId ? `Risky: ${roleLabel(settings.riskyRoleId, names)}` : 'Risky: no role',
    settings.spamRemovesHuman
      ? 'A spam flag takes the human role away.'
      : 'A spam flag does not affect the human role.',
  ];
  const log = settings.logChannelId ? channelLabel(settings.logChannelId, names) : 'none';
  const sync = settings.lastFullSyncAt === null ? 'never' : discordTime(settings.lastFullSyncAt / 1000, 'R');
  return [
    { name: 'Human role', value: human },
    { name: 'Flags', value: flags.join('\n') },
    { name: 'Log channel', value: log, inline: true },
    { name: 'Status', value: settings.enabled ? '🟢 on' : '⚪ off', inline: true },
    { name: 'Last full re-check', value: sync, inline: true },
  ];
}

/** `/gating setup`: saved (with the rules), or refused with every role problem and its fix. */
export function renderSetupResult(
  result: { settings: GuildSettings | null; problems: RoleProblem[] },
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  if (!result.settings) {
    const lines = problemLines(result.problems);
    const description = `Nothing was saved. Fix these and run \`/gating setup\` again:\n${joinLinesWithin(lines, LIST_MAX * 3)}`;
    return plain(embed('❌ Role gating not set up', description, COLORS.danger), ctx);
  }
  const warnings = problemLines(result.problems);
  const description = [
    'Role gating is on. Members link an identity with `/verify`; a full re-check of linked members has been queued.',
    warnings.length > 0 ? `\n${joinLinesWithin(warnings, LIST_MAX)}` : '',
  ].join('');
  return plain(
    embed('✅ Role gating set up', description, COLORS.success, rulesFields(result.settings, names, ctx)),
    ctx,
  );
}

/** `/gating rules`. */
export function renderRules(
  settings: GuildSettings | undefined,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  if (!settings) return renderNotSetUp(ctx);
  const description = settings.enabled
    ? 'Roles follow the credentials of each member’s proven web3 identities.'
    : 'Role gating is off in this server. Run `/gating setup` to turn it on again.';
  return plain(
    embed(
      'Role gating rules',
      description,
      settings.enabled ? COLORS.info : COLORS.neutral,
      rulesFields(settings, names, ctx),
    ),
    ctx,
  );
}

/** `/gating disable`. */
export function renderDisabled(changed: boolean, ctx: RenderContext): MessagePayload {
  return changed
    ? plain(
        embed(
          'Role gating turned off',
          'Roles are no longer added or removed, and links are kept. Roles already given stay as they are. Run `/gating setup` to turn it on again.',
          COLORS.neutral,
        ),
        ctx,
      )
    : plain(embed('Role gating was already off', 'Nothing changed.', COLORS.neutral), ctx);
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

export type GuildRecheckOutcome =
  | ({ kind: 'done' } & RecheckResult)
  | { kind: 'running'; linkedMembers: number };

/** `/gating recheck` for the whole server: the counts, or a note that it goes on in the background. */
export function renderGuildRecheck(outcome: GuildRecheckOutcome, ctx: RenderContext): MessagePayload {
  const n = (value: number) => formatNumber(value, ctx.locale);
  if (outcome.kind === 'running') {
    return plain(
      embed(
        'Re-check started',
        `Reading fresh credentials for ${n(outcome.linkedMembers)} linked members. This goes on in the background; role changes appear in the log channel, and \`/gating status\` shows the queue.`,
        COLORS.info,
      ),
      ctx,
    );
  }
  const lines = [
    `Checked ${n(outcome.members)} linked members with fresh credentials.`,
    `Role changes queued: ${n(outcome.changes)}`,
    outcome.unlinked > 0 ? `Links removed (record no longer names the member): ${n(outcome.unlinked)}` : '',
    outcome.failures > 0
      ? `Lookups failed for ${n(outcome.failures)} members: their roles were left as they are.`
      : '',
    outcome.pendingRemovals > 0
      ? `Removals waiting for a confirming answer (at least GATING_CONFIRM_MINUTES later): ${n(outcome.pendingRemovals)}`
      : '',
    outcome.heldRemovals > 0
      ? `🛑 Held back as a mass removal: ${n(outcome.heldRemovals)}. A later re-check that agrees applies them, or run \`/gating recheck confirm-removals:true\`.`
      : '',
  ];
  return plain(
    embed(
      'Re-check done',
      lines.filter(Boolean).join('\n'),
      outcome.failures > 0 ? COLORS.warning : COLORS.success,
    ),
    ctx,
  );
}

/** `/gating preview`: a dry run for the whole server. */
export function renderPreview(preview: GuildPreview, names: GuildNames, ctx: RenderContext): MessagePayload {
  const n = (value: number) => formatNumber(value, ctx.locale);
  const lines = [
    `Linked members: ${n(preview.members)}`,
    `Would add: ${n(preview.addCount)} · would remove: ${n(preview.removeCount)}`,
    preview.unknownCount > 0
      ? `Lookups failed for ${n(preview.unknownCount)}: their roles would stay as they are.`
      : '',
    'Nothing was changed.',
  ];
  const fields = preview.sample.slice(0, 10).map((entry): APIEmbedField => {
    const changes = [
      ...entry.add.map((roleId) => `➕ ${roleLabel(roleId, names)}`),
      ...entry.remove.map((roleId) => `➖ ${roleLabel(roleId, names)}`),
    ];
    const because = entry.because.slice(0, 3).map((b) => `↳ ${reasonText(b)}`);
    return {
      name: cleanName(names.users.get(entry.userId)) ?? `Member ${entry.userId}`,
      value: joinLinesWithin([...changes, ...because], DISCORD_LIMITS.fieldValue),
    };
  });
  const color = preview.addCount + preview.removeCount > 0 ? COLORS.warning : COLORS.neutral;
  return plain(embed('Preview (dry run)', lines.filter(Boolean).join('\n'), color, fields), ctx);
}

function cleanName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  return escapeLine(truncate(name, NAME_MAX)) || undefined;
}

/** `/gating status`: permissions, role problems, intents, last sync and the queue. */
export function renderStatus(status: GuildStatus, names: GuildNames, ctx: RenderContext): MessagePayload {
  const n = (value: number) => formatNumber(value, ctx.locale);
  const ok = (good: boolean, yes: string, no: string) => (good ? `✅ ${yes}` : `❌ ${no}`);
  const problems = problemLines(status.problems);
  const gatingState = !status.settings
    ? '⚪ not set up: run `/gating setup`'
    : status.enabled
      ? '🟢 on'
      : '⚪ off: run `/gating setup` to turn it on';
  const fields: APIEmbedField[] = [
    { name: 'Role gating', value: gatingState },
    {
      name: 'Bot permissions',
      value: ok(status.manageRoles, 'Manage Roles', 'Manage Roles is missing: grant it to the bot’s role'),
    },
    {
      name: 'Gateway intents',
      value: ok(
        status.guildMembersIntent,
        'Server Members (roles follow members who join)',
        'Server Members intent is off: enable it in the Developer Portal',
      ),
    },
    {
      name: 'Role hierarchy',
      value:
        problems.length > 0
          ? joinLinesWithin(problems, DISCORD_LIMITS.fieldValue)
          : '✅ every gated role can be managed',
    },
    {
      name: 'Last full re-check',
      value: status.lastFullSyncAt === null ? 'never' : discordTime(status.lastFullSyncAt / 1000, 'R'),
      inline: true,
    },
    { name: 'Role changes queued', value: n(status.queueLength), inline: true },
    { name: 'Linked members', value: n(status.linkedMembers), inline: true },
  ];
  if (status.blockedRoleIds.length > 0) {
    fields.push({
      name: 'Waiting on permissions',
      value: `⏳ Changes of ${status.blockedRoleIds.map((id) => roleLabel(id, names)).join(', ')} wait: Discord refused the bot. They go out by themselves once the role or the bot's permissions change.`,
    });
  }
  if (status.heldRemovals > 0) {
    fields.push({
      name: 'Held removals',
      value: `🛑 ${n(status.heldRemovals)} removals held back by the mass-removal breaker. Run \`/gating recheck confirm-removals:true\` if they are right.`,
    });
  }
  if (!status.signingLinksBound) fields.push(unboundLinksField());
  if (status.settings) fields.push(...rulesFields(status.settings, names, ctx).slice(0, 2));
  const healthy =
    status.signingLinksBound &&
    status.manageRoles &&
    status.guildMembersIntent &&
    status.problems.length === 0 &&
    status.blockedRoleIds.length === 0 &&
    status.heldRemovals === 0;
  return plain(
    embed(
      'Role gating status',
      healthy ? 'Everything the bot needs is in place.' : 'Some things need attention.',
      healthy ? COLORS.success : COLORS.warning,
      fields,
    ),
    ctx,
  );
}

/** A member without Manage Roles ran a moderator command. */
export function renderNeedsManageRoles(ctx: RenderContext): MessagePayload {
  return plain(
    embed(
      '🔒 Manage Roles needed',
      'Only members with the **Manage Roles** permission can use this. Nothing was changed.',
      COLORS.warning,
    ),
    ctx,
  );
}

/** A gating command outside a server. */
export function renderGuildOnly(ctx: RenderContext): MessagePayload {
  return plain(embed('Server only', 'Run this command in a server.', COLORS.neutral), ctx);
}

/** The deployment runs without the gating module. */
export function renderGatingUnavailable(ctx: RenderContext): MessagePayload {
  return plain(
    embed(
      'Role gating is not available',
      'This bot runs without role gating (GATING_ENABLED is off). Ask the bot’s operator.',
      COLORS.neutral,
    ),
    ctx,
  );
}

/** The server has not run `/gating setup`, or turned gating off. */
export function renderNotSetUp(ctx: RenderContext): MessagePayload {
  return plain(
    embed(
      'Role gating is off in this server',
      'A moderator with Manage Roles can turn it on with `/gating setup human-role:<role>`.',
      COLORS.neutral,
    ),
    ctx,
  );
}
