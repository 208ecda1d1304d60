/**
 * The member's proofs across servers (issue #36): the "Use X here" choices, sharing, removal everywhere,
 * and the lines /whoami adds. Pure: data in, payload out. Shown only to the member whose proofs they are.
 */
import type { APIButtonComponent, APIEmbedField } from 'discord-api-types/v10';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { DISCORD_LIMITS, escapeLine, inlineCode, truncate } from '../text/safety.ts';
import { joinLinesWithin } from './format.ts';
import { embed, identityText, LIST_MAX, plain } from './gatingLabels.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** A proof as the member sees it: what they proved, and the key its button carries. */
export interface ProofChoice {
  identity: string;
  subject: string;
}

/** The custom ids of the choices' buttons. */
export interface ProofChoiceIds {
  use: (subject: string) => string;
  /** Opens the modal to prove an identity by name or address. */
  prove: string;
}

type ButtonRow = NonNullable<MessagePayload['components']>[number];

function buttonRows(buttons: APIButtonComponent[]): ButtonRow[] {
  const rows: ButtonRow[] = [];
  for (let i = 0; i < buttons.length; i += DISCORD_LIMITS.buttonsPerRow)
    rows.push({
      type: ComponentType.ActionRow,
      components: buttons.slice(i, i + DISCORD_LIMITS.buttonsPerRow),
    });
  return rows.slice(0, DISCORD_LIMITS.actionRows);
}

/**
 * `/verify` with no identity, and the panel's Verify button: the member's proofs as "Use X here" buttons
 * (one click links it in this server), and a button to prove another; with none, how to prove one.
 */
export function renderProofChoices(
  proofs: readonly ProofChoice[],
  ids: ProofChoiceIds,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const prove: APIButtonComponent = {
    type: ComponentType.Button,
    style: proofs.length > 0 ? ButtonStyle.Secondary : ButtonStyle.Primary,
    label: truncate(t(locale, 'gating.proofs.proveButton'), DISCORD_LIMITS.buttonLabel),
    custom_id: ids.prove,
  };
  if (proofs.length === 0)
    return finishPayload(
      [embed(t(locale, 'gating.proofs.noneTitle'), t(locale, 'gating.proofs.none'), COLORS.neutral)],
      buttonRows([prove]),
      { ...ctx, stale: undefined },
    );
  const room = DISCORD_LIMITS.buttonsPerRow * DISCORD_LIMITS.actionRows - 1;
  const uses = proofs.slice(0, room).map(
    (p): APIButtonComponent => ({
      type: ComponentType.Button,
      style: ButtonStyle.Primary,
      label: truncate(
        t(locale, 'gating.proofs.useButton', { identity: p.identity }),
        DISCORD_LIMITS.buttonLabel,
      ),
      custom_id: ids.use(p.subject),
    }),
  );
  const list = proofs.map((p) => `• ${identityText(p.identity, locale)}`);
  const description = `${t(locale, 'gating.proofs.pick')}\n\n${joinLinesWithin(list, LIST_MAX)}`;
  return finishPayload(
    [embed(t(locale, 'gating.proofs.title'), description, COLORS.info)],
    buttonRows([...uses, prove]),
    { ...ctx, stale: undefined },
  );
}

/** The button after a successful proof that turns sharing on. */
export function shareButtonRow(customId: string, ctx: RenderContext): ButtonRow[] {
  return buttonRows([
    {
      type: ComponentType.Button,
      style: ButtonStyle.Secondary,
      label: truncate(t(ctx.locale, 'gating.proofs.shareButton'), DISCORD_LIMITS.buttonLabel),
      custom_id: customId,
    },
  ]);
}

/** Sharing turned on (`servers`: servers the proofs were linked in now) or off. */
export function renderSharing(on: boolean, servers: number, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  return plain(
    embed(
      t(locale, on ? 'gating.proofs.sharedOnTitle' : 'gating.proofs.sharedOffTitle'),
      on ? t(locale, 'gating.proofs.sharedOn', { count: servers }) : t(locale, 'gating.proofs.sharedOff'),
      on ? COLORS.success : COLORS.neutral,
    ),
    ctx,
  );
}

/** A "Use X here" click for a proof that is no longer the member's. */
export function renderProofGone(ctx: RenderContext): MessagePayload {
  return plain(
    embed(t(ctx.locale, 'gating.proofs.noneTitle'), t(ctx.locale, 'gating.proofs.gone'), COLORS.warning),
    ctx,
  );
}

/** `/unverify … everywhere:true`: what went, from how many servers, and Linked Roles. */
export function renderUnverifiedEverywhere(
  removed: { proofs: number; links: number; servers: number },
  linkedRoleCleared: boolean,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const lines = [
    t(locale, 'gating.unverify.everywhere', { count: removed.servers }),
    ...(removed.links > 0 ? [t(locale, 'gating.unverify.rolesUpdate')] : []),
    ...(linkedRoleCleared ? [t(locale, 'gating.unverify.linkedRoleCleared')] : []),
    t(locale, 'gating.unverify.sharingOff'),
  ];
  const nothing = removed.proofs === 0 && removed.links === 0 && !linkedRoleCleared;
  return plain(
    embed(
      t(locale, nothing ? 'gating.unverify.nothingTitle' : 'gating.unverify.title'),
      nothing ? t(locale, 'gating.unverify.noLinks') : lines.join('\n'),
      nothing ? COLORS.neutral : COLORS.success,
    ),
    ctx,
  );
}

/** /whoami with the member's proofs across servers added to its first embed. */
export function withProofsField(
  payload: MessagePayload,
  proofs: readonly { proof: { identity: string }; servers: readonly string[] }[],
  shared: boolean,
  ctx: RenderContext,
): MessagePayload {
  const [first, ...rest] = payload.embeds ?? [];
  if (!first) return payload;
  const field = proofsField(
    proofs.map((p) => ({ identity: p.proof.identity, servers: p.servers })),
    shared,
    ctx,
  );
  const fields = [field, ...(first.fields ?? [])].slice(0, DISCORD_LIMITS.fields);
  return { ...payload, embeds: [{ ...first, fields }, ...rest] };
}

/** /whoami's field: each identity proven by the member's signature, with the servers it counts in. */
export function proofsField(
  proofs: readonly { identity: string; servers: readonly string[] }[],
  shared: boolean,
  ctx: RenderContext,
): APIEmbedField {
  const { locale } = ctx;
  const lines = proofs.map((p) =>
    p.servers.length === 0
      ? t(locale, 'gating.whoami.proofNowhere', { identity: inlineCode(p.identity) })
      : t(locale, 'gating.whoami.proofIn', {
          identity: inlineCode(p.identity),
          servers: p.servers.map((s) => `**${escapeLine(truncate(s, 60))}**`).join(', '),
        }),
  );
  const note = t(locale, shared ? 'gating.whoami.proofsShared' : 'gating.whoami.proofsNotShared');
  return {
    name: t(locale, 'gating.whoami.proofsField'),
    value: joinLinesWithin([...lines, note], 1000),
  };
}
