import {
  type APIActionRowComponent,
  type APIEmbed,
  type APIEmbedField,
  type APISelectMenuOption,
  type APIStringSelectComponent,
  ComponentType,
} from 'discord-api-types/v10';
import { t } from '../i18n/index.ts';
import {
  cleanLine,
  DISCORD_LIMITS,
  discordTime,
  escapeLine,
  escapeText,
  inlineCode,
  maskedLink,
  safeUrl,
  truncate,
} from '../text/safety.ts';
import type { Profile, ProfileLink } from '../web3bio/types.ts';
import { formatNumber, joinLinesWithin } from './format.ts';
import { finishPayload } from './payload.ts';
import { COLORS, platformColor, platformName } from './style.ts';
import type { MessagePayload, RenderContext } from './types.ts';

const WEB3BIO_PROFILE_BASE = 'https://web3.bio/';
const DESCRIPTION_MAX = 2048;

/** Brand names stay as they are; `website` and `url` are translated. */
const LINK_NAMES: Record<string, string> = {
  github: 'GitHub',
  twitter: 'X',
  instagram: 'Instagram',
  farcaster: 'Farcaster',
  lens: 'Lens',
  discord: 'Discord',
  telegram: 'Telegram',
  youtube: 'YouTube',
  nostr: 'Nostr',
  linkedin: 'LinkedIn',
  reddit: 'Reddit',
  keybase: 'Keybase',
  bluesky: 'Bluesky',
};

/** The profile's page on web3.bio, where Farcaster names carry a `.farcaster` suffix. */
export function profilePageUrl(profile: Pick<Profile, 'identity' | 'platform'>): string | null {
  const identity = cleanLine(profile.identity);
  if (identity === '') return null;
  const name =
    profile.platform === 'farcaster' && !identity.endsWith('.farcaster') ? `${identity}.farcaster` : identity;
  return safeUrl(`${WEB3BIO_PROFILE_BASE}${encodeURIComponent(name)}`, '');
}

function linkName(key: string, locale: string): string {
  if (key === 'website' || key === 'url') return t(locale, 'whois.link.website');
  if (Object.hasOwn(LINK_NAMES, key)) return LINK_NAMES[key] ?? key;
  const name = cleanLine(key);
  return escapeLine(name.charAt(0).toUpperCase() + name.slice(1)) || t(locale, 'whois.link.other');
}

function linkLine(link: ProfileLink, ctx: RenderContext): string | null {
  const { ipfsGateway } = ctx;
  const url = safeUrl(link.link, ipfsGateway);
  const handle = cleanLine(link.handle ?? '');
  if (url === null && handle === '') return null;
  const text = handle || (url ? new URL(url).host : '');
  return `**${linkName(link.key, ctx.locale)}**: ${maskedLink(text, url)}`;
}

function socialFields(profile: Profile, locale: string): APIEmbedField[] {
  const fields: APIEmbedField[] = [];
  const { follower, following } = profile.social ?? {};
  if (typeof follower === 'number' && Number.isFinite(follower)) {
    fields.push({
      name: t(locale, 'whois.field.followers'),
      value: formatNumber(follower, locale),
      inline: true,
    });
  }
  if (typeof following === 'number' && Number.isFinite(following)) {
    fields.push({
      name: t(locale, 'whois.field.following'),
      value: formatNumber(following, locale),
      inline: true,
    });
  }
  return fields;
}

function textField(name: string, value: string | null, inline = true): APIEmbedField[] {
  const text = escapeText(value ?? '').trim();
  return text ? [{ name, value: truncate(text, DISCORD_LIMITS.fieldValue), inline }] : [];
}

function contenthashField(contenthash: string | null, ctx: RenderContext): APIEmbedField[] {
  const { ipfsGateway } = ctx;
  const hash = cleanLine(contenthash ?? '');
  if (hash === '') return [];
  const url = safeUrl(hash, ipfsGateway);
  const value = url ? maskedLink(truncate(hash, 60), url) : inlineCode(truncate(hash, 200));
  return value ? [{ name: t(ctx.locale, 'whois.field.content'), value, inline: false }] : [];
}

function profileEmbed(profile: Profile, ctx: RenderContext, index: number, count: number): APIEmbed {
  const { locale } = ctx;
  const platform = platformName(profile.platform);
  const address = inlineCode(profile.address ?? '');
  const links = profile.links
    .map((link) => linkLine(link, ctx))
    .filter((line): line is string => line !== null);
  const fields: APIEmbedField[] = [
    ...(address ? [{ name: t(locale, 'whois.field.address'), value: address, inline: false }] : []),
    ...textField(t(locale, 'whois.field.status'), profile.status),
    ...textField(t(locale, 'whois.field.location'), profile.location),
    ...textField(t(locale, 'whois.field.email'), profile.email),
    ...socialFields(profile, locale),
    ...(profile.createdAt !== null
      ? [{ name: t(locale, 'whois.field.created'), value: discordTime(profile.createdAt, 'R'), inline: true }]
      : []),
    ...contenthashField(profile.contenthash, ctx),
    ...(links.length > 0
      ? [
          {
            name: t(locale, 'whois.field.links'),
            value: joinLinesWithin(links, DISCORD_LIMITS.fieldValue, locale),
            inline: false,
          },
        ]
      : []),
  ];
  const avatar = safeUrl(profile.avatar, ctx.ipfsGateway);
  const header = safeUrl(profile.header, ctx.ipfsGateway);
  const page = profilePageUrl(profile);
  const description = truncate(escapeText(profile.description ?? '').trim(), DESCRIPTION_MAX);
  return {
    author: { name: `${platform} · ${cleanLine(profile.identity)}` },
    title:
      escapeLine(profile.displayName ?? '') || escapeLine(profile.identity) || t(locale, 'whois.unnamed'),
    ...(page ? { url: page } : {}),
    ...(description ? { description } : {}),
    color: platformColor(profile.platform),
    ...(avatar ? { thumbnail: { url: avatar } } : {}),
    ...(header ? { image: { url: header } } : {}),
    fields,
    footer: { text: count > 1 ? t(locale, 'whois.footer.paged', { index: index + 1, count }) : 'Web3.bio' },
  };
}

/** Indices shown in the select menu: the first 25, always including the selected one. */
function optionIndices(count: number, selected: number): number[] {
  const max = DISCORD_LIMITS.selectOptions;
  const first = Array.from({ length: Math.min(count, max) }, (_, i) => i);
  return selected < max ? first : [...first.slice(0, max - 1), selected];
}

function platformSelect(
  profiles: readonly Profile[],
  selected: number,
  customId: string,
  locale: string,
): APIActionRowComponent<APIStringSelectComponent> {
  const options: APISelectMenuOption[] = optionIndices(profiles.length, selected).map((i) => {
    const profile = profiles[i];
    const identity = cleanLine(profile?.identity ?? '');
    const displayName = cleanLine(profile?.displayName ?? '');
    const label = `${platformName(profile?.platform ?? '')}: ${identity}`;
    return {
      label: truncate(label, DISCORD_LIMITS.selectOptionLabel),
      value: String(i),
      ...(displayName && displayName !== identity
        ? { description: truncate(displayName, DISCORD_LIMITS.selectOptionDescription) }
        : {}),
      default: i === selected,
    };
  });
  return {
    type: ComponentType.ActionRow,
    components: [
      {
        type: ComponentType.StringSelect,
        custom_id: customId,
        placeholder: t(locale, 'whois.select.placeholder'),
        options,
      },
    ],
  };
}

function clampIndex(index: number, count: number): number {
  if (!Number.isInteger(index) || index < 0) return 0;
  return Math.min(index, count - 1);
}

/** The whois message: the selected profile as an embed, and a platform select when there are several. */
export function renderWhois(
  profiles: readonly Profile[],
  selected: number,
  ctx: RenderContext,
  selectCustomId: string,
): MessagePayload {
  const index = clampIndex(selected, profiles.length);
  const profile = profiles[index];
  if (!profile) {
    const embed = {
      title: t(ctx.locale, 'whois.empty.title'),
      description: t(ctx.locale, 'whois.empty.description'),
      color: COLORS.neutral,
    };
    return finishPayload([embed], [], ctx);
  }
  const components = profiles.length > 1 ? [platformSelect(profiles, index, selectCustomId, ctx.locale)] : [];
  return finishPayload([profileEmbed(profile, ctx, index, profiles.length)], components, ctx);
}
