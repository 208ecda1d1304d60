import { expect } from 'vitest';
import type { MessagePayload } from '../../src/render/types.ts';

// Discord's documented limits, written out here rather than imported so the test checks the code.
const COMPONENT_ACTION_ROW = 1;
const COMPONENT_BUTTON = 2;
const COMPONENT_STRING_SELECT = 3;

const UNSAFE_CHARS = /[^\P{Cc}\n]|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const LIVE_MENTION = /@everyone|@here|<@[!&]?\d+>|<#\d+>|<\/[^>\s]+:\d+>/i;
// An unescaped `](` whose target is not http(s): a masked link to javascript:, data: or a relative path.
const UNSAFE_MASKED_LINK = /(?<!\\)\]\((?!https?:\/\/)/;
// A masked link whose text part contains an unescaped `](`, i.e. a nested or broken-out link.
const NESTED_MASKED_LINK = /(?<!\\)\[[^\]]*(?<!\\)\[/;

const CODE_SPAN = /(?<!\\)`[^`\n]+`/g;
// A masked link `[text](https://host/...)`, and a host-like word in its text (not a web3 name like dwr.eth).
const MASKED_LINK = /(?<!\\)\[((?:\\.|[^\]\\])*)\]\((https?:\/\/[^)\s]+)\)/g;
const HOST_WORD = /(?:[\p{L}\p{N}-]+[.\u3002\uff0e\uff61])+(\p{L}{2,63})(?![\p{L}\p{N}-])/gu;
const WEB3_ENDINGS = new Set(['eth', 'lens', 'sol', 'bit', 'farcaster', 'crypto', 'nft', 'wallet', 'dao']);

/** Every masked link whose text names a host points at that host (`[paypal.com](evil.example)` fails). */
function expectHonestLinkText(markdown: string, what: string): void {
  for (const [, text = '', url = ''] of markdown.matchAll(MASKED_LINK)) {
    const shown = text.replace(/\\(.)/g, '$1');
    const target = new URL(url).hostname.replace(/^www\./, '');
    for (const [word, ending = ''] of shown.matchAll(HOST_WORD)) {
      if (WEB3_ENDINGS.has(ending.toLowerCase())) continue;
      const named = word.toLowerCase().replace(/[\u3002\uff0e\uff61]/g, '.');
      expect(named.replace(/^www\./, ''), `${what}: link text "${shown}" names its target's host`).toBe(
        target,
      );
    }
  }
}

function expectLength(value: string | undefined, max: number, what: string, min = 0): void {
  if (value === undefined) return;
  expect(value.length, `${what} length`).toBeLessThanOrEqual(max);
  expect(value.length, `${what} length`).toBeGreaterThanOrEqual(min);
}

function expectSafeUrl(url: string | undefined, what: string): void {
  if (url === undefined) return;
  expect(url.length, `${what} length`).toBeLessThanOrEqual(2048);
  expect(url, what).toMatch(/^https?:\/\/[^\s]+$/);
  expect(URL.canParse(url), `${what} parses`).toBe(true);
}

function expectSafeText(text: string | undefined, what: string, renderedAsMarkdown: boolean): void {
  if (text === undefined) return;
  expect(text.isWellFormed(), `${what} has no lone surrogates`).toBe(true);
  expect(text, `${what} has no control or bidi characters`).not.toMatch(UNSAFE_CHARS);
  if (!renderedAsMarkdown) return;
  // Discord shows code spans literally, so mentions and links inside them never render.
  const markdown = text.replace(CODE_SPAN, '');
  expect(markdown, `${what} has no live mention`).not.toMatch(LIVE_MENTION);
  expect(markdown, `${what} has no unsafe masked link`).not.toMatch(UNSAFE_MASKED_LINK);
  expect(markdown, `${what} has no nested masked link`).not.toMatch(NESTED_MASKED_LINK);
  expectHonestLinkText(markdown, what);
  expect(markdown.toLowerCase(), `${what} has no script URL`).not.toMatch(/\]\((javascript|data|vbscript):/);
}

function countEmbedChars(payload: MessagePayload): number {
  let total = 0;
  for (const embed of payload.embeds) {
    total += (embed.title?.length ?? 0) + (embed.description?.length ?? 0);
    total += (embed.footer?.text.length ?? 0) + (embed.author?.name.length ?? 0);
    for (const field of embed.fields ?? []) total += field.name.length + field.value.length;
  }
  return total;
}

function checkEmbeds(payload: MessagePayload): void {
  expect(payload.embeds.length, 'embeds').toBeLessThanOrEqual(10);
  payload.embeds.forEach((embed, i) => {
    const at = `embed ${i}`;
    expectLength(embed.title, 256, `${at} title`, 1);
    expectSafeText(embed.title, `${at} title`, true);
    expectLength(embed.description, 4096, `${at} description`, 1);
    expectSafeText(embed.description, `${at} description`, true);
    expect((embed.fields ?? []).length, `${at} fields`).toBeLessThanOrEqual(25);
    (embed.fields ?? []).forEach((field, j) => {
      expectLength(field.name, 256, `${at} field ${j} name`, 1);
      expectLength(field.value, 1024, `${at} field ${j} value`, 1);
      expectSafeText(field.name, `${at} field ${j} name`, true);
      expectSafeText(field.value, `${at} field ${j} value`, true);
    });
    if (embed.footer) {
      expectLength(embed.footer.text, 2048, `${at} footer`, 1);
      expectSafeText(embed.footer.text, `${at} footer`, false);
      expectSafeUrl(embed.footer.icon_url, `${at} footer icon`);
    }
    if (embed.author) {
      expectLength(embed.author.name, 256, `${at} author`, 1);
      expectSafeText(embed.author.name, `${at} author`, false);
      expectSafeUrl(embed.author.url, `${at} author url`);
      expectSafeUrl(embed.author.icon_url, `${at} author icon`);
    }
    expectSafeUrl(embed.url, `${at} url`);
    expectSafeUrl(embed.image?.url, `${at} image`);
    expectSafeUrl(embed.thumbnail?.url, `${at} thumbnail`);
    if (embed.color !== undefined) {
      expect(
        Number.isInteger(embed.color) && embed.color >= 0 && embed.color <= 0xffffff,
        `${at} colour`,
      ).toBe(true);
    }
  });
  expect(countEmbedChars(payload), 'characters across embeds').toBeLessThanOrEqual(6000);
}

function checkComponents(payload: MessagePayload): void {
  expect(payload.components.length, 'action rows').toBeLessThanOrEqual(5);
  const customIds: string[] = [];
  for (const row of payload.components) {
    expect(row.type).toBe(COMPONENT_ACTION_ROW);
    expect(row.components.length, 'components in a row').toBeGreaterThanOrEqual(1);
    expect(row.components.length, 'components in a row').toBeLessThanOrEqual(5);
    const selects = row.components.filter((c) => c.type !== COMPONENT_BUTTON);
    if (selects.length > 0) expect(row.components.length, 'a select fills its row').toBe(1);
    for (const component of row.components) {
      if ('custom_id' in component) {
        expectLength(component.custom_id, 100, 'custom_id', 1);
        customIds.push(component.custom_id);
      }
      if (component.type === COMPONENT_BUTTON && 'label' in component) {
        expectLength(component.label, 80, 'button label', 1);
        expectSafeText(component.label, 'button label', false);
      }
      if (component.type === COMPONENT_STRING_SELECT) {
        expect(component.options.length, 'select options').toBeGreaterThanOrEqual(1);
        expect(component.options.length, 'select options').toBeLessThanOrEqual(25);
        expectLength(component.placeholder, 150, 'placeholder');
        const values = component.options.map((o) => o.value);
        expect(new Set(values).size, 'option values are unique').toBe(values.length);
        if ((component.max_values ?? 1) <= 1) {
          expect(component.options.filter((o) => o.default).length, 'defaults').toBeLessThanOrEqual(1);
        }
        for (const option of component.options) {
          expectLength(option.label, 100, 'option label', 1);
          expectLength(option.value, 100, 'option value', 1);
          expectLength(option.description, 100, 'option description', 1);
          expectSafeText(option.label, 'option label', false);
          expectSafeText(option.description, 'option description', false);
        }
      }
    }
  }
  expect(new Set(customIds).size, 'custom ids are unique').toBe(customIds.length);
}

/** Assert every Discord message rule the renderers promise: limits, safe text, safe URLs, no mentions. */
export function assertWithinDiscordLimits(payload: MessagePayload): void {
  expect(payload.allowed_mentions).toEqual({ parse: [] });
  expectLength(payload.content, 2000, 'content');
  expectSafeText(payload.content, 'content', true);
  checkEmbeds(payload);
  checkComponents(payload);
  expect(() => JSON.stringify(payload)).not.toThrow();
}

/** Every string a person can see in the payload, for searching. */
export function visibleText(payload: MessagePayload): string {
  const parts: string[] = [payload.content ?? ''];
  for (const embed of payload.embeds) {
    parts.push(
      embed.title ?? '',
      embed.description ?? '',
      embed.footer?.text ?? '',
      embed.author?.name ?? '',
    );
    for (const field of embed.fields ?? []) parts.push(field.name, field.value);
  }
  for (const row of payload.components) {
    for (const component of row.components) {
      if ('label' in component && component.label) parts.push(component.label);
      if ('options' in component) {
        for (const option of component.options) parts.push(option.label, option.description ?? '');
      }
    }
  }
  return parts.join('\n');
}
