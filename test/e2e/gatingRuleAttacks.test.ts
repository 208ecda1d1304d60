/**
 * The attack on each role-rule kind (issue #19 part 2): can a member earn a rule's role without the proof
 * it asks for? Only what the member PROVED counts: a score of a wallet they did not sign for, a platform
 * or followers of a profile their ENS profile merely lists, or the age of a name their wallet holds but
 * they never proved, earn nothing. Each attack is paired with the honest member who does get the role.
 */

import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import { ensProfile, nextAddress, rawProfile, walletCredentials } from '../../fakes/web3bio/builders.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  option,
  roleEdits,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';
import { addRule, scoreOf } from './ruleShortcuts.ts';

afterEach(closeGating);

const DAY_MS = 86_400_000;
const NO_CREDENTIALS = { isHuman: [], isRisky: [], isSpam: [] };

/** What `/gating check` says of a member. */
async function check(g: GatingHarness, userId: string): Promise<string> {
  const member = option(ApplicationCommandOptionType.User, 'member', userId);
  return seen(visibleMessage(await gatingCommandRun(g, 'check', [member])));
}

/** A Farcaster profile with this many followers, naming `discordHandle` in its own links when given. */
function farcasterProfile(
  g: GatingHarness,
  name: string,
  address: string,
  followers: number,
  discordHandle?: string,
) {
  const links = discordHandle ? { discord: { link: '', handle: discordHandle, sources: ['farcaster'] } } : {};
  g.h.upstream.world.addProfile(
    rawProfile('farcaster', name, address, { links, social: { uid: 3, follower: followers, following: 7 } }),
  );
  g.h.upstream.world.setCredentials(`${name}.farcaster`, NO_CREDENTIALS);
}

/** `/domain` of a name held by `address`, registered and expiring at these times (ms). */
function domain(g: GatingHarness, name: string, address: string, createdAt: number, expiredAt: number): void {
  const iso = (ms: number) => new Date(ms).toISOString();
  g.h.upstream.world.setDomain(name, {
    identity: name,
    platform: 'ens',
    resolvedAddress: address,
    ownerAddress: address,
    managerAddress: address,
    resolverAddress: null,
    isPrimary: true,
    status: 'cached',
    createdAt: iso(createdAt),
    firstTxAt: iso(createdAt),
    updatedAt: iso(createdAt),
    expiredAt: iso(expiredAt),
    contenthash: null,
    texts: {},
    addresses: { ethereum: address },
    domains: [],
  });
}

describe('score: only a score whose subject the member proved', () => {
  it('a subname naming Alice, pointed at a stranger’s scored wallet, earns no tier; her own score does', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const tier = await addGuildRole(g, 'Tier 20', 1);
    await addRule(g, tier, 'score', '20');

    const stranger = nextAddress();
    g.h.upstream.world.setCredentials(stranger, walletCredentials(stranger));
    g.h.upstream.world.addProfile(ensProfile('sub.attacker.eth', stranger, 'alice'));
    g.h.upstream.world.setCredentials('sub.attacker.eth', NO_CREDENTIALS);
    g.h.upstream.world.setDomainOwners('sub.attacker.eth', { owner: nextAddress(), manager: nextAddress() });
    await verifyByRecord(g, 'sub.attacker.eth', ALICE);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, tier)).toBe(false);
    expect(roleEdits(g, ALICE, tier, 'PUT')).toEqual([]);
    expect(await check(g, ALICE)).toContain('no unexpired humanity score ≥ 20');

    const bob = await addMember(g, 'bob');
    addIdentity(g, 'bob.eth', { discordHandle: 'bob' });
    scoreOf(g, 'bob.eth', 21);
    await verifyByRecord(g, 'bob.eth', bob);
    await waitFor(() => hasRole(g, bob, tier), 'bob’s tier');
  });
});

describe('platform and followers: only the member’s own proven profile', () => {
  it('a Farcaster profile her ENS profile lists (50k followers) gives Alice neither role; Carol who proved hers gets both', async () => {
    const g = await startGating();
    await setup(g);
    const caster = await addGuildRole(g, 'Caster', 1);
    const famous = await addGuildRole(g, 'Famous', 1);
    await addRule(g, caster, 'platform', 'farcaster');
    await addRule(g, famous, 'followers', 'farcaster:1000');

    const address = addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    // The universal profile of alice.eth lists this Farcaster account: it names no Discord user.
    farcasterProfile(g, 'alice', address, 50_000);
    await verifyByRecord(g);
    // Trying to prove it fails: its own profile does not name her.
    const attempt = seen(
      visibleMessage(await g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE })),
    );
    expect(attempt).not.toContain('Verified');
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, caster)).toBe(false);
    expect(hasRole(g, ALICE, famous)).toBe(false);
    const report = await check(g, ALICE);
    expect(report).toContain('no proven farcaster identity');
    expect(report).toContain('no proven farcaster identity with at least 1,000 followers');

    const carol = await addMember(g, 'carol');
    farcasterProfile(g, 'carol', nextAddress(), 2_000, 'carol');
    await verifyByRecord(g, 'carol.farcaster', carol);
    await waitFor(() => hasRole(g, carol, caster) && hasRole(g, carol, famous), 'carol’s roles');
    const grant = g.h.discord.state.auditLog.find((e) => e.userId === carol && e.roleIds.includes(famous));
    expect(grant?.reason).toContain('2000 farcaster followers ≥ 1000 (carol.farcaster)');
  });
});

describe('name age: only a name the member proved', () => {
  it('an old name held by the wallet Alice’s young name points at does not count; a proven old name does', async () => {
    const g = await startGating();
    await setup(g);
    const og = await addGuildRole(g, 'OG', 1);
    await addRule(g, og, 'name-age', '365');
    const now = Date.now();

    const address = addIdentity(g, 'young.eth', { discordHandle: 'alice' });
    domain(g, 'young.eth', address, now - 10 * DAY_MS, now + 300 * DAY_MS);
    // Her wallet also holds an old name she never proved here.
    g.h.upstream.world.addProfile(ensProfile('old.eth', address));
    domain(g, 'old.eth', address, now - 3_000 * DAY_MS, now + 300 * DAY_MS);
    await verifyByRecord(g, 'young.eth', ALICE);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, og)).toBe(false);
    expect(await check(g, ALICE)).toContain('no proven name registered at least 365 days ago');
    expect(g.h.upstream.requests.some((r) => r.path.includes('old.eth'))).toBe(false);

    // She proves the old name: it counts now.
    g.h.upstream.world.addProfile(ensProfile('old.eth', address, 'alice'));
    await verifyByRecord(g, 'old.eth', ALICE);
    await waitFor(() => hasRole(g, ALICE, og), 'the OG role');
  });
});
