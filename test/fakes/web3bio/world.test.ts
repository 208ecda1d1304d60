import { describe, expect, it } from 'vitest';
import { ensProfile, gatingCredentials, walletCredentials } from '../../../fakes/web3bio/builders.ts';
import { EDGE } from '../../../fakes/web3bio/edgeCases.ts';
import {
  farcasterBaseName,
  farcasterFid,
  isEvmAddress,
  isPlausibleIdentity,
  isSolanaAddress,
  normalizeIdentity,
  platformForName,
  shortAddress,
} from '../../../fakes/web3bio/identity.ts';
import { seedDefaultWorld } from '../../../fakes/web3bio/seed.ts';
import { FakeWorld, parseBatchIds, projectProfile, type RawObject } from '../../../fakes/web3bio/world.ts';

const VITALIK = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';
const DAY_MS = 86_400_000;

function seeded(now = Date.now()): FakeWorld {
  const world = new FakeWorld({ now: () => now });
  seedDefaultWorld(world, now);
  return world;
}

function value<T>(lookup: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!lookup.ok) throw new Error(`expected a value, got error ${lookup.error}`);
  return lookup.value;
}

describe('identity rules', () => {
  it('lowercases everything but base58 addresses and completes .base/.linea', () => {
    expect(normalizeIdentity('  Vitalik.ETH ')).toBe('vitalik.eth');
    expect(normalizeIdentity('0xD8DA6BF26964AF9D7EED9E03E53415D37AA96045')).toBe(VITALIK);
    expect(normalizeIdentity(EDGE.solanaAddress)).toBe(EDGE.solanaAddress);
    expect(normalizeIdentity('Tony.Base')).toBe('tony.base.eth');
    expect(normalizeIdentity('name.linea')).toBe('name.linea.eth');
    expect(normalizeIdentity('tony.base.eth')).toBe('tony.base.eth');
  });

  it('tells address forms apart', () => {
    expect(isEvmAddress(VITALIK)).toBe(true);
    expect(isEvmAddress(`${VITALIK}0`)).toBe(false);
    expect(isSolanaAddress(EDGE.solanaAddress)).toBe(true);
    expect(isSolanaAddress(EDGE.solanaAddress.toLowerCase())).toBe(false);
    expect(isSolanaAddress(VITALIK)).toBe(false);
  });

  it('reads Farcaster FIDs and names in every accepted form', () => {
    expect(farcasterFid('farcaster,#3')).toBe('3');
    expect(farcasterFid('#3')).toBe('3');
    expect(farcasterFid('fid:3')).toBe('3');
    expect(farcasterFid('farcaster,3')).toBeNull();
    expect(farcasterBaseName('dwr.eth')).toBe('dwr');
    expect(farcasterBaseName('dwr.farcaster')).toBe('dwr');
    expect(farcasterBaseName('dwr.fcast.id')).toBe('dwr');
  });

  it('infers platforms and plausibility from the form', () => {
    expect(platformForName('a.base.eth')).toBe('basenames');
    expect(platformForName('a.linea.eth')).toBe('linea');
    expect(platformForName('a.eth')).toBe('ens');
    expect(platformForName('a.sol')).toBe('sns');
    expect(platformForName('a.farcaster')).toBe('farcaster');
    expect(platformForName('hello')).toBeNull();
    expect(isPlausibleIdentity('hello')).toBe(false);
    expect(isPlausibleIdentity('hello', 'farcaster')).toBe(true);
    expect(isPlausibleIdentity('a b.eth')).toBe(false);
    expect(shortAddress(VITALIK)).toBe('0xd8da...6045');
  });

  it('parses batch ids and refuses anything but a JSON array of at most 30 strings', () => {
    expect(parseBatchIds('["ens,a.eth"]')).toEqual(['ens,a.eth']);
    expect(parseBatchIds('not json')).toBeTypeOf('string');
    expect(parseBatchIds('{"ids":[]}')).toBeTypeOf('string');
    expect(parseBatchIds('[1,2]')).toBeTypeOf('string');
    expect(parseBatchIds(JSON.stringify(Array.from({ length: 30 }, (_, i) => `ens,n${i}.eth`)))).toHaveLength(
      30,
    );
    expect(parseBatchIds(JSON.stringify(Array.from({ length: 31 }, (_, i) => `ens,n${i}.eth`)))).toBeTypeOf(
      'string',
    );
  });

  it('projects /ns objects to the fields the profile has', () => {
    const full = {
      address: null,
      identity: 'a.eth',
      platform: 'ens',
      displayName: null,
      links: {},
      header: null,
    };
    expect(projectProfile(full, 'ns')).toEqual({
      address: null,
      identity: 'a.eth',
      platform: 'ens',
      displayName: null,
      header: null,
    });
    expect(projectProfile(full, 'profile')).toBe(full);
  });
});

describe('FakeWorld', () => {
  it('orders a universal answer by platform with the exact match first', () => {
    const world = seeded();
    const platforms = (rows: RawObject[]) => rows.map((p) => `${p.platform}:${p.identity}`);
    expect(platforms(value(world.lookupUniversal('vitalik.eth', 'profile')))).toEqual([
      'ens:vitalik.eth',
      'farcaster:vitalik.eth',
      'lens:vitalik.lens',
    ]);
    expect(platforms(value(world.lookupUniversal('vitalik.lens', 'profile')))[0]).toBe('lens:vitalik.lens');
    expect(platforms(value(world.lookupUniversal('dwr.farcaster', 'profile')))).toEqual([
      'farcaster:dwr.eth',
    ]);
    expect(platforms(value(world.lookupUniversal('vitalik.farcaster', 'profile')))).toEqual([
      'farcaster:vitalik.eth',
      'ens:vitalik.eth',
      'lens:vitalik.lens',
    ]);
    const many = value(world.lookupUniversal(EDGE.many, 'profile'));
    expect(new Set(many.map((p) => p.platform)).size).toBeGreaterThanOrEqual(10);
    expect(many.slice(0, 5).map((p) => p.platform)).toEqual([
      'ens',
      'basenames',
      'linea',
      'ethereum',
      'farcaster',
    ]);
  });

  it('answers changes to its data', () => {
    const world = seeded();
    world.removeProfile('ENS', 'Vitalik.eth');
    expect(value(world.lookupUniversal('vitalik.eth', 'ns')).map((p) => p.platform)).toEqual([
      'farcaster',
      'lens',
    ]);
    world.addProfile({
      platform: 'ens',
      identity: 'fresh.eth',
      address: `0x${'f'.repeat(40)}`,
      displayName: 'Fresh',
    });
    expect(value(world.lookupPlatform('ens', 'FRESH.eth', 'profile')).displayName).toBe('Fresh');
    world.addProfile({ platform: 'ens', identity: 'fresh.eth', address: null, displayName: 'Replaced' });
    expect(value(world.lookupUniversal('fresh.eth', 'profile'))).toHaveLength(1);
    expect(() => world.addProfile({ identity: 'no-platform.eth' })).toThrow(TypeError);
    world.clear();
    expect(world.lookupPlatform('ens', 'fresh.eth', 'profile')).toMatchObject({ ok: false, status: 404 });
  });

  it('keeps its own copies of what it is given', () => {
    const world = new FakeWorld();
    const raw: RawObject = { platform: 'ens', identity: 'copy.eth', displayName: 'Before' };
    world.addProfile(raw);
    raw.displayName = 'After';
    expect(value(world.lookupPlatform('ens', 'copy.eth', 'profile')).displayName).toBe('Before');
  });

  it('finds credentials by name, by address and through the platform in the id', () => {
    const world = seeded();
    const helena = value(world.lookupCredential('ens,0xhelena.eth'));
    expect(helena.isHuman).toHaveLength(3);
    expect(value(world.lookupCredential('ethereum,0xCD133D337EAD9C2AC799EC7524A1E0F8AA30C3B1'))).toEqual(
      helena,
    );
    expect(value(world.lookupCredential('farcaster,ggmonster')).isSpam).toHaveLength(1);
    expect(value(world.lookupCredential(EDGE.clean))).toEqual({ isHuman: [], isRisky: [], isSpam: [] });
    expect(world.lookupCredential('vitalik.eth')).toMatchObject({
      ok: false,
      status: 404,
      error: 'Not Found',
    });
    world.setCredentials('vitalik.eth', { isHuman: [{ value: 'true' }], isRisky: [], isSpam: [] });
    expect(
      value(world.lookupCredential('ethereum,0xd8da6bf26964af9d7eed9e03e53415d37aa96045')).isHuman,
    ).toHaveLength(1);
    world.setCredentials('vitalik.eth', null);
    expect(world.lookupCredential('vitalik.eth').ok).toBe(false);
  });

  it('answers a name with its own entries and those of the wallet it resolves to, as the live server does', () => {
    const world = new FakeWorld();
    const wallet = '0x00000000000000000000000000000000000000a1';
    world.addProfile(ensProfile('sub.owner.eth', wallet, 'alice'));
    world.setCredentials('sub.owner.eth', gatingCredentials('sub.owner.eth', { human: false }));
    world.setCredentials(wallet, walletCredentials(wallet, { spam: true }));
    const answer = value(world.lookupCredential('sub.owner.eth'));
    expect(answer.isHuman.map((c) => (c as RawObject).id)).toEqual([
      `ethereum,${wallet}`,
      `ethereum,${wallet}`,
    ]);
    expect(answer.isSpam.map((c) => (c as RawObject).label)).toEqual(['Known spam wallet']);
    // The wallet's own answer is its own entries only.
    expect(value(world.lookupCredential(wallet)).isHuman).toHaveLength(2);
    world.setCredentials(wallet, null);
    expect(value(world.lookupCredential('sub.owner.eth'))).toEqual(
      gatingCredentials('sub.owner.eth', { human: false }),
    );
  });

  it('a domain is owned and managed by the address it resolves to unless told otherwise', () => {
    const world = new FakeWorld();
    const wallet = '0x00000000000000000000000000000000000000a1';
    const owner = '0x00000000000000000000000000000000000000b2';
    world.addProfile(ensProfile('sub.owner.eth', wallet));
    expect(value(world.lookupDomain('sub.owner.eth'))).toMatchObject({
      resolvedAddress: wallet,
      ownerAddress: wallet,
      managerAddress: wallet,
    });
    world.setDomainOwners('sub.owner.eth', { owner, manager: null });
    expect(value(world.lookupDomain('sub.owner.eth'))).toMatchObject({
      resolvedAddress: wallet,
      ownerAddress: owner,
      managerAddress: null,
    });
    world.setDomainOwners('sub.owner.eth', null);
    expect(value(world.lookupDomain('sub.owner.eth')).ownerAddress).toBe(wallet);
  });

  it('computes edge-case expiry dates from the seeding time', () => {
    const now = Date.UTC(2026, 0, 15);
    const world = seeded(now);
    const expiry = (name: string) => Date.parse(String(value(world.lookupDomain(name)).expiredAt));
    expect(expiry(EDGE.active)).toBe(now + 365 * DAY_MS);
    expect(expiry(EDGE.expiring)).toBe(now + 10 * DAY_MS);
    expect(expiry(EDGE.grace)).toBe(now - 20 * DAY_MS);
    expect(expiry(EDGE.expired)).toBe(now - 200 * DAY_MS);
    const expiredHuman = value(world.lookupCredential(EDGE.expired)).isHuman[0] as RawObject;
    expect(expiredHuman.expiredAt).toBe(Math.floor(now / 1000) - 86_400);
  });

  it('builds a domain answer from a name profile when none is stored', () => {
    const world = seeded(Date.UTC(2026, 0, 15));
    const domain = value(world.lookupDomain('tony.base'));
    expect(domain).toMatchObject({ identity: 'tony.base.eth', platform: 'basenames', isPrimary: true });
    expect(domain.texts).toMatchObject({ url: 'https://mint.club', 'vnd.github': 'tonymfer' });
    expect(value(world.lookupDomain('bonfida.sol')).platform).toBe('sns');
    expect(world.lookupDomain('dwr.farcaster')).toMatchObject({
      status: 404,
      error: 'Invalid Identity or Domain',
    });
    expect(world.lookupDomain('nobody.eth')).toMatchObject({ status: 404, error: 'Not Found' });
  });

  it('builds a wallet bundle from profiles when none is stored', () => {
    const world = seeded();
    const wallet = value(world.lookupWallet('vitalik.eth'));
    expect(wallet).toMatchObject({ identity: VITALIK, address: VITALIK, platform: 'ethereum' });
    expect((wallet.domains as RawObject[]).map((d) => d.identity)).toEqual(['vitalik.eth']);
    expect((wallet.identityGraph as RawObject[]).map((d) => d.platform)).toEqual(['farcaster', 'lens']);
    const helena = value(world.lookupWallet('0xhelena.eth'));
    const firstHuman = (helena.credential as { isHuman: RawObject[] }).isHuman[0];
    expect(firstHuman).toBeDefined();
    expect(firstHuman).not.toHaveProperty('id');
  });

  it('chooses avatars by platform preference and honours overrides', () => {
    const world = seeded();
    expect(value(world.lookupAvatar('vitalik.eth')).url).toBe('https://euc.li/vitalik.eth');
    expect(value(world.lookupAvatar('vitalik.lens')).url).toContain('ik.imagekit.io/lens');
    world.removeProfile('ens', 'vitalik.eth');
    expect(value(world.lookupAvatar(VITALIK)).url).toBe('https://i.imgur.com/IzJxuId.jpg');
    world.setAvatar('vitalik.lens', null);
    expect(value(world.lookupAvatar('vitalik.lens')).url).toBeNull();
    expect(value(world.lookupAvatar(EDGE.noAvatar)).url).toBeNull();
    expect(world.lookupAvatar('nobody.eth')).toMatchObject({ ok: false, status: 404 });
  });
});
