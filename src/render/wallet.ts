import {
  type APIActionRowComponent,
  type APIButtonComponentWithCustomId,
  type APIEmbed,
  type APIEmbedField,
  ButtonStyle,
  ComponentType,
} from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import {
  cleanLine,
  DISCORD_LIMITS,
  escapeLine,
  escapeText,
  inlineCode,
  safeUrl,
  truncate,
} from '../text/safety.ts';
import { credentialVerdict } from '../web3bio/credentials.ts';
import type { WalletBundle, WalletEntry, WalletGraphEntry } from '../web3bio/types.ts';
import { credentialCounts, verdictColor, verdictLine } from './credentials.ts';
import { fieldsWithin, joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { platformColor, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

/** Identity graph entries per page of the wallet message. */
export const WALLET_GRAPH_PAGE_SIZE = 8;

const DESCRIPTION_MAX = 1000;
/** What the graph embed may use of the 6000-character message total once the wallet embed is in. */
const GRAPH_FIELDS_BUDGET = 2500;

function entryTitle(entry: WalletEntry): string {
  return `**${escapeLine(platformName(entry.platform))}** ${escapeLine(truncate(entry.identity, 120))}`;
}

function domainLine(domain: WalletEntry, locale: string): string {
  return domain.isPrimary
    ? t(locale, 'wallet.primaryDomain', { domain: entryTitle(domain) })
    : entryTitle(domain);
}

function graphField(entry: WalletGraphEntry, locale: string): APIEmbedField {
  const displayName = cleanLine(entry.displayName ?? '');
  const address =
    entry.address && entry.address !== entry.identity ? inlineCode(truncate(entry.address, 120)) : '';
  const sources = entry.sources.map((s) => escapeLine(truncate(s, 40))).filter(Boolean);
  const lines = [
    displayName && displayName !== cleanLine(entry.identity) ? escapeLine(truncate(displayName, 100)) : '',
    address,
    sources.length > 0 ? t(locale, 'wallet.via', { sources: sources.slice(0, 5).join(', ') }) : '',
  ];
  return {
    name: `${escapeLine(platformName(entry.platform))} · ${escapeLine(truncate(entry.identity, 150))}${entry.isPrimary ? ' ⭐' : ''}`,
    value: lines.filter(Boolean).join('\n') || '\u200b',
    inline: false,
  };
}

function pageCount(entries: number): number {
  return Math.max(1, Math.ceil(entries / WALLET_GRAPH_PAGE_SIZE));
}

function clampPage(page: number, pages: number): number {
  if (!Number.isFinite(page)) return 0;
  return Math.min(Math.max(Math.trunc(page), 0), pages - 1);
}

function walletEmbed(bundle: WalletBundle, ctx: RenderContext): APIEmbed {
  const address = inlineCode(truncate(bundle.address ?? '', 200));
  const verdict = credentialVerdict(bundle.credential, ctx.nowSec);
  const avatar = safeUrl(bundle.avatar, ctx.ipfsGateway);
  const description = truncate(escapeText(bundle.description ?? '').trim(), DESCRIPTION_MAX);
  const { locale } = ctx;
  const domainLines = bundle.domains.map((domain) => domainLine(domain, locale));
  const fields: APIEmbedField[] = [
    ...(address ? [{ name: t(locale, 'wallet.field.address'), value: address, inline: false }] : []),
    ...(domainLines.length > 0
      ? [
          {
            name: t(locale, 'wallet.field.domains'),
            value: joinLinesWithin(domainLines, DISCORD_LIMITS.fieldValue, locale),
            inline: false,
          },
        ]
      : []),
    {
      name: t(locale, 'wallet.field.credentials'),
      value: `${verdictLine(verdict, locale)}\n${credentialCounts(bundle.credential, ctx.nowSec, locale)}`,
      inline: false,
    },
  ];
  return {
    author: { name: `${platformName(bundle.platform)} · ${cleanLine(bundle.identity)}` },
    title:
      escapeLine(bundle.displayName ?? '') || escapeLine(bundle.identity) || t(locale, 'wallet.untitled'),
    ...(description ? { description } : {}),
    color: verdict === 'none' ? platformColor(bundle.platform) : verdictColor(verdict),
    ...(avatar ? { thumbnail: { url: avatar } } : {}),
    fields,
  };
}

function graphEmbed(bundle: WalletBundle, page: number, pages: number, ctx: RenderContext): APIEmbed {
  const total = bundle.identityGraph.length;
  const start = page * WALLET_GRAPH_PAGE_SIZE;
  const entries = bundle.identityGraph.slice(start, start + WALLET_GRAPH_PAGE_SIZE);
  const { locale } = ctx;
  return {
    title: t(locale, 'wallet.graph.title'),
    description:
      total === 0
        ? t(locale, 'wallet.graph.empty')
        : t(locale, 'wallet.graph.summary', { count: total, page: page + 1, pages }),
    color: platformColor(bundle.platform),
    fields: fieldsWithin(
      entries.map((entry) => graphField(entry, locale)),
      DISCORD_LIMITS.fields,
      GRAPH_FIELDS_BUDGET,
      locale,
    ),
    footer: { text: t(locale, 'wallet.graph.footer') },
  };
}

function pageButtons(
  page: number,
  pages: number,
  pageCustomId: (page: number) => string,
  locale: string,
): APIActionRowComponent<APIButtonComponentWithCustomId> {
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.Button,
        style: ButtonStyle.Secondary,
        label: t(locale, 'wallet.previous'),
        custom_id: pageCustomId(page - 1),
        disabled: page <= 0,
      },
      {
        type: ComponentType.Button,
        style: ButtonStyle.Secondary,
        label: t(locale, 'wallet.next'),
        custom_id: pageCustomId(page + 1),
        disabled: page >= pages - 1,
      },
    ],
  };
}

/** The wallet message: identity, domains and credential summary, then one page of the identity graph. */
export function renderWallet(
  bundle: WalletBundle,
  page: number,
  ctx: RenderContext,
  pageCustomId: (page: number) => string,
): MessagePayload {
  const pages = pageCount(bundle.identityGraph.length);
  const current = clampPage(page, pages);
  const components = pages > 1 ? [pageButtons(current, pages, pageCustomId, ctx.locale)] : [];
  return finishPayload([walletEmbed(bundle, ctx), graphEmbed(bundle, current, pages, ctx)], components, ctx);
}
