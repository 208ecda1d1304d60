/**
 * Two processes picking up one member's sharing for the same server at once, on PostgreSQL (issue #36):
 * two gating services, each with its own discord.js client and its own store pool on one schema, bring
 * her shared proofs to the server they both serve (as during a shard hand-over, or the command and a
 * pick-up racing). One link, one role edit; a member who shares nothing gets nothing.
 */
import type { Client } from 'discord.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loginClient } from '../../fakes/discord/client.ts';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import type { GatingService } from '../../src/gating/service.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { walletAccountProof } from '../e2e/harness.ts';
import { postgresHarness } from '../store/harness.ts';
import {
  addGuild,
  addMember,
  addRole,
  createService,
  type Fakes,
  memberRoles,
  roleEdits,
  startFakes,
} from './serviceHarness.ts';

const h = postgresHarness();
let fakes: Fakes;
let secondClient: Client;
let guild: FakeGuild;
let human: string;
const services: GatingService[] = [];
const stores: GatingStore[] = [];

beforeAll(async () => {
  fakes = await startFakes();
  secondClient = await loginClient(fakes.discord);
});
afterAll(async () => {
  await secondClient.destroy();
  await fakes.close();
  await h.cleanup();
});
beforeEach(async () => {
  await h.fresh();
  guild = await addGuild(fakes);
  human = (await addRole(fakes, guild, 'Verified', 2)).id;
  // "Two processes": each its own client (both serve the guild) and its own pool on one schema.
  for (const client of [fakes.client, secondClient]) {
    const store = await h.open();
    stores.push(store);
    services.push(createService({ ...fakes, client }, store));
  }
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  stores.splice(0);
});

/** A member of the guild whose account proved a human wallet by signature. */
async function memberWithProof(username: string): Promise<{ userId: string; wallet: string }> {
  const userId = await addMember(fakes, guild, username);
  const wallet = nextAddress();
  fakes.web3.world.setCredentials(wallet, gatingCredentials(wallet, { human: true }));
  const [store] = stores;
  await store?.saveAccountProof(walletAccountProof(userId, wallet));
  return { userId, wallet };
}

describe('two processes bringing shared proofs to one server at once (PostgreSQL)', () => {
  it('one link and one role edit for her; nothing for the member who does not share', async () => {
    const [first, second] = services;
    const [store] = stores;
    if (!first || !second || !store) throw new Error('two services expected');
    const setup = await first.guilds.setup(
      guild.id,
      { humanRoleId: human, spamRoleId: null, riskyRoleId: null, minScore: null, logChannelId: null },
      guild.ownerId,
    );
    if ('kind' in setup) throw new Error('setup refused');
    const alice = await memberWithProof('alice');
    const bob = await memberWithProof('bob');
    await store.setProofSharing(alice.userId, true, Date.now());

    // What each process's pick-up does for her, twice each, all at once; and for Bob, who did not opt in.
    const results = await Promise.all(
      [first, second, first, second].flatMap((s) => [
        s.verification.carrier.bringToServed(alice.userId),
        s.verification.carrier.bringToServed(bob.userId),
      ]),
    );
    await Promise.all(services.map((s) => s.idle(guild.id)));

    expect(results.every((r) => !r.failed)).toBe(true);
    // Within a process one bringing waits for the other and finds it linked: each process linked her at
    // most once (across processes the store keeps one link; both may say they made it).
    const servers = (s: number) => results.filter((_, i) => i % 4 === s).map((r) => r.servers);
    for (const process of [0, 2]) expect(servers(process).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(1);
    expect([...servers(1), ...servers(3)].every((n) => n === 0)).toBe(true);
    const links = (await store.getUserLinks(guild.id, alice.userId)).filter((l) => l.releasedAt === null);
    expect(links.map((l) => [l.identity, l.proofMethod])).toEqual([[alice.wallet, 'signature']]);
    expect(memberRoles(fakes, guild, alice.userId)).toContain(human);
    expect(roleEdits(fakes, guild.id, alice.userId, human, 'PUT')).toHaveLength(1);

    expect(await store.getUserLinks(guild.id, bob.userId)).toEqual([]);
    expect(memberRoles(fakes, guild, bob.userId)).not.toContain(human);
  });
});
