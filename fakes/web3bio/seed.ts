/**
 * The default world: every sample under test/fixtures/web3bio/, served by the route it came from, plus the
 * edge cases. Where samples of one identity disagree (they were curated at different times), the one
 * named below is the canonical data and the others match it on identity, platform and shape only.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { rawProfile } from './builders.ts';
import { seedEdgeCases } from './edgeCases.ts';
import type { FakeWorld, RawCredentials, RawObject } from './world.ts';

const FIXTURES_DIR = fileURLToPath(new URL('../../test/fixtures/web3bio/', import.meta.url));
const parsed = new Map<string, unknown>();

/** A fresh copy of a sample in test/fixtures/web3bio/: JSON parsed, other files as trimmed text. */
export function readFixture<T = unknown>(name: string): T {
  let value = parsed.get(name);
  if (value === undefined) {
    const content = readFileSync(`${FIXTURES_DIR}${name}`, 'utf8');
    value = name.endsWith('.json') ? JSON.parse(content) : content.trim();
    parsed.set(name, value);
  }
  return structuredClone(value) as T;
}

/** Platform samples whose data is canonical for their identity. */
const CANONICAL_PROFILES = [
  'profile-farcaster-dwr.json',
  'profile-lens-stani.json',
  'profile-basenames-tony.json',
  'profile-linea-name.json',
  'profile-sns-bonfida.json',
  'profile-unstoppabledomains-sandy.historical-docs-2025-12.json',
];

export const WALLET_SAMPLE_ADDRESS = '0x5c51b52694719931919aebb2dccf7ca3447d0608';

/** Load the samples and the edge cases into `world`; `now` (ms) anchors computed dates. */
export function seedDefaultWorld(world: FakeWorld, now: number = Date.now()): void {
  // vitalik.eth: the universal sample (ens, farcaster, lens on 0xd8da...) is canonical; profile-ens-vitalik is older.
  for (const profile of readFixture<RawObject[]>('profile-universal-vitalik.json')) world.addProfile(profile);
  for (const name of CANONICAL_PROFILES) world.addProfile(readFixture<RawObject>(name));

  // sujiyan.eth exists only in the batch sample (asked for by address); its avatar route answers the ENS avatar.
  const batch = readFixture<RawObject[]>('profile-batch-with-aliases.json');
  for (const { aliases: _aliases, ...profile } of batch) {
    if (profile.identity === 'sujiyan.eth') world.addProfile(profile);
  }
  world.setAvatar('sujiyan.eth', readFixture<string>('avatar-sujiyan.location.txt'));
  world.setDomain('sujiyan.eth', readFixture<RawObject>('domain-sujiyan.json'));

  // Credential samples, with profiles so their names also resolve elsewhere (the address is the sample's galxe id).
  world.setCredentials('0xhelena.eth', readFixture<RawCredentials>('credential-ishuman-0xhelena.json'));
  world.addProfile(rawProfile('ens', '0xhelena.eth', '0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1'));
  world.setCredentials('ggmonster', readFixture<RawCredentials>('credential-isrisky-isspam-ggmonster.json'));
  world.addProfile(
    rawProfile('farcaster', 'ggmonster', '0x6a3c0ffee00000000000000000000000000d0c5a', {
      social: { uid: 488_211, follower: 2, following: 999 },
    }),
  );

  // Wallet sample: answers to its address and to its domains (web3.bio, web3bio.base.eth).
  world.setWallet(WALLET_SAMPLE_ADDRESS, readFixture<RawObject>('wallet-web3bio-0x5c51.json'));

  seedEdgeCases(world, now);
}
