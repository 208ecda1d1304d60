/**
 * Message clamping: bring a finished message within every Discord limit (embed texts, totals, components).
 */
import {
  type APIActionRowComponent,
  type APIButtonComponent,
  type APIComponentInMessageActionRow,
  type APIEmbed,
  type APIStringSelectComponent,
  ComponentType,
} from 'discord-api-types/v10';
import { DISCORD_LIMITS, EMPTY_FIELD, truncate } from '../text/safety.ts';
import type { MessagePayload } from './types.ts';

function clampUrl(url: string | undefined): string | undefined {
  return url !== undefined && url.length <= DISCORD_LIMITS.url ? url : undefined;
}

function withoutUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Enforce every per-embed limit: text lengths, 25 fields, non-empty field texts, URL lengths, colour range. */
export function clampEmbed(embed: APIEmbed): APIEmbed {
  const title = truncate(embed.title ?? '', DISCORD_LIMITS.title);
  const description = truncate(embed.description ?? '', DISCORD_LIMITS.description);
  const footerText = truncate(embed.footer?.text ?? '', DISCORD_LIMITS.footer);
  const authorName = truncate(embed.author?.name ?? '', DISCORD_LIMITS.author);
  const color = embed.color;
  const image = clampUrl(embed.image?.url);
  const thumbnail = clampUrl(embed.thumbnail?.url);
  return withoutUndefined({
    ...embed,
    title: title || undefined,
    description: description || undefined,
    url: clampUrl(embed.url),
    color:
      color !== undefined && Number.isInteger(color) && color >= 0 && color <= 0xffffff ? color : undefined,
    fields: embed.fields?.slice(0, DISCORD_LIMITS.fields).map((field) =>
      withoutUndefined({
        ...field,
        name: truncate(field.name, DISCORD_LIMITS.fieldName) || EMPTY_FIELD,
        value: truncate(field.value, DISCORD_LIMITS.fieldValue) || EMPTY_FIELD,
      }),
    ),
    footer:
      embed.footer && footerText
        ? withoutUndefined({ ...embed.footer, text: footerText, icon_url: clampUrl(embed.footer.icon_url) })
        : undefined,
    author:
      embed.author && authorName
        ? withoutUndefined({
            ...embed.author,
            name: authorName,
            url: clampUrl(embed.author.url),
            icon_url: clampUrl(embed.author.icon_url),
          })
        : undefined,
    image: embed.image && image ? { ...embed.image, url: image } : undefined,
    thumbnail: embed.thumbnail && thumbnail ? { ...embed.thumbnail, url: thumbnail } : undefined,
  });
}

/** The characters Discord counts towards the 6000 per-message embed total. */
export function embedLength(embed: APIEmbed): number {
  let total = (embed.title?.length ?? 0) + (embed.description?.length ?? 0);
  total += (embed.footer?.text.length ?? 0) + (embed.author?.name.length ?? 0);
  for (const field of embed.fields ?? []) total += field.name.length + field.value.length;
  return total;
}

function totalLength(embeds: APIEmbed[]): number {
  return embeds.reduce((sum, embed) => sum + embedLength(embed), 0);
}

type TextPart = 'description' | 'footer' | 'author' | 'title';

function shrinkPart(embed: APIEmbed, part: TextPart, excess: number): APIEmbed {
  const current =
    part === 'footer' ? embed.footer?.text : part === 'author' ? embed.author?.name : embed[part];
  if (!current) return embed;
  const next = truncate(current, Math.max(0, current.length - excess));
  const shrunk = { ...embed };
  if (part === 'footer') {
    if (next && embed.footer) shrunk.footer = { ...embed.footer, text: next };
    else delete shrunk.footer;
  } else if (part === 'author') {
    if (next && embed.author) shrunk.author = { ...embed.author, name: next };
    else delete shrunk.author;
  } else if (next) {
    shrunk[part] = next;
  } else {
    delete shrunk[part];
  }
  return shrunk;
}

/** Bring the embeds within the 6000-character total: drop trailing fields, then cut descriptions, then the rest. */
function fitTotal(input: APIEmbed[]): APIEmbed[] {
  const embeds = [...input];
  for (let i = embeds.length - 1; i >= 0 && totalLength(embeds) > DISCORD_LIMITS.embedTotal; i--) {
    const embed = embeds[i];
    if (!embed?.fields) continue;
    const fields = [...embed.fields];
    while (fields.length > 0 && totalLength(embeds) > DISCORD_LIMITS.embedTotal) {
      fields.pop();
      embeds[i] = { ...embed, fields };
    }
  }
  for (const part of ['description', 'footer', 'author', 'title'] as const) {
    for (let i = embeds.length - 1; i >= 0; i--) {
      const excess = totalLength(embeds) - DISCORD_LIMITS.embedTotal;
      const embed = embeds[i];
      if (excess <= 0) return embeds;
      if (embed) embeds[i] = shrinkPart(embed, part, excess);
    }
  }
  return embeds;
}

type MessageRow = APIActionRowComponent<APIComponentInMessageActionRow>;
type RowComponent = APIComponentInMessageActionRow;

function clampButton(button: APIButtonComponent): APIButtonComponent | null {
  if (!('label' in button)) return button;
  const label = truncate(button.label ?? '', DISCORD_LIMITS.buttonLabel);
  const labelled = withoutUndefined({ ...button, label: label || undefined });
  if ('url' in labelled) return labelled.url.length <= DISCORD_LIMITS.linkButtonUrl ? labelled : null;
  return { ...labelled, custom_id: truncate(labelled.custom_id, DISCORD_LIMITS.customId) };
}

function clampStringSelect(select: APIStringSelectComponent): APIStringSelectComponent | null {
  const allowsMany = (select.max_values ?? 1) > 1;
  let seenDefault = false;
  const options = select.options.slice(0, DISCORD_LIMITS.selectOptions).map((option) => {
    const isDefault = option.default === true && (allowsMany || !seenDefault);
    seenDefault ||= isDefault;
    const description = truncate(option.description ?? '', DISCORD_LIMITS.selectOptionDescription);
    return withoutUndefined({
      ...option,
      label: truncate(option.label, DISCORD_LIMITS.selectOptionLabel) || EMPTY_FIELD,
      value: truncate(option.value, DISCORD_LIMITS.selectOptionValue),
      description: description || undefined,
      default: isDefault || undefined,
    });
  });
  if (options.length === 0) return null;
  const placeholder = truncate(select.placeholder ?? '', DISCORD_LIMITS.selectPlaceholder);
  const fitCount = (n: number | undefined) => (n === undefined ? undefined : Math.min(n, options.length));
  return withoutUndefined({
    ...select,
    custom_id: truncate(select.custom_id, DISCORD_LIMITS.customId),
    options,
    placeholder: placeholder || undefined,
    min_values: fitCount(select.min_values),
    max_values: fitCount(select.max_values),
  });
}

function clampComponent(component: RowComponent): RowComponent | null {
  if (component.type === ComponentType.Button) return clampButton(component);
  if (component.type === ComponentType.StringSelect) return clampStringSelect(component);
  return { ...component, custom_id: truncate(component.custom_id, DISCORD_LIMITS.customId) };
}

function clampRow(row: MessageRow): MessageRow | null {
  const components = row.components.map(clampComponent).filter((c): c is RowComponent => c !== null);
  const select = components.find((c) => c.type !== ComponentType.Button);
  const kept = select ? [select] : components.slice(0, DISCORD_LIMITS.buttonsPerRow);
  return kept.length > 0 ? { ...row, components: kept } : null;
}

/**
 * Enforce every per-message limit: at most 10 embeds each within its limits, 6000 characters across them
 * (trailing fields go first, then descriptions), at most 5 action rows of valid components, content 2000.
 * Mentions are always disabled.
 */
export function clampMessage(p: MessagePayload): MessagePayload {
  const embeds = fitTotal(p.embeds.slice(0, DISCORD_LIMITS.embeds).map(clampEmbed));
  const components = p.components
    .map(clampRow)
    .filter((row): row is MessageRow => row !== null)
    .slice(0, DISCORD_LIMITS.actionRows);
  const content = truncate(p.content ?? '', DISCORD_LIMITS.content);
  return {
    ...(content ? { content } : {}),
    embeds,
    components,
    allowed_mentions: { parse: [] },
  };
}
