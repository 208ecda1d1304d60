import { describe, expect, it } from 'vitest';
import type { MessagePayload } from '../../src/render/types.ts';
import { assertWithinDiscordLimits } from './limits.ts';

function payload(overrides: Partial<MessagePayload>): MessagePayload {
  return { embeds: [{ title: 'ok' }], components: [], allowed_mentions: { parse: [] }, ...overrides };
}

const select = (options: number, extra: Record<string, unknown> = {}) => ({
  type: 1 as const,
  components: [
    {
      type: 3 as const,
      custom_id: 'sel',
      options: Array.from({ length: options }, (_, i) => ({ label: `o${i}`, value: `${i}` })),
      ...extra,
    },
  ],
});

describe('assertWithinDiscordLimits', () => {
  it('accepts a valid payload', () => {
    expect(() => assertWithinDiscordLimits(payload({ components: [select(3)] }))).not.toThrow();
  });

  it.each<[string, Partial<MessagePayload>]>([
    ['mentions allowed', { allowed_mentions: {} }],
    ['long content', { content: 'x'.repeat(2001) }],
    ['11 embeds', { embeds: Array.from({ length: 11 }, () => ({ title: 't' })) }],
    ['long title', { embeds: [{ title: 't'.repeat(257) }] }],
    ['long description', { embeds: [{ description: 'd'.repeat(4097) }] }],
    ['26 fields', { embeds: [{ fields: Array.from({ length: 26 }, () => ({ name: 'n', value: 'v' })) }] }],
    ['empty field value', { embeds: [{ fields: [{ name: 'n', value: '' }] }] }],
    ['long field value', { embeds: [{ fields: [{ name: 'n', value: 'v'.repeat(1025) }] }] }],
    ['long footer', { embeds: [{ footer: { text: 'f'.repeat(2049) } }] }],
    ['long author', { embeds: [{ author: { name: 'a'.repeat(257) } }] }],
    [
      'over 6000 in total',
      { embeds: [{ description: 'd'.repeat(4000) }, { description: 'd'.repeat(2001) }] },
    ],
    ['live @everyone', { embeds: [{ description: 'hi @everyone' }] }],
    ['live user mention', { embeds: [{ description: '<@123>' }] }],
    ['javascript masked link', { embeds: [{ description: '[x](javascript:alert(1))' }] }],
    ['bidi override', { embeds: [{ title: 'a\u202eb' }] }],
    ['lone surrogate', { embeds: [{ title: 'a\ud800' }] }],
    ['javascript image', { embeds: [{ image: { url: 'javascript:alert(1)' } }] }],
    ['bad colour', { embeds: [{ color: -1 }] }],
    ['6 rows', { components: Array.from({ length: 6 }, (_, i) => select(1, { custom_id: `s${i}` })) }],
    ['26 options', { components: [select(26)] }],
    [
      'two defaults',
      {
        components: [
          select(2, {
            options: [
              { label: 'a', value: 'a', default: true },
              { label: 'b', value: 'b', default: true },
            ],
          }),
        ],
      },
    ],
    ['long custom id', { components: [select(1, { custom_id: 'c'.repeat(101) })] }],
    ['long option label', { components: [select(1, { options: [{ label: 'l'.repeat(101), value: 'v' }] })] }],
  ])('rejects %s', (_name, overrides) => {
    expect(() => assertWithinDiscordLimits(payload(overrides))).toThrow();
  });

  it('rejects duplicate custom ids and long button labels', () => {
    const button = { type: 2 as const, style: 2 as const, label: 'b', custom_id: 'same' };
    expect(() =>
      assertWithinDiscordLimits(payload({ components: [{ type: 1, components: [button, button] }] })),
    ).toThrow();
    expect(() =>
      assertWithinDiscordLimits(
        payload({ components: [{ type: 1, components: [{ ...button, label: 'x'.repeat(81) }] }] }),
      ),
    ).toThrow();
  });
});
