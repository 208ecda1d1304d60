/**
 * Synthetic identities for the benchmarks, shaped like vitalik.eth's universal answer (an ENS,
 * a Farcaster and a Lens profile on one address), each with its own names and address.
 */
import { readFixture } from '../fakes/web3bio/seed.ts';
import type { FakeWorld, RawObject } from '../fakes/web3bio/world.ts';

const TEMPLATE = JSON.stringify(readFixture('profile-universal-vitalik.json'));
const TEMPLATE_NAME = 'vitalik';
const TEMPLATE_ADDRESS = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';

/** The ENS name of bench identity `index`, e.g. `bench7.eth`. */
export function benchIdentity(index: number): string {
  return `bench${index}.eth`;
}

/** A distinct EVM address per index, clear of the seeded world's addresses. */
export function benchAddress(index: number): string {
  return `0xbe4c${index.toString(16).padStart(36, '0')}`;
}

/** The wire profiles (ens, farcaster, lens) of bench identity `index`, freshly parsed. */
export function benchWireProfiles(index: number): RawObject[] {
  const text = TEMPLATE.replaceAll(TEMPLATE_NAME, `bench${index}`).replaceAll(
    TEMPLATE_ADDRESS,
    benchAddress(index),
  );
  return JSON.parse(text) as RawObject[];
}

/** Add bench identities `from` .. `from + count - 1` to `world`; returns their ENS names. */
export function addBenchProfiles(world: FakeWorld, from: number, count: number): string[] {
  const names: string[] = [];
  for (let index = from; index < from + count; index++) {
    for (const profile of benchWireProfiles(index)) world.addProfile(profile);
    names.push(benchIdentity(index));
  }
  return names;
}
