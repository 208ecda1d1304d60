/**
 * Gating messages about one member's own links: `/verify` (and why an identity was not linked),
 * `/unverify`, and the Linked Roles connection `/whoami` shows. Pure: data in, payload out.
 */
import type { APIEmbedField } from 'discord-api-types/v10';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import type { VerifyRefusal, VerifyResult } from '../gating/types.ts';
import { DEFAULT_LOCALE, t } from '../i18n/index.ts';
import { DISCORD_LIMITS, discordTime, inlineCode, safeUrl } from '../text/safety.ts';
import { releasedText } from '../web/pages/linkedRolePage.ts';
import { shareButtonRow } from './accountProofs.ts';
import { joinLinesWithin } from './format.ts';
import {
  blockedNote,
  diffLines,
  embed,
  type GuildNames,
  identityText,
  LIST_MAX,
  notBeforeText,
  plain,
  reasonText,
} from './gatingLabels.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** The member's Linked Roles connection; `releasedReason` when it no longer backs them (and why). */
export type LinkedRoleStatus = { identity: string; stale: boolean; releasedReason?: string | null };

/** The promise every signing link repeats: the page asks for a signature and nothing else. */
export const SIGNING_PROMISE = t(DEFAULT_LOCALE, 'gating.verify.signingPromise');

function linkButtonRow(label: string, url: string): MessagePayload['components'] {
  return [
    {
      type: ComponentType.ActionRow,
      components: [{ type: ComponentType.Button, style: ButtonStyle.Link, label, url }],
    },
  ];
}

/** Why an identity was not linked, for the member. */
export function refusalText(refusal: VerifyRefusal, locale: string = DEFAULT_LOCALE): string {
  switch (refusal.code) {
    case 'invalid_identity':
      return t(locale, 'gating.refusal.invalidIdentity', { reason: refusal.reason });
    case 'not_enabled':
      return t(locale, 'gating.refusal.notEnabled');
    case 'too_many_links':
      return t(locale, 'gating.refusal.tooManyLinks', { count: refusal.count, max: refusal.max });
    case 'lookup_failed':
      return t(locale, 'gating.refusal.lookupFailed', { identity: refusal.identity });
    case 'not_found':
      return t(locale, 'gating.refusal.notFound', { identity: refusal.identity });
    case 'no_address':
      return t(locale, 'gating.refusal.noAddress', {
        identity: refusal.identity,
        username: refusal.username,
      });
    case 'address_taken':
      return t(locale, 'gating.refusal.addressTaken', { address: refusal.address });
    case 'raced':
      return t(locale, 'gating.refusal.raced', { subject: refusal.subject });
    case 'fid_taken':
      return t(locale, 'gating.refusal.fidTaken', { subject: refusal.subject });
  }
}

/** `/verify`: linked by record, a signing link, or why not. */
export function renderVerifyResult(
  result: VerifyResult,
  identity: string,
  names: GuildNames,
  ctx: RenderContext,
  /** After a proof: the button that shares the member's proofs with every server (issue #36). */
  shareButtonId?: string,
): MessagePayload {
  const { locale } = ctx;
  if (result.kind === 'refused') {
    return plain(
      embed(
        t(locale, 'gating.verify.refusedTitle'),
        reasonText(refusalText(result.refusal, locale)) || t(locale, 'gating.verify.refusedFallback'),
        COLORS.warning,
      ),
      ctx,
    );
  }
  if (result.kind === 'linked') {
    const changes = diffLines(result.diff, names, locale);
    const changed = new Set([...result.diff.add, ...result.diff.remove].map((c) => c.roleId));
    const blocked = result.blockedRoleIds.filter((id) => changed.has(id));
    const header = t(
      locale,
      blocked.length > 0 ? 'gating.verify.changesQueued' : 'gating.verify.changesApplied',
    );
    const lines = [
      t(locale, result.brought ? 'gating.verify.brought' : 'gating.verify.linked', {
        identity: identityText(result.link.identity, locale),
      }),
      result.moved ? t(locale, 'gating.verify.moved') : '',
      changes.length > 0 ? `\n${header}\n${changes.join('\n')}` : '',
      blockedNote(blocked, names, locale),
      result.notBefore ? `\n${notBeforeText(result.notBefore, names, locale)}` : '',
      result.rolesLater ? `\n${t(locale, 'gating.verify.rolesLater')}` : '',
      changes.length === 0 && !result.notBefore && !result.rolesLater
        ? `\n${t(locale, 'gating.verify.rolesMatch')}`
        : '',
    ];
    return finishPayload(
      [
        embed(
          t(locale, 'gating.verify.linkedTitle'),
          joinLinesWithin(lines.filter(Boolean), LIST_MAX * 4),
          COLORS.success,
        ),
      ],
      shareButtonId ? shareButtonRow(shareButtonId, ctx) : [],
      { ...ctx, stale: undefined },
    );
  }
  if (result.kind === 'farcaster') return renderFarcasterOffer(result, identity, ctx);
  const url = safeUrl(result.url, ctx.ipfsGateway);
  const expiresSec = result.expiresAt / 1000;
  const description = [
    t(locale, 'gating.verify.sign.intro', {
      identity: identityText(identity, locale),
      address: inlineCode(result.address),
    }),
    t(locale, 'gating.verify.sign.open', { when: discordTime(expiresSec, 'R') }),
    '',
    `🔒 ${t(locale, 'gating.verify.signingPromise')}`,
    '',
    t(locale, 'gating.verify.sign.tip'),
    ...(result.farcasterUnconfigured ? ['', t(locale, 'gating.verify.sign.farcasterUnconfigured')] : []),
  ].join('\n');
  const components =
    url && url.length <= DISCORD_LIMITS.linkButtonUrl
      ? linkButtonRow(t(locale, 'gating.verify.sign.button'), url)
      : [];
  const link = url ? `<${url}>` : t(locale, 'gating.verify.sign.unavailable');
  const withUrl =
    components.length > 0
      ? description
      : `${description}\n\n${t(locale, 'gating.verify.sign.link', { link })}`;
  return finishPayload([embed(t(locale, 'gating.verify.sign.title'), withUrl, COLORS.info)], components, {
    ...ctx,
    stale: undefined,
  });
}

/** `/verify` of a Farcaster identity its record does not prove: "Sign in with Farcaster", and its page. */
function renderFarcasterOffer(
  result: Extract<VerifyResult, { kind: 'farcaster' }>,
  identity: string,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const url = safeUrl(result.url, ctx.ipfsGateway);
  const description = [
    t(locale, 'gating.verify.farcaster.intro', { identity: identityText(identity, locale), fid: result.fid }),
    t(locale, 'gating.verify.farcaster.open', { when: discordTime(result.expiresAt / 1000, 'R') }),
    '',
    `⚠️ ${t(locale, 'gating.verify.farcaster.warning')}`,
  ].join('\n');
  const components =
    url && url.length <= DISCORD_LIMITS.linkButtonUrl
      ? linkButtonRow(t(locale, 'gating.verify.farcaster.button'), url)
      : [];
  const withUrl =
    components.length > 0 || !url
      ? description
      : `${description}\n\n${t(locale, 'gating.verify.sign.link', { link: `<${url}>` })}`;
  return finishPayload(
    [embed(t(locale, 'gating.verify.farcaster.title'), withUrl, COLORS.info)],
    components,
    {
      ...ctx,
      stale: undefined,
    },
  );
}

/** `/unverify`: how many links were removed. */
export function renderUnverified(
  removed: number,
  identity: string | null,
  ctx: RenderContext,
  linkedRoleCleared = false,
): MessagePayload {
  const { locale } = ctx;
  const linked = linkedRoleCleared ? `\n${t(locale, 'gating.unverify.linkedRoleCleared')}` : '';
  if (removed === 0 && !linkedRoleCleared) {
    const what = identity
      ? t(locale, 'gating.unverify.notLinked', { identity: identityText(identity, locale) })
      : t(locale, 'gating.unverify.noLinks');
    return plain(embed(t(locale, 'gating.unverify.nothingTitle'), what, COLORS.neutral), ctx);
  }
  const what =
    removed === 0
      ? t(locale, 'gating.unverify.noLinksInServer')
      : identity
        ? t(locale, 'gating.unverify.removedOne', { identity: identityText(identity, locale) })
        : t(locale, 'gating.unverify.removedCount', { count: removed });
  const roles = removed > 0 ? `\n${t(locale, 'gating.unverify.rolesUpdate')}` : '';
  return plain(embed(t(locale, 'gating.unverify.title'), `${what}${roles}${linked}`, COLORS.success), ctx);
}

/** `/whoami` in a server without gating set up: only the member's Linked Roles connection. */
export function renderLinkedRoleStatus(linkedRole: LinkedRoleStatus, ctx: RenderContext): MessagePayload {
  return plain(
    embed(
      t(ctx.locale, 'gating.linkedRoles.title'),
      t(ctx.locale, 'gating.linkedRoles.notSetUp'),
      linkedRole.stale || linkedRole.releasedReason ? COLORS.warning : COLORS.info,
      [linkedRoleField(linkedRole, ctx.locale)],
    ),
    ctx,
  );
}

/** The member's Linked Roles connection as an embed field. */
export function linkedRoleField(linkedRole: LinkedRoleStatus, locale: string): APIEmbedField {
  const identity = identityText(linkedRole.identity, locale);
  return {
    name: t(locale, 'gating.linkedRoles.title'),
    value: linkedRole.releasedReason
      ? t(locale, 'gating.linkedRoles.released', {
          identity,
          reason: releasedText(linkedRole.releasedReason),
        })
      : linkedRole.stale
        ? t(locale, 'gating.linkedRoles.stale', { identity })
        : t(locale, 'gating.linkedRoles.connected', { identity }),
  };
}
