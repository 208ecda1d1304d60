/**
 * `/gating exempt add|remove|list`: what changed (or why nothing did) and the guild's exemptions, with
 * members and roles by name (escaped, never pinging). Pure.
 */
import type { ExemptionList, ExemptResult, ExemptTarget } from '../gating/exemptionGating.ts';
import type { ExemptRefusal } from '../gating/rules/exemptions.ts';
import { t } from '../i18n/index.ts';
import { DISCORD_LIMITS, discordTime } from '../text/safety.ts';
import { joinLinesWithin } from './format.ts';
import { embed, type GuildNames, plain, roleLabel, userLabel } from './gatingLabels.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

function targetText(target: ExemptTarget, names: GuildNames, locale: string): string {
  return target.kind === 'member'
    ? userLabel(target.targetId, names, locale)
    : roleLabel(target.targetId, names, locale);
}

/** Why an exemption was refused, naming the role in the way. */
export function exemptRefusalText(refusal: ExemptRefusal, names: GuildNames, locale: string): string {
  switch (refusal.code) {
    case 'everyone':
      return t(locale, 'gating.exempt.refusedEveryone');
    case 'gated_role_above':
      return t(locale, 'gating.exempt.refusedGatedRole', { role: roleLabel(refusal.roleId, names, locale) });
    case 'target_above':
      return t(locale, 'gating.exempt.refusedTargetRole', { role: roleLabel(refusal.roleId, names, locale) });
  }
}

/** The answer to `add` or `remove` (a `not_set_up` result is the caller's `renderNotSetUp`). */
export function renderExemptResult(
  result: Exclude<ExemptResult, { kind: 'not_set_up' }>,
  target: ExemptTarget,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  if (result.kind === 'refused') {
    return plain(
      embed(
        t(locale, 'gating.exempt.refusedTitle'),
        exemptRefusalText(result.refusal, names, locale),
        COLORS.warning,
      ),
      ctx,
    );
  }
  const what = targetText(target, names, locale);
  if (!result.changed) {
    const text =
      result.kind === 'added'
        ? t(locale, 'gating.exempt.already', {
            target: what,
            by: userLabel(result.exemption?.addedBy ?? '', names, locale),
          })
        : t(locale, 'gating.exempt.notExempt', { target: what });
    return plain(embed(t(locale, 'gating.exempt.unchangedTitle'), text, COLORS.neutral), ctx);
  }
  if (result.kind === 'removed') {
    return plain(
      embed(
        t(locale, 'gating.exempt.removedTitle'),
        t(locale, 'gating.exempt.removed', { target: what }),
        COLORS.success,
      ),
      ctx,
    );
  }
  const key = target.kind === 'member' ? 'gating.exempt.addedMember' : 'gating.exempt.addedRole';
  return plain(
    embed(t(locale, 'gating.exempt.addedTitle'), t(locale, key, { target: what }), COLORS.success),
    ctx,
  );
}

/** `add` or `remove` with neither a member nor a role, or with both. */
export function renderExemptNeedsTarget(ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  return plain(
    embed(t(locale, 'gating.exempt.refusedTitle'), t(locale, 'gating.exempt.needsTarget'), COLORS.warning),
    ctx,
  );
}

/** `list`: exempt members, then roles, each with who added it and when. */
export function renderExemptList(
  list: ExemptionList,
  guildNames: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const names: GuildNames = {
    ...guildNames,
    users: new Map([...guildNames.users, ...list.userNames]),
    usernames: new Map([...guildNames.usernames, ...list.usernames]),
  };
  if (list.exemptions.length === 0) {
    return plain(
      embed(t(locale, 'gating.exempt.listTitle'), t(locale, 'gating.exempt.listEmpty'), COLORS.neutral),
      ctx,
    );
  }
  const field = (
    kind: ExemptTarget['kind'],
    title: 'gating.exempt.membersTitle' | 'gating.exempt.rolesTitle',
  ) => {
    const lines = list.exemptions
      .filter((e) => e.kind === kind)
      .map((e) =>
        t(locale, 'gating.exempt.listLine', {
          target: targetText(e, names, locale),
          by: userLabel(e.addedBy, names, locale),
          when: discordTime(e.addedAt / 1000, 'R'),
        }),
      );
    return lines.length === 0
      ? []
      : [{ name: t(locale, title), value: joinLinesWithin(lines, DISCORD_LIMITS.fieldValue) }];
  };
  return plain(
    embed(t(locale, 'gating.exempt.listTitle'), t(locale, 'gating.exempt.listIntro'), COLORS.info, [
      ...field('member', 'gating.exempt.membersTitle'),
      ...field('role', 'gating.exempt.rolesTitle'),
    ]),
    ctx,
  );
}
