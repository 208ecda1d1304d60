import type { APIEmbed } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { clampEmbed, clampMessage, embedLength } from '../../src/render/clamp.ts';
import type { MessagePayload } from '../../src/render/types.ts';
import { escapeLine, escapeText } from '../../src/text/safety.ts';
import { HOSTILE } from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

function payload(overrides: Partial<MessagePayload>): MessagePayload {
  return { embeds: [], components: [], allowed_mentions: { parse: [] }, ...overrides };
}

describe('clampEmbed', () => {
  it('enforces every text limit and 25 fields', () => {
    const embed = clampEmbed({
      title: 't'.repeat(300),
      description: 'd'.repeat(5000),
      fields: Array.from({ length: 30 }, () => ({ name: 'n'.repeat(300), value: 'v'.repeat(2000) })),
      footer: { text: 'f'.repeat(3000) },
      author: { name: 'a'.repeat(300) },
    });
    expect(embed.title).toHaveLength(256);
    expect(embed.description).toHaveLength(4096);
    expect(embed.fields).toHaveLength(25);
    expect(embed.fields?.[0]?.name).toHaveLength(256);
    expect(embed.fields?.[0]?.value).toHaveLength(1024);
    expect(embed.footer?.text).toHaveLength(2048);
    expect(embed.author?.name).toHaveLength(256);
    expect(embed.title?.endsWith('…')).toBe(true);
  });
  it('fills empty field texts and drops empty parts', () => {
    const embed = clampEmbed({
      title: '',
      description: '',
      fields: [{ name: '', value: '' }],
      footer: { text: '' },
      author: { name: '' },
      color: 0x1000000,
      url: `https://x.example/${'a'.repeat(3000)}`,
    });
    expect(embed).toEqual({ fields: [{ name: '\u200b', value: '\u200b' }] });
  });
});

describe('clampMessage', () => {
  it('keeps at most 10 embeds and forces allowed_mentions', () => {
    const out = clampMessage({
      embeds: Array.from({ length: 12 }, (_, i) => ({ title: `e${i}` })),
      components: [],
      allowed_mentions: { parse: ['everyone' as never] },
    });
    expect(out.embeds).toHaveLength(10);
    expect(out.allowed_mentions).toEqual({ parse: [] });
  });
  it('trims trailing fields first to fit 6000 characters', () => {
    const fields = Array.from({ length: 10 }, (_, i) => ({ name: `f${i}`, value: 'v'.repeat(1000) }));
    const out = clampMessage(payload({ embeds: [{ description: 'd'.repeat(2000), fields }] }));
    const embed = out.embeds[0] as APIEmbed;
    expect(embed.description).toHaveLength(2000);
    expect(embed.fields?.map((f) => f.name)).toEqual(['f0', 'f1', 'f2']);
    expect(embedLength(embed)).toBeLessThanOrEqual(6000);
    assertWithinDiscordLimits(out);
  });
  it('then cuts descriptions across several embeds', () => {
    const embeds = Array.from({ length: 3 }, () => ({ title: 'x', description: 'd'.repeat(4096) }));
    const out = clampMessage(payload({ embeds }));
    expect(out.embeds).toHaveLength(3);
    expect(out.embeds[0]?.description).toHaveLength(4096);
    expect(out.embeds.reduce((sum, e) => sum + embedLength(e), 0)).toBe(6000);
    assertWithinDiscordLimits(out);
  });
  it('fits even when titles and footers alone are too long', () => {
    const embeds = Array.from({ length: 10 }, () => ({
      title: 't'.repeat(256),
      footer: { text: 'f'.repeat(2048) },
      author: { name: 'a'.repeat(256) },
    }));
    assertWithinDiscordLimits(clampMessage(payload({ embeds })));
  });
  it('clamps components: rows, options, labels, custom ids, defaults', () => {
    const select = {
      type: 3 as const,
      custom_id: 's'.repeat(150),
      placeholder: 'p'.repeat(200),
      options: Array.from({ length: 30 }, (_, i) => ({
        label: `${i}`.repeat(150),
        value: `${i}`,
        description: 'd'.repeat(150),
        default: true,
      })),
    };
    const button = {
      type: 2 as const,
      style: 2 as const,
      label: 'b'.repeat(120),
      custom_id: 'c'.repeat(120),
    };
    const rows = Array.from({ length: 7 }, (_, i) =>
      i === 0
        ? { type: 1 as const, components: [select] }
        : {
            type: 1 as const,
            components: Array.from({ length: 7 }, (_, j) => ({ ...button, custom_id: `${i}-${j}` })),
          },
    );
    const out = clampMessage(payload({ components: rows }));
    expect(out.components).toHaveLength(5);
    const first = out.components[0]?.components[0];
    expect(first?.type).toBe(3);
    if (first?.type === 3) {
      expect(first.options).toHaveLength(25);
      expect(first.custom_id).toHaveLength(100);
      expect(first.options.filter((o) => o.default)).toHaveLength(1);
    }
    expect(out.components[1]?.components).toHaveLength(5);
    assertWithinDiscordLimits(out);
  });
  it('drops selects without options and empty rows, and truncates content', () => {
    const out = clampMessage(
      payload({
        content: 'c'.repeat(2500),
        components: [
          { type: 1, components: [{ type: 3, custom_id: 'x', options: [] }] },
          { type: 1, components: [] },
        ],
      }),
    );
    expect(out.components).toEqual([]);
    expect(out.content).toHaveLength(2000);
  });
  it('keeps hostile text safe when escaped', () => {
    const text = escapeText(HOSTILE);
    assertWithinDiscordLimits(
      clampMessage(payload({ content: text, embeds: [{ title: escapeLine(HOSTILE), description: text }] })),
    );
  });
});
