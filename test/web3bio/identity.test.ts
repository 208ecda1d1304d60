import { ens_normalize } from '@adraffy/ens-normalize';
import { describe, expect, it } from 'vitest';
import { InvalidIdentityError } from '../../src/web3bio/errors.ts';
import {
  ACCEPTED_FORMS,
  encodeSegment,
  MAX_IDENTITY_LENGTH,
  PARSE_MEMO_MAX,
  parseBatchId,
  parseIdentity,
  parseMemoSize,
} from '../../src/web3bio/identity.ts';
import { friendlyEnsReason, isPlainValidName } from '../../src/web3bio/normaliseEns.ts';
import type { PlatformSegment } from '../../src/web3bio/types.ts';

const VITALIK = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
const SOLANA = 'HKKp49qGWXd639QsuH7JiLijfVW5UtCVY4s1n2HANwEA';

function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidIdentityError);
    return (error as InvalidIdentityError).reason;
  }
  throw new Error('expected InvalidIdentityError');
}

describe('parseIdentity (universal)', () => {
  it.each([
    ['vitalik.eth', 'vitalik.eth', 'ens', 'ens'],
    ['Vitalik.ETH', 'vitalik.eth', 'ens', 'ens'],
    ['  vitalik.eth  ', 'vitalik.eth', 'ens', 'ens'],
    ['ｖｉｔａｌｉｋ.eth', 'vitalik.eth', 'ens', 'ens'],
    ['dwr.eth', 'dwr.eth', 'ens', 'ens'],
    ['web3.bio', 'web3.bio', 'ens', 'ens'],
    ['0xhelena.eth', '0xhelena.eth', 'ens', 'ens'],
    ['🚀🚀🚀.eth', '🚀🚀🚀.eth', 'ens', 'ens'],
    ['stani.lens', 'stani.lens', 'lens', 'lens'],
    ['Some_Handle.lens', 'some_handle.lens', 'lens', 'lens'],
    ['tony.base.eth', 'tony.base.eth', 'basenames', 'basenames'],
    ['tony.base', 'tony.base.eth', 'basenames', 'basenames'],
    ['name.linea.eth', 'name.linea.eth', 'linea', 'linea'],
    ['name.linea', 'name.linea.eth', 'linea', 'linea'],
    ['bonfida.sol', 'bonfida.sol', 'sns', 'sns'],
    ['sandy.nft', 'sandy.nft', 'unstoppabledomains', 'unstoppabledomains'],
    ['brad.crypto', 'brad.crypto', 'unstoppabledomains', 'unstoppabledomains'],
    ['name.bit', 'name.bit', 'dotbit', 'dotbit'],
    [VITALIK, VITALIK.toLowerCase(), 'evm-address', 'ethereum'],
    [VITALIK.toUpperCase().replace('0X', '0x'), VITALIK.toLowerCase(), 'evm-address', 'ethereum'],
    [SOLANA, SOLANA, 'solana-address', 'solana'],
    ['dwr', 'dwr.farcaster', 'farcaster', 'farcaster'],
    ['DWR', 'dwr.farcaster', 'farcaster', 'farcaster'],
    ['dwr.farcaster', 'dwr.farcaster', 'farcaster', 'farcaster'],
    ['dwr.fcast.id', 'dwr.farcaster', 'farcaster', 'farcaster'],
    ['farcaster,#3', 'farcaster,#3', 'farcaster-fid', 'farcaster'],
    ['fid:3', 'farcaster,#3', 'farcaster-fid', 'farcaster'],
    ['FID:0003', 'farcaster,#3', 'farcaster-fid', 'farcaster'],
  ])('%s -> %s (%s)', (input, identity, kind, platform) => {
    expect(parseIdentity(input)).toEqual({ input, identity, kind, platform });
  });

  it('reads @name as a handle, as the message menu does: @dwr is the Farcaster username dwr', () => {
    expect(parseIdentity('@dwr')).toEqual({
      input: '@dwr',
      identity: 'dwr.farcaster',
      kind: 'farcaster',
      platform: 'farcaster',
    });
    expect(parseIdentity('@DWR').identity).toBe('dwr.farcaster');
    expect(parseIdentity(' @vitalik.eth ').identity).toBe('vitalik.eth');
    expect(parseIdentity('@stani', 'lens').identity).toBe('stani.lens');
    expect(parseBatchId('farcaster,@dwr').id).toBe('farcaster,dwr');
    // Discord's mass mentions and a doubled mark are no handles.
    for (const input of ['@everyone', '@here', '@@dwr', '@']) {
      expect(() => parseIdentity(input)).toThrow(InvalidIdentityError);
    }
  });

  it('gives Vitalik.ETH and vitalik.eth the same identity', () => {
    expect(parseIdentity('Vitalik.ETH').identity).toBe(parseIdentity('vitalik.eth').identity);
  });
});

describe('parseIdentity (platform routes)', () => {
  it.each<[string, PlatformSegment, string, string]>([
    ['vitalik.eth', 'ens', 'vitalik.eth', 'ens'],
    ['vitalik', 'ens', 'vitalik.eth', 'ens'],
    [VITALIK, 'ens', VITALIK.toLowerCase(), 'ens'],
    ['tony.base.eth', 'ens', 'tony.base.eth', 'ens'],
    ['dwr', 'farcaster', 'dwr', 'farcaster'],
    ['dwr.eth', 'farcaster', 'dwr.eth', 'farcaster'],
    ['dwr.farcaster', 'farcaster', 'dwr', 'farcaster'],
    ['farcaster,#3', 'farcaster', 'farcaster,#3', 'farcaster'],
    ['fid:3', 'farcaster', 'farcaster,#3', 'farcaster'],
    [SOLANA, 'farcaster', SOLANA, 'farcaster'],
    ['stani.lens', 'lens', 'stani.lens', 'lens'],
    ['stani', 'lens', 'stani.lens', 'lens'],
    ['tony', 'basenames', 'tony.base.eth', 'basenames'],
    ['tony.base', 'basenames', 'tony.base.eth', 'basenames'],
    ['name.linea', 'linea', 'name.linea.eth', 'linea'],
    ['bonfida.sol', 'solana', 'bonfida.sol', 'sns'],
    ['bonfida', 'solana', 'bonfida.sol', 'sns'],
    [SOLANA, 'solana', SOLANA, 'sns'],
    ['sandy.nft', 'unstoppabledomains', 'sandy.nft', 'unstoppabledomains'],
    ['name.bit', 'dotbit', 'name.bit', 'dotbit'],
  ])('%s on %s -> %s', (input, segment, identity, platform) => {
    const parsed = parseIdentity(input, segment);
    expect(parsed.identity).toBe(identity);
    expect(parsed.platform).toBe(platform);
  });

  it.each<[string, PlatformSegment]>([
    ['vitalik.eth', 'lens'],
    ['dwr.farcaster', 'ens'],
    [SOLANA, 'ens'],
    [VITALIK, 'solana'],
    ['stani.lens', 'basenames'],
    ['farcaster,#3', 'ens'],
  ])('rejects %s on %s, naming what the route takes', (input, segment) => {
    expect(reasonOf(() => parseIdentity(input, segment))).toContain(`the ${segment} lookup takes`);
  });
});

describe('parseIdentity rejects hostile input before any request', () => {
  it.each([
    ['', 'it is empty'],
    ['   ', 'it is empty'],
    ['a'.repeat(10_000), `longer than ${MAX_IDENTITY_LENGTH}`],
    [`${'a'.repeat(MAX_IDENTITY_LENGTH)}.eth`, 'longer than'],
    ['../../x', 'never use'],
    ['..', 'two dots'],
    ['a..eth', 'two dots'],
    ['%2F', 'never use'],
    ['vitalik%2Eeth', 'never use'],
    ['?a=1#b', 'never use'],
    ['a/b.eth', 'never use'],
    ['a\\b.eth', 'never use'],
    ['#3', 'never use'],
    ['\u202Evitalik.eth', 'text-direction'],
    ['vitalik\u2066.eth', 'text-direction'],
    ['vita\u0000lik.eth', 'control characters'],
  ])('%#: %s', (input, fragment) => {
    expect(reasonOf(() => parseIdentity(input))).toContain(fragment);
  });

  it.each([
    ['vita lik.eth', 'spaces'],
    ['vitalik\u00a0.eth', 'spaces'],
    ['😀😀foo😀 bar', 'spaces'],
    ['🚀🚀🚀', 'not a name'],
    ['💩🔥💯🎉', 'not a name'],
    ['раураl.eth', 'Cyrillic and Latin'],
    ['a_b.eth', 'underscore'],
    ['xn--abc.eth', '"--"'],
    ['vitalik.eth.', 'empty'],
    ['0xd8dA6BF26964aF9D7eEd9e03E53415D37aA9604', '40 hexadecimal'],
    ['bad!.lens', 'Lens handle'],
    ['bad!name.farcaster', 'character names cannot have'],
  ])('%s: %s', (input, fragment) => {
    expect(reasonOf(() => parseIdentity(input))).toContain(fragment);
  });

  it('trims surrounding whitespace (a pasted newline) instead of rejecting it', () => {
    expect(parseIdentity('vitalik.eth\n').identity).toBe('vitalik.eth');
  });

  it('never echoes the input in the reason', () => {
    const reason = reasonOf(() => parseIdentity('раураl.eth'));
    expect(reason).not.toContain('раураl');
  });

  it('keeps a short input in the error for logs and cuts long ones', () => {
    try {
      parseIdentity('x'.repeat(10_000));
    } catch (error) {
      expect((error as InvalidIdentityError).input.length).toBeLessThanOrEqual(64);
    }
    expect.assertions(1);
  });

  it('rejects a value that is not text', () => {
    expect(reasonOf(() => parseIdentity(42 as unknown as string))).toBe('it is not text');
  });
});

describe('friendlyEnsReason', () => {
  it.each([
    ['Invalid label "x": illegal mixture: Greek + Latin "a"', 'mixes Greek and Latin'],
    ['whole-script confusable: Cyrillic/Latin', 'confusingly'],
    ['too many combining marks', 'accent marks'],
    ['illegal placement: leading fenced', 'place'],
    ['something new', 'not a valid name'],
  ])('%s', (message, fragment) => {
    expect(friendlyEnsReason(new Error(message))).toContain(fragment);
  });
});

describe('parseBatchId', () => {
  it.each([
    ['ens,vitalik.eth', 'ens', 'vitalik.eth'],
    ['ENS,Vitalik.ETH', 'ens', 'vitalik.eth'],
    ['lens,stani.lens', 'lens', 'stani.lens'],
    ['farcaster,dwr.eth', 'farcaster', 'dwr.eth'],
    ['farcaster,dwr.farcaster', 'farcaster', 'dwr'],
    ['farcaster,#3', 'farcaster', '#3'],
    ['farcaster,fid:3', 'farcaster', '#3'],
    ['basenames,tony.base', 'basenames', 'tony.base.eth'],
    [`ethereum,${VITALIK}`, 'ethereum', VITALIK.toLowerCase()],
    ['linea,name.linea.eth', 'linea', 'name.linea.eth'],
    ['vitalik.eth', 'ens', 'vitalik.eth'],
    [VITALIK, 'ethereum', VITALIK.toLowerCase()],
    ['fid:3', 'farcaster', '#3'],
    ['dwr', 'farcaster', 'dwr'],
  ])('%s', (input, platform, identity) => {
    expect(parseBatchId(input)).toEqual({ platform, identity, id: `${platform},${identity}` });
  });

  it.each([
    ['solana,bonfida.sol', 'batch id starts with'],
    ['ethereum,vitalik.eth', 'EVM address'],
    ['bonfida.sol', 'cannot be looked up in a batch'],
    [SOLANA, 'cannot be looked up in a batch'],
    ['ens,', 'empty'],
    ['ens,../x', 'never use'],
    ['lens,vitalik.eth', 'the lens lookup takes'],
  ])('rejects %s', (input, fragment) => {
    expect(reasonOf(() => parseBatchId(input))).toContain(fragment);
  });
});

describe('encodeSegment', () => {
  it.each([
    ['vitalik.eth', 'vitalik.eth'],
    ['farcaster,#3', 'farcaster%2C%233'],
    ['a/b?c#d%e', 'a%2Fb%3Fc%23d%25e'],
    ["a(b)!*'", 'a%28b%29%21%2A%27'],
    ['..', '%2E%2E'],
    ['.', '%2E'],
    ['🚀.eth', '%F0%9F%9A%80.eth'],
  ])('%s -> %s', (value, encoded) => {
    expect(encodeSegment(value)).toBe(encoded);
  });
});

describe('ACCEPTED_FORMS', () => {
  it('lists every family of input with an example', () => {
    const all = ACCEPTED_FORMS.join('\n');
    for (const word of ['ENS', 'EVM', 'Solana', 'Farcaster', 'Lens', 'Basename', 'Linea']) {
      expect(all).toContain(word);
    }
  });
});

describe('parseIdentity memo', () => {
  it('answers a repeated input with the same frozen result', () => {
    const first = parseIdentity('Memo.ETH');
    expect(first).toEqual({ input: 'Memo.ETH', identity: 'memo.eth', kind: 'ens', platform: 'ens' });
    expect(parseIdentity('Memo.ETH')).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
  });

  it('keeps platform routes and inputs apart', () => {
    const universal = parseIdentity('memostani');
    const onLens = parseIdentity('memostani', 'lens');
    expect(universal.identity).toBe('memostani.farcaster');
    expect(onLens).toEqual({
      input: 'memostani',
      identity: 'memostani.lens',
      kind: 'lens',
      platform: 'lens',
    });
    expect(parseIdentity('memostani')).toBe(universal);
    expect(parseIdentity('memostani', 'ens').identity).toBe('memostani.eth');
    expect(parseIdentity('MemoStani').input).toBe('MemoStani');
    // Text that spells a memo key is still parsed as itself.
    expect(() => parseIdentity('lens:memostani')).toThrow(InvalidIdentityError);
  });

  it('never serves a remembered answer for input that is not text', () => {
    expect(parseIdentity('12345').kind).toBe('farcaster');
    expect(reasonOf(() => parseIdentity(12345 as unknown as string))).toBe('it is not text');
  });

  it('stays within its bound under a flood of distinct names, invalid and padded inputs', () => {
    for (let i = 0; i < PARSE_MEMO_MAX * 2; i++) parseIdentity(`flood${i}.eth`);
    expect(parseMemoSize()).toBe(PARSE_MEMO_MAX);
    const padded = `${' '.repeat(10_000)}padded.eth`;
    expect(parseIdentity(padded).identity).toBe('padded.eth');
    expect(parseIdentity(padded)).not.toBe(parseIdentity(padded));
    for (let i = 0; i < 100; i++) expect(() => parseIdentity(`bad name ${i}`)).toThrow(InvalidIdentityError);
    expect(parseMemoSize()).toBe(PARSE_MEMO_MAX);
  });
});

describe('the plain-name fast path agrees with ENSIP-15 (ens-normalize)', () => {
  const library = (name: string): string | null => {
    try {
      return ens_normalize(name);
    } catch {
      return null;
    }
  };

  it('on every name of up to 4 characters of a-z, 0-9, "-" and ".", and on longer hyphen patterns', () => {
    const alphabet = ['a', 'z', '0', '9', '-', '.'];
    const names: string[] = [];
    const grow = (prefix: string) => {
      if (prefix.length > 0) names.push(prefix);
      if (prefix.length < 4) for (const c of alphabet) grow(prefix + c);
    };
    grow('');
    names.push(
      'ab--c.eth',
      'a--b.eth',
      'xn--abc.eth',
      'ab-c.eth',
      '--ab.eth',
      'abc--.eth',
      'vitalik.eth',
      'a.b.c.d',
    );
    let fast = 0;
    for (const name of names) {
      if (!isPlainValidName(name)) continue;
      fast += 1;
      expect(library(name), name).toBe(name);
    }
    // Every name the library keeps unchanged is taken by the fast path, so none of these builds its tables.
    for (const name of names) if (library(name) === name) expect(isPlainValidName(name), name).toBe(true);
    expect(fast).toBeGreaterThan(1_000);
  });
});
