/**
 * Gating with the bot's discord.js caches (clientCaches.ts), which keep no member but the bot: a
 * whole-guild re-check still sees every linked member and counts role holders from the member list it
 * loaded, and a rename is noticed without the old user in the cache.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { nextSnowflake } from '../../fakes/discord/snowflake.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { roleSubject } from '../../src/gating/rechecks/losses.ts';
import type { GatingService } from '../../src/gating/service.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { RawCredentialSet, toCredentialSet } from '../../src/web3bio/schemas.ts';
import {
  addEnsIdentity,
  addGuild,
  addRole,
  createService,
  type Fakes,
  memberRoles,
  openStore,
  startFakes,
  uniqueName,
  waitFor,
} from './serviceHarness.ts';

let fakes: Fakes;
let guild: FakeGuild;
let human: string;
let store: GatingStore;
let service: GatingService;

beforeAll(async () => {
  fakes = await startFakes();
});
afterAll(async () => {
  await fakes.close();
});
beforeEach(async () => {
  guild = await addGuild(fakes);
  human = (await addRole(fakes, guild, 'Verified', 2)).id;
  store = await openStore();
  service = createService(fakes, store);
  const setup = await service.guilds.setup(
    guild.id,
    { humanRoleId: human, spamRoleId: null, riskyRoleId: null, minScore: null, logChannelId: null },
    guild.ownerId,
  );
  expect(setup.problems).toEqual([]);
  await service.idle(guild.id);
});
afterEach(async () => {
  await service.stop();
  await store.close();
});

/** A member in the stand-in only (no join event: the client never sees them before a walk). */
function quietMember(username: string, roles: string[]): string {
  const userId = nextSnowflake();
  fakes.discord.addMember(guild.id, { id: userId, username }, { roles });
  return userId;
}

/** A member linked earlier by signature to an identity whose last check showed isHuman. */
async function signedMember(username: string, stillHuman: boolean): Promise<string> {
  const identity = addEnsIdentity(fakes, uniqueName(username), { human: stillHuman });
  const userId = quietMember(username, [human]);
  const now = Date.now();
  await store.saveLink(
    {
      guildId: guild.id,
      userId,
      identity: identity.name,
      platform: 'ens',
      address: identity.address,
      proofMethod: 'signature',
      provenAt: now,
      lastCheckAt: now,
      lastCheckOk: true,
      lastResult: toCredentialSet(RawCredentialSet.parse(gatingCredentials(identity.name))),
    },
    'seeded',
  );
  if (!stillHuman) {
    // First seen two hours ago: this pass is the confirming one.
    await store.notePendingLoss({
      guildId: guild.id,
      userId,
      subject: roleSubject(human),
      firstSeenAt: now - 2 * 3_600_000,
      reason: 'seeded',
    });
  }
  return userId;
}

describe('a whole-guild re-check with no member cached', () => {
  it('evaluates every linked member and weighs removals against the role’s holders in the member list', async () => {
    const keepers: string[] = [];
    for (let i = 0; i < 54; i += 1) keepers.push(await signedMember(`keeper${i}`, true));
    const losers: string[] = [];
    for (let i = 0; i < 6; i += 1) losers.push(await signedMember(`loser${i}`, false));
    expect(fakes.client.guilds.cache.get(guild.id)?.members.cache.size).toBe(1);

    const requestsBefore = fakes.discord.requests.length;
    const result = await service.guilds.recheckGuild(guild.id);
    // 6 of 60 holders is no mass removal; counted from an empty cache it would be (6 > 10% of 0).
    expect(result).toMatchObject({ members: 60, heldRemovals: 0, failures: 0 });
    await service.idle(guild.id);
    for (const userId of losers) expect(memberRoles(fakes, guild, userId)).toEqual([]);
    for (const userId of keepers) expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    // One request for the member list, none per member (the role worker reads each member it edits).
    const memberReads = fakes.discord.requests
      .slice(requestsBefore)
      .filter((r) => r.method === 'GET' && r.path.startsWith(`/guilds/${guild.id}/members`))
      .map((r) => r.path.split('/')[4] ?? 'list');
    expect(memberReads.filter((id) => id === 'list')).toHaveLength(1);
    expect(memberReads.filter((id) => keepers.includes(id))).toEqual([]);
  });
});

describe('renames, with no user cached', () => {
  async function recordMember(username: string): Promise<{ userId: string; identity: string }> {
    const identity = addEnsIdentity(fakes, uniqueName(username), { discordHandle: username }).name;
    const userId = quietMember(username, [human]);
    await store.saveLink(
      {
        guildId: guild.id,
        userId,
        identity,
        platform: 'ens',
        address: null,
        proofMethod: 'record',
        provenAt: Date.now(),
      },
      'seeded',
    );
    return { userId, identity };
  }

  it('a member seen in a walk under one name and updated under another has the record read again and unlinked', async () => {
    const { userId } = await recordMember('carol');
    await service.guilds.recheckGuild(guild.id);
    expect(service.members.usernames.size).toBe(1);
    expect(fakes.client.users.cache.has(userId)).toBe(false);

    service.members.onMemberUpdate(userId, 'carol'); // a role or nickname change: same name, nothing to do
    const before = fakes.web3.requests.length;
    await service.idle();
    expect(fakes.web3.requests.length).toBe(before);

    const member = fakes.discord.state.guilds.get(guild.id)?.members.get(userId);
    if (!member?.user) throw new Error('member missing');
    member.user = { ...member.user, username: 'carol_renamed' };
    service.members.onMemberUpdate(userId, 'carol_renamed');
    await waitFor(() => memberRoles(fakes, guild, userId).length === 0, 5_000);
    expect(await store.getUserLinks(guild.id, userId)).toEqual([]);
    expect(service.members.usernames.size).toBe(0);
  });

  it('an update of a member with no record link costs nothing', async () => {
    const { userId } = await recordMember('dave');
    const before = fakes.web3.requests.length;
    service.members.onMemberUpdate(userId, 'dave_renamed');
    await service.idle();
    expect(fakes.web3.requests.length).toBe(before);
    expect(await store.getUserLinks(guild.id, userId)).toHaveLength(1);
  });
});
