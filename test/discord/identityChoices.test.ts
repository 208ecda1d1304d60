import { describe, expect, it } from 'vitest';
import {
  type IdentitySources,
  identityChoices,
  MAX_AUTOCOMPLETE_CHOICES,
  MAX_CHOICE_LENGTH,
} from '../../src/discord/identityChoices.ts';
import { parseIdentity } from '../../src/web3bio/identity.ts';
import { completeIdentity } from '../../src/web3bio/identityCompletions.ts';

const NONE: IdentitySources = { recent: [], proven: [], server: [] };
const VITALIK_ADDRESS = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';

const values = (typed: string, sources = NONE) => identityChoices(typed, sources).map((c) => c.value);

function expectOfferable(choices: { name: string; value: string }[]): void {
  expect(choices.length).toBeLessThanOrEqual(MAX_AUTOCOMPLETE_CHOICES);
  for (const { name, value } of choices) {
    expect(name).toBe(value);
    expect(value.length).toBeGreaterThanOrEqual(1);
    expect(value.length).toBeLessThanOrEqual(MAX_CHOICE_LENGTH);
    expect(parseIdentity(value).identity).toBe(value);
  }
}

describe('completeIdentity', () => {
  it('completes a bare name into each platform’s form, in order', () => {
    expect(completeIdentity('vitalik')).toEqual([
      'vitalik.eth',
      'vitalik.base.eth',
      'vitalik.linea.eth',
      'vitalik.farcaster',
      'vitalik.lens',
    ]);
  });

  it('completes an ending being typed, normalising case', () => {
    expect(completeIdentity('Vitalik.E')).toEqual(['vitalik.eth']);
    expect(completeIdentity('vitalik.ba')).toEqual(['vitalik.base.eth']);
    expect(completeIdentity('vitalik.base')).toEqual(['vitalik.base.eth']);
    expect(completeIdentity('vitalik.')).toHaveLength(5);
    expect(completeIdentity('vitalik.eth')).toEqual(['vitalik.eth']);
  });

  it('offers a full address and other complete names as they are (normalised), a partial address not at all', () => {
    expect(completeIdentity(VITALIK_ADDRESS)).toEqual([VITALIK_ADDRESS.toLowerCase()]);
    expect(completeIdentity('bonfida.sol')).toEqual(['bonfida.sol']);
    expect(completeIdentity('farcaster,#3')).toEqual(['farcaster,#3']);
    expect(completeIdentity('0xd8da')).toEqual([]);
    const solana = 'GDDMwNyyx8uB6zrqwBFHjLLG3TBYk2F8Az4yrQC5RzMp';
    expect(completeIdentity(solana)).toEqual([solana]);
  });

  it('completes a handle being typed (@dwr) into the Farcaster username it is, normalised (ENSIP-15)', () => {
    expect(completeIdentity('@dwr')).toEqual(['dwr.farcaster']);
    expect(completeIdentity('@DWR')).toEqual(['dwr.farcaster']);
    expect(completeIdentity('@ＤＷＲ')).toEqual(['dwr.farcaster']);
    expect(completeIdentity('@d')).toEqual(['d.farcaster']);
    for (const typed of ['@dwr', '@DWR', '@d']) {
      for (const value of completeIdentity(typed)) {
        expect(value).toBe(parseIdentity(typed.normalize('NFKC')).identity);
      }
    }
    // Once a dot is typed it is a name being completed, as without the @ (and as `/whois` reads it).
    expect(completeIdentity('@dwr.e')).toEqual(['dwr.eth']);
    expect(completeIdentity('@dwr.far')).toEqual(['dwr.farcaster']);
    for (const typed of ['@', '@@dwr', '@everyone', '@here', '@ab--cd', '@a_b.eth']) {
      expect(completeIdentity(typed)).toEqual([]);
    }
  });

  it('never offers what does not parse', () => {
    for (const typed of [
      '',
      '   ',
      '<@123>',
      '@everyone',
      'a b',
      'x'.repeat(300),
      'ab--cd',
      '\u202evitalik',
    ]) {
      for (const value of completeIdentity(typed)) expect(parseIdentity(value).identity).toBe(value);
    }
    expect(completeIdentity('<@123>')).toEqual([]);
    // `ab--cd` parses as a Farcaster username, but `ab--cd.farcaster` (and .eth) do not: only Lens takes it.
    expect(completeIdentity('ab--cd')).toEqual(['ab--cd.lens']);
    expect(completeIdentity('a b')).toEqual([]);
  });
});

describe('identityChoices', () => {
  it('orders own lookups, proven identities, server lookups, then completions, without repeats', () => {
    const choices = values('vit', {
      recent: ['vitalik.eth', 'other.eth'],
      proven: ['vitalik.base.eth', 'vitalik.eth'],
      server: ['vitamin.eth', 'vitalik.eth'],
    });
    expect(choices).toEqual([
      'vitalik.eth',
      'vitalik.base.eth',
      'vitamin.eth',
      'vit.eth',
      'vit.base.eth',
      'vit.linea.eth',
      'vit.farcaster',
      'vit.lens',
    ]);
  });

  it('filters remembered identities by the typed prefix, ignoring case; nothing typed shows them all', () => {
    const sources = { recent: ['vitalik.eth', 'dwr.farcaster'], proven: ['Stani.lens'], server: [] };
    expect(values('DW', sources)[0]).toBe('dwr.farcaster');
    expect(values('DW', sources)).not.toContain('vitalik.eth');
    expect(values('st', sources)[0]).toBe('stani.lens');
    expect(values('', sources)).toEqual(['vitalik.eth', 'dwr.farcaster', 'stani.lens']);
  });

  it('for a handle being typed, offers remembered identities by the name after the @, then its Farcaster form', () => {
    const sources = { recent: ['dwr.eth', 'vitalik.eth'], proven: ['dwr.farcaster'], server: [] };
    expect(values('@dwr', sources)).toEqual(['dwr.eth', 'dwr.farcaster']);
    expect(values('@dwr', NONE)).toEqual(['dwr.farcaster']);
  });

  it('offers at most 25', () => {
    const recent = Array.from({ length: 40 }, (_, i) => `name${i}.eth`);
    const choices = identityChoices('name', { recent, proven: [], server: recent });
    expect(choices).toHaveLength(MAX_AUTOCOMPLETE_CHOICES);
    expect(choices[0]?.value).toBe('name0.eth');
    expectOfferable(choices);
  });

  it('drops remembered values that do not parse or do not fit in a choice, and normalises the rest', () => {
    const long = `${'a'.repeat(120)}.eth`;
    const choices = values('', {
      recent: ['not an identity', '<@&123>', long, 'VITALIK.ETH', '', '\u202eevil.eth'],
      proven: [42 as unknown as string, 'dwr'],
      server: ['@everyone', `${'x'.repeat(500)}`],
    });
    expect(choices).toEqual(['vitalik.eth', 'dwr.farcaster']);
  });

  it('survives hostile typed text', () => {
    const hostile = [
      '<@123>',
      '@here',
      '**bold**',
      '`code`',
      '\u0000',
      'x'.repeat(10_000),
      '🦄'.repeat(60),
      '..',
    ];
    for (const typed of hostile) {
      const choices = identityChoices(typed, { recent: ['vitalik.eth'], proven: [], server: [] });
      expectOfferable(choices);
    }
    expect(values(undefined as unknown as string, NONE)).toEqual([]);
  });
});
