import { describe, expect, it } from 'vitest';
import { isReadable, statementIdentity, statementName } from '../../src/gating/proofs/statementText.ts';

describe('statementName', () => {
  it('keeps a name the grammar can carry exactly as it is', () => {
    expect(statementName("Bob's [Web3] Club #1: gm!", 100)).toEqual({
      text: "Bob's [Web3] Club #1: gm!",
      exact: true,
    });
  });

  it('folds compatibility letters and accents, makes quotes apostrophes and drops invisible characters', () => {
    expect(statementName('𝓒𝓻𝔂𝓹𝓽𝓸\u00a0Ｃｌｕｂ “Zoë” ali\u200dce\u202e\u0000', 100)).toEqual({
      text: "Crypto Club 'Zoe' alice",
      exact: false,
    });
  });

  it('writes one ? for a run the grammar cannot carry, spaces between two runs included', () => {
    expect(statementName('"Crypto" 🚀 سيرفر 服务器', 100).text).toBe("'Crypto' ?");
    expect(statementName('a 🚀 b % c', 100).text).toBe('a ? b ? c');
    expect(statementName('eve\nURI:\thttps://evil\u2028', 100).text).toBe('eve URI: https://evil');
  });

  it('bounds the text after folding, which can lengthen it', () => {
    const long = statementName('⒇'.repeat(100), 100);
    expect(long.text).toHaveLength(100);
    expect(long.text.endsWith('(...')).toBe(true);
    expect(statementName('x'.repeat(100), 100)).toEqual({ text: 'x'.repeat(100), exact: true });
    expect(statementName('x'.repeat(101), 100).text).toBe(`${'x'.repeat(97)}...`);
  });
});

describe('statementIdentity', () => {
  it('never folds an identity into another one: what the grammar lacks becomes ?', () => {
    expect(statementIdentity('vitalik.eth', 100)).toEqual({ text: 'vitalik.eth', exact: true });
    expect(statementIdentity('ünï.eth', 100)).toEqual({ text: '?n?.eth', exact: false });
    expect(statementIdentity('ｖｉｔａｌｉｋ.eth', 100).text).toBe('?.eth');
    expect(statementIdentity('vita\u200blik.eth', 100).text).toBe('vita?lik.eth');
  });
});

describe('isReadable', () => {
  it('needs a letter or digit', () => {
    expect(isReadable('? ?')).toBe(false);
    expect(isReadable("?'")).toBe(false);
    expect(isReadable('? a')).toBe(true);
  });
});
