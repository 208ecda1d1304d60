import { describe, expect, it } from 'vitest';
import {
  credentialIsTrue,
  credentialScore,
  credentialVerdict,
  isCredentialExpired,
  isCredentialSignal,
} from '../../src/web3bio/credentials.ts';
import type { Credential, CredentialSet } from '../../src/web3bio/types.ts';

const NOW = 1_780_000_000;

function credential(overrides: Partial<Credential> = {}): Credential {
  return {
    id: 'ens,someone.eth',
    platform: 'test',
    category: 'isHuman',
    source: 'test-source',
    type: 'boolean',
    value: 'true',
    label: 'Test',
    description: '',
    link: null,
    updatedAt: NOW - 10,
    expiredAt: null,
    ...overrides,
  };
}

function set(partial: Partial<CredentialSet>): CredentialSet {
  return { isHuman: [], isRisky: [], isSpam: [], ...partial };
}

describe('isCredentialExpired', () => {
  it('never expires without an expiry', () => {
    expect(isCredentialExpired(credential({ expiredAt: null }), NOW)).toBe(false);
  });
  it('is expired at and after the expiry, not before', () => {
    expect(isCredentialExpired(credential({ expiredAt: NOW + 1 }), NOW)).toBe(false);
    expect(isCredentialExpired(credential({ expiredAt: NOW }), NOW)).toBe(true);
    expect(isCredentialExpired(credential({ expiredAt: NOW - 1 }), NOW)).toBe(true);
  });
});

describe('credentialScore', () => {
  it('reads score values as numbers', () => {
    expect(credentialScore(credential({ type: 'score', value: '47.8' }))).toBe(47.8);
    expect(credentialScore(credential({ type: 'score', value: '0' }))).toBe(0);
    expect(credentialScore(credential({ type: 'Score', value: ' 21.6 ' }))).toBe(21.6);
  });
  it('is null for booleans and for values that are not numbers', () => {
    expect(credentialScore(credential({ type: 'boolean', value: 'true' }))).toBeNull();
    expect(credentialScore(credential({ type: 'score', value: '' }))).toBeNull();
    expect(credentialScore(credential({ type: 'score', value: 'abc' }))).toBeNull();
    expect(credentialScore(credential({ type: 'score', value: 'Infinity' }))).toBeNull();
  });
});

describe('credentialIsTrue', () => {
  it('accepts true in any case', () => {
    expect(credentialIsTrue(credential({ value: 'true' }))).toBe(true);
    expect(credentialIsTrue(credential({ value: 'TRUE' }))).toBe(true);
    expect(credentialIsTrue(credential({ value: ' True ' }))).toBe(true);
  });
  it('rejects anything else', () => {
    expect(credentialIsTrue(credential({ value: 'false' }))).toBe(false);
    expect(credentialIsTrue(credential({ value: '1' }))).toBe(false);
    expect(credentialIsTrue(credential({ value: '' }))).toBe(false);
  });
});

describe('isCredentialSignal', () => {
  it('counts true booleans and scores, not false booleans or expired entries', () => {
    expect(isCredentialSignal(credential(), NOW)).toBe(true);
    expect(isCredentialSignal(credential({ type: 'score', value: '0' }), NOW)).toBe(true);
    expect(isCredentialSignal(credential({ value: 'false' }), NOW)).toBe(false);
    expect(isCredentialSignal(credential({ expiredAt: NOW - 1 }), NOW)).toBe(false);
  });
});

describe('credentialVerdict', () => {
  it('is none without signals', () => {
    expect(credentialVerdict(set({}), NOW)).toBe('none');
  });
  it('ranks spam over risky over human', () => {
    const human = credential({ category: 'isHuman' });
    const risky = credential({ category: 'isRisky' });
    const spam = credential({ category: 'isSpam', type: 'score', value: '0' });
    expect(credentialVerdict(set({ isHuman: [human] }), NOW)).toBe('human');
    expect(credentialVerdict(set({ isHuman: [human], isRisky: [risky] }), NOW)).toBe('risky');
    expect(credentialVerdict(set({ isHuman: [human], isRisky: [risky], isSpam: [spam] }), NOW)).toBe('spam');
  });
  it('ignores expired and false signals', () => {
    const expiredSpam = credential({ category: 'isSpam', expiredAt: NOW - 100 });
    const falseRisk = credential({ category: 'isRisky', value: 'false' });
    const human = credential({ category: 'isHuman', expiredAt: NOW + 100 });
    expect(
      credentialVerdict(set({ isSpam: [expiredSpam], isRisky: [falseRisk], isHuman: [human] }), NOW),
    ).toBe('human');
    expect(credentialVerdict(set({ isSpam: [expiredSpam] }), NOW)).toBe('none');
  });
  it('tolerates a set with a missing category', () => {
    const partial = { isHuman: [credential()] } as unknown as CredentialSet;
    expect(credentialVerdict(partial, NOW)).toBe('human');
  });
});
