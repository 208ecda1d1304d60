import { describe, expect, it } from 'vitest';
import { recordNamesDiscordUser } from '../../src/gating/proofs/recordProof.ts';
import type { DomainInfo, Profile, ProfileLink } from '../../src/web3bio/types.ts';
import { emptyDomain, emptyProfile } from '../render/fixtures.ts';

function profile(links: ProfileLink[]): Profile {
  return emptyProfile({
    address: '0x0000000000000000000000000000000000000001',
    identity: 'alice.eth',
    displayName: 'alice.eth',
    links,
  });
}

const link = (key: string, handle: string | null): ProfileLink => ({ key, link: null, handle, sources: [] });

function domain(texts: Record<string, string>): DomainInfo {
  return emptyDomain({ identity: 'alice.eth', isPrimary: true, texts });
}

const alice = { username: 'alice' };

describe('recordNamesDiscordUser', () => {
  it('accepts the profile discord link handle', () => {
    expect(
      recordNamesDiscordUser({ profiles: [profile([link('discord', 'alice')])], domain: null }, alice),
    ).toBe(true);
  });

  it('accepts the com.discord text record of the domain', () => {
    expect(recordNamesDiscordUser({ profiles: [], domain: domain({ 'com.discord': 'alice' }) }, alice)).toBe(
      true,
    );
  });

  it.each([
    ['Alice', 'different case'],
    ['@alice', 'a leading @'],
    ['  alice ', 'surrounding spaces'],
    ['alice#0', 'the #0 discriminator'],
    ['alice#0000', 'the legacy #0000 discriminator'],
  ])('accepts %j (%s)', (handle) => {
    expect(
      recordNamesDiscordUser({ profiles: [profile([link('discord', handle)])], domain: null }, alice),
    ).toBe(true);
    expect(recordNamesDiscordUser({ profiles: [], domain: domain({ 'com.discord': handle }) }, alice)).toBe(
      true,
    );
  });

  it.each([
    ['alice#1234', 'a non-zero legacy discriminator'],
    ['alice2', 'another name'],
    ['alic', 'a prefix'],
    ['ali\u200bce', 'a hidden character'],
    ['', 'an empty record'],
    ['@', 'only an @'],
  ])('refuses %j (%s)', (handle) => {
    expect(
      recordNamesDiscordUser({ profiles: [profile([link('discord', handle)])], domain: null }, alice),
    ).toBe(false);
    expect(recordNamesDiscordUser({ profiles: [], domain: domain({ 'com.discord': handle }) }, alice)).toBe(
      false,
    );
  });

  it('ignores other link keys and text records that happen to hold the name', () => {
    const evidence = {
      profiles: [profile([link('twitter', 'alice'), link('github', 'alice'), link('discord', null)])],
      domain: domain({ 'com.twitter': 'alice', description: 'alice', 'vnd.discord': 'alice' }),
    };
    expect(recordNamesDiscordUser(evidence, alice)).toBe(false);
  });

  it('refuses when nothing is known or the username is blank', () => {
    expect(recordNamesDiscordUser({ profiles: [], domain: null }, alice)).toBe(false);
    const named = { profiles: [profile([link('discord', 'alice')])], domain: null };
    expect(recordNamesDiscordUser(named, { username: '' })).toBe(false);
    expect(recordNamesDiscordUser(named, { username: '  ' })).toBe(false);
  });

  it('matches the member, not the record, when the username itself carries @ or #0', () => {
    const named = { profiles: [profile([link('discord', 'alice')])], domain: null };
    expect(recordNamesDiscordUser(named, { username: 'alice#0' })).toBe(true);
    expect(recordNamesDiscordUser(named, { username: 'bob' })).toBe(false);
  });

  it('survives hostile shapes from upstream', () => {
    const weird = { ...profile([]), links: undefined as unknown as ProfileLink[] };
    expect(recordNamesDiscordUser({ profiles: [weird], domain: null }, alice)).toBe(false);
    const long = 'a'.repeat(10_000);
    expect(
      recordNamesDiscordUser(
        { profiles: [profile([link('discord', long)])], domain: null },
        { username: long },
      ),
    ).toBe(false);
  });
});
