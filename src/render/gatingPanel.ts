/**
 * The verify panel: the message a server posts once for every member (Verify, Check my status), the
 * modal its Verify button opens, and what the admin who posts it is told. Pure: data in, payload out.
 */
import { ButtonStyle, ComponentType, TextInputStyle } from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import { truncate } from '../text/safety.ts';
import { channelLabel, embed, type GuildNames, plain } from './gatingLabels.ts';
import { finishPayload } from './payload.ts';
import { COLORS } from './style.ts';
import type { MessagePayload, ModalPayload, RenderContext } from './types.ts';

/** The permissions the bot needs in the panel's channel, in the order they are named. */
export type PanelPermission = 'viewChannel' | 'sendMessages' | 'embedLinks';

export type PanelPostResult =
  | { kind: 'posted' | 'updated'; channelId: string }
  /** The bot lacks these in the channel. */
  | { kind: 'missingPermissions'; channelId: string; missing: readonly PanelPermission[] }
  /** The member who asked could not post in the channel by hand: they lack these there. */
  | { kind: 'invokerCannotPost'; channelId: string; missing: readonly PanelPermission[] }
  | { kind: 'notPostable'; channelId: string };

/** The custom ids the panel's controls carry (built by the caller: render knows no routing). */
export interface PanelIds {
  verify: string;
  status: string;
}

/** Discord's limit on a modal's title and on a label (text input labels included). */
export const MODAL_LABEL_MAX = 45;
const PLACEHOLDER_MAX = 100;

/** The panel message, in the server's preferred locale. */
export function renderVerifyPanel(ids: PanelIds, ctx: RenderContext): MessagePayload {
  const { locale } = ctx;
  return finishPayload(
    [embed(t(locale, 'gating.panel.title'), t(locale, 'gating.panel.body'), COLORS.neutral)],
    [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.Button,
            style: ButtonStyle.Primary,
            label: t(locale, 'gating.panel.verifyButton'),
            custom_id: ids.verify,
          },
          {
            type: ComponentType.Button,
            style: ButtonStyle.Secondary,
            label: t(locale, 'gating.panel.statusButton'),
            custom_id: ids.status,
          },
        ],
      },
    ],
    { ...ctx, stale: undefined },
  );
}

/** The modal the Verify button opens: one identity input, as long as /verify's option allows. */
export function renderVerifyModal(
  ids: { modal: string; identity: string },
  maxLength: number,
  ctx: RenderContext,
): ModalPayload {
  return {
    custom_id: ids.modal,
    title: truncate(t(ctx.locale, 'gating.panel.modalTitle'), MODAL_LABEL_MAX),
    components: [
      {
        type: ComponentType.Label,
        label: truncate(t(ctx.locale, 'gating.panel.identityLabel'), MODAL_LABEL_MAX),
        component: {
          type: ComponentType.TextInput,
          custom_id: ids.identity,
          style: TextInputStyle.Short,
          min_length: 1,
          max_length: maxLength,
          required: true,
          placeholder: truncate(t(ctx.locale, 'gating.panel.identityPlaceholder'), PLACEHOLDER_MAX),
        },
      },
    ],
  };
}

/** What the admin who ran `/gating panel` is told, privately. */
export function renderPanelPost(
  result: PanelPostResult,
  names: GuildNames,
  ctx: RenderContext,
): MessagePayload {
  const { locale } = ctx;
  const channel = channelLabel(result.channelId, names, locale);
  switch (result.kind) {
    case 'posted':
    case 'updated':
      return plain(
        embed(
          t(locale, 'gating.panel.doneTitle'),
          t(locale, result.kind === 'posted' ? 'gating.panel.posted' : 'gating.panel.updated', { channel }),
          COLORS.success,
        ),
        ctx,
      );
    case 'missingPermissions':
    case 'invokerCannotPost': {
      const permissions = result.missing
        .map((p) => `**${t(locale, `gating.panel.permission.${p}`)}**`)
        .join(t(locale, 'gating.list.separator'));
      const key =
        result.kind === 'missingPermissions'
          ? 'gating.panel.missingPermissions'
          : 'gating.panel.invokerMissing';
      return plain(
        embed(
          t(locale, 'gating.panel.failedTitle'),
          t(locale, key, { channel, permissions }),
          COLORS.warning,
        ),
        ctx,
      );
    }
    default:
      return plain(
        embed(
          t(locale, 'gating.panel.failedTitle'),
          t(locale, 'gating.panel.notPostable', { channel }),
          COLORS.warning,
        ),
        ctx,
      );
  }
}
