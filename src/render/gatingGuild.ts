/**
 * Gating messages about a server: `/gating setup`, rules, disable, status, preview and whole-server
 * re-check, and the notices when a gating command can't run. Pure: data in, payload out.
 */
import type { APIEmbedField } from 'discord-api-types/v10';
import type { RoleProblem } from '../gating/roles/hierarchy.ts';
import type { GuildPreview, GuildStatus, RecheckResult } from '../gating/types.ts';
import type { GuildSettings } from '../store/types.ts';
import { DISCORD_LIMITS, discordTime, escapeLine, escapeText, truncate } from '../text/safety.ts';
import { formatNumber, joinLinesWithin } from './format.ts';
import {
  channelLabel,
  embed,
  type GuildNames,
  LIST_MAX,
  NAME_MAX,
  plain,
  REASON_MAX,
  reasonText,
  roleLabel,
} from './gatingLabels.ts';
import { roleProblemText } from './gatingNotices.ts';
import { unboundLinksField } from './signing.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

function problemLines(problems: RoleProblem[]): string[] {
  return problems.map(
    (p) => `⚠️ ${escapeText(truncate(roleProblemText(p), REASON_MAX)).replace(/\n+/g, ' ')}`,
  );
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
  if (outcome.elsewhere) {
    return plain(
      embed(
        'Re-check already running',
        'Another process of this bot is re-checking this server right now. Its changes appear in the log channel; run `/gating status` to follow the queue.',
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
      name:
        cleanName(names.users.get(entry.userId) ?? entry.username ?? undefined) ?? `Member ${entry.userId}`,
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
  return plain(
    embed('Server only', 'Run this command in a server that has added the bot.', COLORS.neutral),
    ctx,
  );
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
