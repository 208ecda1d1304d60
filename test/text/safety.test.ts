import { describe, expect, it } from 'vitest';
import {
  cleanText,
  discordTime,
  escapeLine,
  escapeText,
  inlineCode,
  maskedLink,
  safeUrl,
  truncate,
} from '../../src/text/safety.ts';

const GATEWAY = 'https://ipfs.io';

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
  it('maskedLink text that names a host must be the link’s own host, else the real host shows', () => {
    expect(maskedLink('paypal.com/signin', 'https://evil.example/x')).toBe(
      '[evil.example](https://evil.example/x)',
    );
    expect(maskedLink('Log in at PayPal.com', 'https://evil.example/')).toBe(
      '[evil.example](https://evil.example/)',
    );
    expect(maskedLink('paypal\u3002com', 'https://evil.example/')).toBe(
      '[evil.example](https://evil.example/)',
    );
    // A look-alike label (Cyrillic а) for a look-alike host: the host shows as Discord's link does, punycode.
    expect(maskedLink('pаypal.com', 'https://xn--pypal-4ve.com/')).toBe(
      '[xn\\-\\-pypal\\-4ve.com](https://xn--pypal-4ve.com/)',
    );
    expect(maskedLink('pаypal.com', 'https://paypal.com/')).toBe('[paypal.com](https://paypal.com/)');
    expect(maskedLink('vitalik.ca', 'https://vitalik.ca/')).toBe('[vitalik.ca](https://vitalik.ca/)');
    expect(maskedLink('Vitalik.CA/blog', 'https://www.vitalik.ca/blog')).toBe(
      '[Vitalik.CA/blog](https://www.vitalik.ca/blog)',
    );
    expect(maskedLink('vitalik.eth', 'https://warpcast.com/vitalik.eth')).toBe(
      '[vitalik.eth](https://warpcast.com/vitalik.eth)',
    );
    expect(maskedLink('v1.5 notes', 'https://x.example/')).toBe('[v1.5 notes](https://x.example/)');
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
