import type { APIEmbed } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import {
  clampEmbed,
  clampMessage,
  cleanText,
  discordTime,
  embedLength,
  escapeLine,
  escapeText,
  inlineCode,
  maskedLink,
  safeUrl,
  truncate,
} from '../../src/render/safe.ts';
import type { MessagePayload } from '../../src/render/types.ts';
import { HOSTILE } from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

const GATEWAY = 'https://ipfs.io';

function payload(overrides: Partial<MessagePayload>): MessagePayload {
  return { embeds: [], components: [], allowed_mentions: { parse: [] }, ...overrides };
}

describe('escapeText', () => {
  it('escapes every markdown character', () => {
    expect(escapeText('*_~`|>#-[]()\\')).toBe('\\*\\_\\~\\`\\|\\>\\#\\-\\[\\]\\(\\)\\\\');
    expect(escapeText('**bold** __under__ ~~strike~~ ||spoiler||')).toBe(
      '\\*\\*bold\\*\\* \\_\\_under\\_\\_ \\~\\~strike\\~\\~ \\|\\|spoiler\\|\\|',
    );
  });
  it('escapes line-start list markers', () => {
    expect(escapeText('1. one\n+ two')).toBe('1\\. one\n\\+ two');
    expect(escapeText('version 1. ok')).toBe('version 1. ok');
  });
  it('leaves plain text alone', () => {
    expect(escapeText('vitalik.eth says hi!')).toBe('vitalik.eth says hi!');
  });
  it('neutralises @everyone, @here and id mentions', () => {
    const out = escapeText('@everyone @HERE <@123> <@!123> <@&456> <#789> </ban:1> <t:1:R>');
    expect(out).not.toMatch(/@everyone|@here/i);
    expect(out).not.toMatch(/<@!?\d|<@&|<#\d|<\/|<t:/);
    expect(out).toContain('@\u200beveryone');
    expect(out).toContain('<\u200b@123');
  });
  it('breaks masked links', () => {
    const out = escapeText('[click me](https://evil.example)');
    expect(out).not.toMatch(/(?<!\\)\]\(/);
    expect(out).toBe('\\[click me\\]\\(<https://evil.example/>\\)');
  });
  it('keeps URLs in prose clickable without corrupting them', () => {
    expect(escapeText('see https://my-site.example/a_b_(c). Bye')).toBe(
      'see <https://my-site.example/a_b_%28c%29>. Bye',
    );
    expect(escapeText('(https://x.example/p)')).toBe('\\(<https://x.example/p>\\)');
    expect(escapeText('https://x.example/@everyone')).toBe('<https://x.example/%40everyone>');
    expect(escapeText('https://t.co/abc\\n\\nAPIs')).toBe('<https://t.co/abc>\\\\n\\\\nAPIs');
    expect(escapeText('https://u:p@x.example/')).toBe('https://u:p@x.example/');
    expect(escapeText('https://x.example/](javascript:y)')).toBe('<https://x.example/%5D%28javascript:y%29>');
  });
  it('strips control and bidi characters and repairs lone surrogates', () => {
    expect(escapeText('a\u0000b\u0007c\u202Ed\u2066e\u200Ff\u200Bg')).toBe('abcdefg');
    expect(escapeText('x\ud800y')).toBe('x\ufffdy');
    expect(escapeText('a\r\nb\rc\td')).toBe('a\nb\nc d');
  });
  it('keeps emoji sequences intact', () => {
    expect(escapeText('👨‍👩‍👧 🇩🇪')).toBe('👨‍👩‍👧 🇩🇪');
  });
});

describe('escapeLine, cleanText, inlineCode, maskedLink', () => {
  it('escapeLine collapses whitespace', () => {
    expect(escapeLine('  a \n\n b\t_c_ ')).toBe('a b \\_c\\_');
  });
  it('cleanText strips but does not escape', () => {
    expect(cleanText('**a**\u202E')).toBe('**a**');
  });
  it('inlineCode wraps and drops backticks', () => {
    expect(inlineCode('0xabc')).toBe('`0xabc`');
    expect(inlineCode('x'.repeat(300), 10)).toBe('`xxxxxxx…`');
    expect(inlineCode('<#2> @here')).toBe('`<\u200b#2> @\u200bhere`');
    expect(inlineCode('0x`abc`')).toBe('`0xabc`');
    expect(inlineCode('``')).toBe('');
  });
  it('maskedLink escapes the text and only links safe URLs', () => {
    expect(maskedLink('a](b', 'https://x.example/')).toBe('[a\\]\\(b](https://x.example/)');
    expect(maskedLink('name', null)).toBe('name');
    expect(maskedLink('https://other.example', 'https://x.example/')).toBe('<https://x.example/>');
    expect(maskedLink('', 'https://x.example/')).toBe('<https://x.example/>');
  });
});

describe('safeUrl', () => {
  it('accepts http and https', () => {
    expect(safeUrl('https://vitalik.ca', GATEWAY)).toBe('https://vitalik.ca/');
    expect(safeUrl('http://example.com/a?b=c#d', GATEWAY)).toBe('http://example.com/a?b=c#d');
    expect(safeUrl('  HTTPS://Example.COM/x  ', GATEWAY)).toBe('https://example.com/x');
  });
  it('rejects other schemes and junk', () => {
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<script>',
      'vbscript:x',
      'file:///etc/passwd',
      'ftp://example.com',
      '//example.com',
      '/relative',
      'not a url',
      '',
      '   ',
      null,
      undefined,
    ]) {
      expect(safeUrl(bad, GATEWAY), String(bad)).toBeNull();
    }
  });
  it('rejects credentials, control and bidi characters', () => {
    expect(safeUrl('https://discord.com@evil.example/', GATEWAY)).toBeNull();
    expect(safeUrl('https://user:pw@example.com/', GATEWAY)).toBeNull();
    expect(safeUrl('https://example.com/\u202Egnp', GATEWAY)).toBeNull();
    expect(safeUrl('https://exa mple.com/', GATEWAY)).toBeNull();
    expect(safeUrl('https://example.com/\u0000', GATEWAY)).toBeNull();
  });
  it('rewrites ipfs and ipns through the gateway', () => {
    expect(safeUrl('ipfs://bafyCID/x.png', GATEWAY)).toBe('https://ipfs.io/ipfs/bafyCID/x.png');
    expect(safeUrl('ipns://k51abc', 'https://ipfs.io/')).toBe('https://ipfs.io/ipns/k51abc');
    expect(safeUrl('ipfs://ipfs/QmCID', GATEWAY)).toBe('https://ipfs.io/ipfs/QmCID');
    expect(safeUrl('IPFS://QmCID', 'https://gw.example/sub/')).toBe('https://gw.example/sub/ipfs/QmCID');
    expect(safeUrl('ipfs://QmCID', 'javascript:alert(1)')).toBeNull();
  });
  it('shows internationalised hosts as punycode', () => {
    expect(safeUrl('https://аррӏе.com/', GATEWAY)).toBe('https://xn--80ak6aa92e.com/');
  });
  it('percent-encodes brackets so the URL can sit in a markdown link', () => {
    expect(safeUrl('https://en.wikipedia.org/wiki/Foo_(bar)', GATEWAY)).toBe(
      'https://en.wikipedia.org/wiki/Foo_%28bar%29',
    );
    expect(safeUrl('http://[::1]:8080/x', GATEWAY)).toBe('http://[::1]:8080/x');
  });
  it('rejects URLs longer than 2048 characters', () => {
    expect(safeUrl(`https://example.com/${'a'.repeat(2020)}`, GATEWAY)).toHaveLength(2040);
    expect(safeUrl(`https://example.com/${'a'.repeat(2040)}`, GATEWAY)).toBeNull();
  });
});

describe('truncate', () => {
  it('leaves short strings alone', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('', 5)).toBe('');
  });
  it('cuts with an ellipsis inside the limit', () => {
    expect(truncate('abcdef', 4)).toBe('abc…');
    expect(truncate('abcdef', 1)).toBe('…');
    expect(truncate('abcdef', 0)).toBe('');
    expect(truncate('abcdef', -5)).toBe('');
    expect(truncate('abcdef', Number.NaN)).toBe('');
  });
  it('never splits a surrogate pair', () => {
    const out = truncate('ab😀cd', 4);
    expect(out).toBe('ab…');
    expect(out.isWellFormed()).toBe(true);
    for (let max = 1; max < 12; max++) {
      const cut = truncate('😀😀😀😀😀', max);
      expect(cut.isWellFormed()).toBe(true);
      expect(cut.length).toBeLessThanOrEqual(max);
    }
  });
});

describe('discordTime', () => {
  it('formats timestamp tags', () => {
    expect(discordTime(123, 'R')).toBe('<t:123:R>');
    expect(discordTime(123.9, 'F')).toBe('<t:123:F>');
    expect(discordTime(Number.NaN, 'R')).toBe('unknown');
  });
});

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
