import { privateKeyToAccount } from 'viem/accounts';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { memberJoined } from '../../fakes/discord/client.ts';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { nextSnowflake } from '../../fakes/discord/snowflake.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { buildSiweMessage } from '../../src/gating/proofs/challengeMessage.ts';
import { verifyChallenge } from '../../src/gating/proofs/siwe.ts';
import type { GatingService } from '../../src/gating/service.ts';
import type { GatingStore } from '../../src/store/types.ts';
import {
  addEnsIdentity,
  addGuild,
  addMember,
  addRole,
  channelMessages,
  createService,
  type Fakes,
  memberRoles,
  openStore,
  PUBLIC_URL,
  roleEdits,
  startFakes,
  uniqueName,
  waitFor,
} from './serviceHarness.ts';

const signer = privateKeyToAccount('0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d');

let fakes: Fakes;
let guild: FakeGuild;
let human: string;
let spam: string;
let store: GatingStore;
let service: GatingService;
const services: GatingService[] = [];

beforeAll(async () => {
  fakes = await startFakes();
});
afterAll(async () => {
  await fakes.close();
});

beforeEach(async () => {
  guild = await addGuild(fakes);
  human = (await addRole(fakes, guild, 'Verified', 2)).id;
  spam = (await addRole(fakes, guild, 'Spam', 3)).id;
  store = await openStore();
  service = track(createService(fakes, store));
});
afterEach(async () => {
  for (const s of services.splice(0)) await s.stop();
  await store.close();
});

function track(s: GatingService): GatingService {
  services.push(s);
  return s;
}

async function setUp(over: { logChannelId?: string | null; spamRoleId?: string | null } = {}) {
  const result = await service.guilds.setup(
    guild.id,
    {
      humanRoleId: human,
      spamRoleId: over.spamRoleId === undefined ? spam : over.spamRoleId,
      riskyRoleId: null,
      minScore: 20,
      logChannelId: over.logChannelId === undefined ? guild.textChannelId : over.logChannelId,
    },
    guild.ownerId,
  );
  expect(result.problems).toEqual([]);
  if ('kind' in result) throw new Error('setup refused');
  await service.idle(guild.id);
  return result;
}

/** A signing link made for `userId` and just used (what the signing page hands to completeSignature). */
function usedNonce(userId: string, identity: string, address: string, fill: string) {
  return {
    nonce: fill.repeat(32),
    guildId: guild.id,
    userId,
    identity,
    address,
    expiresAt: Date.now() + 60_000,
    usedAt: Date.now(),
    userName: 'second',
    guildName: null,
    failedAttempts: 0,
  };
}

/** A member proven by record, holding the human role, with the queue drained. */
async function verifiedMember(username: string) {
  const identity = addEnsIdentity(fakes, uniqueName(username), { discordHandle: username });
  const userId = await addMember(fakes, guild, username);
  const result = await service.verification.verify(guild.id, { id: userId, username }, identity.name);
  expect(result.kind).toBe('linked');
  await service.idle(guild.id);
  expect(memberRoles(fakes, guild, userId)).toContain(human);
  return { userId, identity };
}

/** A member whose record link to a fresh identity is stored as if proven earlier: no role change yet. */
async function linkedMember(
  username: string,
  opts: { store?: GatingStore; human?: boolean; roles?: string[] } = {},
) {
  const identity = addEnsIdentity(fakes, uniqueName(username), {
    discordHandle: username,
    human: opts.human,
  });
  const userId = await addMember(fakes, guild, username, opts.roles);
  await (opts.store ?? store).saveLink(
    {
      guildId: guild.id,
      userId,
      identity: identity.name,
      platform: 'ens',
      address: identity.address,
      proofMethod: 'record',
      provenAt: Date.now(),
    },
    'seeded',
  );
  return { userId, identity };
}

describe('verify by the identity’s own record', () => {
  it('links the identity and adds the role with an audit-log reason, stored and posted without pings', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('alice'), { discordHandle: '@Alice' });
    const userId = await addMember(fakes, guild, 'alice');

    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'alice' },
      identity.name,
    );
    expect(result.kind).toBe('linked');
    if (result.kind !== 'linked') return;
    expect(result.link).toMatchObject({
      userId,
      identity: identity.name,
      proofMethod: 'record',
      address: identity.address,
    });
    expect(result.diff.add.map((a) => a.roleId)).toEqual([human]);
    await service.idle(guild.id);

    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    const [edit] = roleEdits(fakes, guild.id, userId, human, 'PUT');
    expect(edit?.headers['x-audit-log-reason']).toBeDefined();
    const audit = fakes.discord.state.auditLog.find(
      (e) => e.userId === userId && e.action === 'member_role_add',
    );
    expect(audit?.reason).toBe(`web3 gating: isHuman: Dentity Humanity Verified (${identity.name})`);

    const events = await store.listAuditEvents({ guildId: guild.id, userId });
    expect(events.map((e) => e.kind).sort()).toEqual(['linked', 'role_added']);
    expect(events.find((e) => e.kind === 'role_added')?.reason).toBe(audit?.reason);

    const posts = fakes.discord.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${guild.textChannelId}/messages`,
    );
    expect(posts.length).toBeGreaterThan(0);
    for (const post of posts) expect(post.body).toMatchObject({ allowed_mentions: { parse: [] } });
    const log = channelMessages(fakes, guild.textChannelId).join('\n');
    expect(log).toContain(`Added <@&${human}> to <@${userId}>`);
    expect(log).toContain(`Verified <@${userId}> as`);
  });

  it('accepts the com.discord text record of the domain', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('carol'));
    fakes.web3.world.setDomain(identity.name, {
      identity: identity.name,
      platform: 'ens',
      resolvedAddress: identity.address,
      ownerAddress: identity.address,
      texts: { 'com.discord': 'carol#0' },
      addresses: { ethereum: identity.address },
    });
    const userId = await addMember(fakes, guild, 'carol');
    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'carol' },
      identity.name,
    );
    expect(result.kind).toBe('linked');
  });

  it('reads the record fresh, past the cache', async () => {
    await setUp();
    const name = uniqueName('dave');
    addEnsIdentity(fakes, name);
    const userId = await addMember(fakes, guild, 'dave');
    expect((await service.verification.verify(guild.id, { id: userId, username: 'dave' }, name)).kind).toBe(
      'challenge',
    );
    addEnsIdentity(fakes, name, { discordHandle: 'dave' });
    expect((await service.verification.verify(guild.id, { id: userId, username: 'dave' }, name)).kind).toBe(
      'linked',
    );
  });
});

describe('verify by wallet signature', () => {
  it('answers with a one-time link for the identity’s address when no record names the member', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('erin'), { discordHandle: 'someone-else' });
    const userId = await addMember(fakes, guild, 'erin');
    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'erin' },
      identity.name,
    );
    expect(result).toMatchObject({ kind: 'challenge', address: identity.address });
    if (result.kind !== 'challenge') return;
    expect(result.url).toMatch(new RegExp(`^${PUBLIC_URL}/verify/[0-9a-f]{32}$`));
    expect(result.expiresAt).toBeGreaterThan(Date.now() + 9 * 60_000);
    expect(await store.getUserLinks(guild.id, userId)).toEqual([]);
  });

  it('links after a valid signature and adds the role', async () => {
    await setUp();
    const address = signer.address.toLowerCase();
    const identity = addEnsIdentity(fakes, uniqueName('frank'), { address });
    const userId = await addMember(fakes, guild, 'frank');
    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'frank' },
      identity.name,
    );
    if (result.kind !== 'challenge') throw new Error(`expected a challenge, got ${result.kind}`);
    const nonce = result.url.split('/').at(-1) ?? '';
    const record = await store.getNonce(nonce);
    if (!record) throw new Error('nonce not stored');
    const siwe = { publicUrl: PUBLIC_URL };
    const signature = await signer.signMessage({ message: buildSiweMessage(siwe, record) });
    const outcome = await verifyChallenge(store, siwe, { nonce, signature });
    if (!outcome.ok) throw new Error(outcome.reason);

    await service.verification.completeSignature({ record: outcome.record, address: outcome.address });
    await service.idle(guild.id);
    const [link] = await store.getUserLinks(guild.id, userId);
    expect(link).toMatchObject({ identity: identity.name, proofMethod: 'signature', address });
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
  });

  it('goes straight to a challenge for an EVM address, with no lookup', async () => {
    await setUp();
    const userId = await addMember(fakes, guild, 'gina');
    const before = fakes.web3.requests.length;
    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'gina' },
      signer.address,
    );
    expect(result).toMatchObject({ kind: 'challenge', address: signer.address.toLowerCase() });
    expect(fakes.web3.requests.length).toBe(before);
  });
});

describe('verify refuses, storing nothing', () => {
  it('an invalid identity, with the friendly reason', async () => {
    await setUp();
    const result = await service.verification.verify(guild.id, { id: '1', username: 'x' }, 'not a name');
    expect(result).toEqual({
      kind: 'refused',
      refusal: { code: 'invalid_identity', reason: expect.stringContaining('spaces') },
    });
  });

  it('when gating is not set up in the guild', async () => {
    const result = await service.verification.verify(guild.id, { id: '1', username: 'x' }, 'vitalik.eth');
    expect(result).toEqual({ kind: 'refused', refusal: { code: 'not_enabled' } });
  });

  it('when the lookup fails: try again later', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('hal'), { discordHandle: 'hal' });
    fakes.web3.addFault({ match: identity.name, times: 10, action: { kind: 'status', status: 500 } });
    const userId = await addMember(fakes, guild, 'hal');
    const result = await service.verification.verify(
      guild.id,
      { id: userId, username: 'hal' },
      identity.name,
    );
    fakes.web3.clearFaults();
    expect(result).toEqual({ kind: 'refused', refusal: { code: 'lookup_failed', identity: identity.name } });
    expect(await store.getUserLinks(guild.id, userId)).toEqual([]);
    expect(await store.listAuditEvents({ guildId: guild.id, userId })).toEqual([]);
  });

  it('when the identity is unknown or has no address to sign with', async () => {
    await setUp();
    const userId = await addMember(fakes, guild, 'ivy');
    const nobody = uniqueName('nobody');
    const unknown = await service.verification.verify(guild.id, { id: userId, username: 'ivy' }, nobody);
    expect(unknown).toEqual({ kind: 'refused', refusal: { code: 'not_found', identity: nobody } });

    fakes.web3.world.addProfile({
      identity: 'ivyname.sol',
      platform: 'sns',
      address: 'So1anaAddre55111111111111111111111111111111',
      links: {},
    });
    const solana = await service.verification.verify(
      guild.id,
      { id: userId, username: 'ivy' },
      'ivyname.sol',
    );
    // A Solana name is proven with a Solana wallet: the link's signer keeps its base58 case.
    expect(solana).toMatchObject({
      kind: 'challenge',
      address: 'So1anaAddre55111111111111111111111111111111',
    });

    fakes.web3.world.addProfile({ identity: 'noaddr.sol', platform: 'sns', address: null, links: {} });
    const none = await service.verification.verify(guild.id, { id: userId, username: 'ivy' }, 'noaddr.sol');
    expect(none).toEqual({
      kind: 'refused',
      refusal: { code: 'no_address', identity: 'noaddr.sol', username: 'ivy' },
    });
    expect(await store.getUserLinks(guild.id, userId)).toEqual([]);
  });
});

describe('re-checks', () => {
  it('removes the role when the credential is lost, once a second answer an hour later agrees', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('jack');
    fakes.web3.world.setCredentials(identity.name, { isHuman: [], isRisky: [], isSpam: [] });
    let now = Date.now();
    const timed = track(createService(fakes, store, { now: () => now }));

    const cached = await timed.guilds.recheckGuild(guild.id);
    expect(cached.changes).toBe(0);
    const first = await timed.guilds.recheckGuild(guild.id, { fresh: true });
    expect(first).toMatchObject({ members: 1, changes: 0, pendingRemovals: 1 });
    const report = await timed.members.report(guild.id, userId);
    expect(report.pendingRemovals).toEqual([
      expect.objectContaining({ subject: `role:${human}`, confirmAt: now + 60 * 60_000, heldAt: null }),
    ]);
    now += 59 * 60_000;
    expect(await timed.guilds.recheckGuild(guild.id, { fresh: true })).toMatchObject({ changes: 0 });
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    now += 60_000;
    const fresh = await timed.guilds.recheckGuild(guild.id, { fresh: true });
    expect(fresh).toMatchObject({ members: 1, changes: 1, failures: 0, unlinked: 0 });
    await timed.idle(guild.id);
    expect(await store.listPendingLosses(guild.id, userId)).toEqual([]);
    expect(memberRoles(fakes, guild, userId)).toEqual([]);
    const removed = fakes.discord.state.auditLog.find(
      (e) => e.userId === userId && e.action === 'member_role_remove',
    );
    expect(removed?.reason).toContain('no unexpired isHuman credential');
    expect((await store.getGuildSettings(guild.id))?.lastFullSyncAt).toEqual(expect.any(Number));
  });

  it('removes nothing while the upstream is down, and keeps the last known result', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('kate');
    fakes.web3.world.setCredentials(identity.name, { isHuman: [], isRisky: [], isSpam: [] });
    fakes.web3.addFault({ match: '/credential', action: { kind: 'status', status: 500 } });
    try {
      const result = await service.guilds.recheckGuild(guild.id, { fresh: true });
      expect(result).toMatchObject({ members: 1, changes: 0, failures: 1 });
      await service.idle(guild.id);
    } finally {
      fakes.web3.clearFaults();
    }
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    expect(roleEdits(fakes, guild.id, userId, human, 'DELETE')).toEqual([]);
    const [link] = await store.getUserLinks(guild.id, userId);
    expect(link?.lastCheckOk).toBe(false);
    expect(link?.lastResult?.isHuman).toHaveLength(1);
  });

  it('changes nothing on a stale answer served during an outage', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('kim');
    fakes.web3.world.setCredentials(
      identity.name,
      gatingCredentials(identity.name, { human: false, spam: true }),
    );
    await fakes.web3bio.getCredentials(identity.name, { fresh: true });
    fakes.web3.addFault({ match: '/credential', action: { kind: 'status', status: 503 } });
    try {
      const result = await service.guilds.recheckGuild(guild.id, { fresh: true });
      expect(result).toMatchObject({ changes: 0, failures: 1 });
    } finally {
      fakes.web3.clearFaults();
    }
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
  });

  it('removes nothing when a never-cached lookup fails', async () => {
    await setUp();
    const { userId } = await linkedMember('lou', { human: false, roles: [human] });
    fakes.web3.addFault({ match: '/credential', action: { kind: 'status', status: 500 } });
    try {
      const result = await service.guilds.recheckGuild(guild.id);
      expect(result).toMatchObject({ members: 1, changes: 0, failures: 1 });
    } finally {
      fakes.web3.clearFaults();
    }
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    const [link] = await store.getUserLinks(guild.id, userId);
    expect(link).toMatchObject({ lastCheckOk: false, lastResult: null });
  });

  it('removes the link, then the role, when the record no longer names the member, each confirmed', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('liam');
    addEnsIdentity(fakes, identity.name, { address: identity.address, discordHandle: 'not-liam' });
    let now = Date.now();
    const timed = track(createService(fakes, store, { now: () => now }));

    expect(await timed.guilds.recheckGuild(guild.id, { fresh: true })).toMatchObject({
      unlinked: 0,
      changes: 0,
    });
    expect(await store.getUserLinks(guild.id, userId)).toHaveLength(1);
    now += 60 * 60_000;
    // The loss of the link is confirmed: the roles it gave go with it.
    const result = await timed.guilds.recheckGuild(guild.id, { fresh: true });
    expect(result).toMatchObject({ members: 1, unlinked: 1, changes: 1 });
    await timed.idle(guild.id);
    expect(await store.getUserLinks(guild.id, userId)).toEqual([]);
    const [unlinked] = await store
      .listAuditEvents({ guildId: guild.id, userId })
      .then((e) => e.filter((x) => x.kind === 'unlinked'));
    expect(unlinked?.reason).toContain('no longer names liam');
    expect(memberRoles(fakes, guild, userId)).toEqual([]);
  });

  it('keeps a record link when the record lookup fails', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('mia');
    fakes.web3.addFault({ match: '/profile', action: { kind: 'status', status: 500 } });
    try {
      const result = await service.guilds.recheckGuild(guild.id, { fresh: true });
      expect(result.unlinked).toBe(0);
    } finally {
      fakes.web3.clearFaults();
    }
    expect((await store.getUserLinks(guild.id, userId)).map((l) => l.identity)).toEqual([identity.name]);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
  });

  it('re-checks record proofs with batched profile lookups', async () => {
    await setUp();
    await verifiedMember('nia');
    await verifiedMember('otto');
    const before = fakes.web3.requests.length;
    await service.guilds.recheckGuild(guild.id, { fresh: true });
    const paths = fakes.web3.requests.slice(before).map((r) => decodeURIComponent(r.path));
    expect(paths.filter((p) => p.startsWith('/profile/batch/'))).toHaveLength(1);
    expect(paths.filter((p) => p.startsWith('/profile/ens/'))).toEqual([]);
    expect(paths.filter((p) => p.startsWith('/credential/'))).toHaveLength(2);
  });

  it('runs one walk per guild at a time: a covered request joins the running one', async () => {
    await setUp();
    await verifiedMember('olga');
    await verifiedMember('oren');
    const credentialRequests = () =>
      fakes.web3.requests.filter((r) => decodeURIComponent(r.path).startsWith('/credential/')).length;
    const before = credentialRequests();
    const [a, b, c] = await Promise.all([
      service.guilds.recheckGuild(guild.id, { fresh: true }),
      service.guilds.recheckGuild(guild.id, { fresh: true }),
      service.guilds.recheckGuild(guild.id),
    ]);
    expect(a).toEqual(b);
    expect(b).toEqual(c);
    expect(credentialRequests() - before).toBe(2);

    const cachedFirst = service.guilds.recheckGuild(guild.id);
    const fresh = service.guilds.recheckGuild(guild.id, { fresh: true });
    await Promise.all([cachedFirst, fresh]);
    expect(credentialRequests() - before).toBe(4);
  });

  it('costs no Discord request for members whose roles are already right', async () => {
    await setUp();
    await verifiedMember('pam');
    const before = fakes.discord.requests.filter((r) => r.path.includes('/roles/')).length;
    const result = await service.guilds.recheckGuild(guild.id, { fresh: true });
    await service.idle(guild.id);
    expect(result.changes).toBe(0);
    expect(fakes.discord.requests.filter((r) => r.path.includes('/roles/')).length).toBe(before);
  });
});

describe('role edits Discord refuses or slows down', () => {
  it('permission block recovery: one 50013 blocks the role without failing anything, and a role update sends the waiting changes', async () => {
    await setUp();
    const first = addEnsIdentity(fakes, uniqueName('quinn'), { discordHandle: 'quinn' });
    const second = addEnsIdentity(fakes, uniqueName('rose'), { discordHandle: 'rose' });
    const quinn = await addMember(fakes, guild, 'quinn');
    const rose = await addMember(fakes, guild, 'rose');
    fakes.discord.addFault({
      method: 'PUT',
      path: new RegExp(`^/guilds/${guild.id}/members/\\d+/roles/`),
      times: 100,
      status: 403,
      body: { message: 'Missing Permissions', code: 50013 },
    });
    await service.verification.verify(guild.id, { id: quinn, username: 'quinn' }, first.name);
    const waiting = await service.verification.verify(guild.id, { id: rose, username: 'rose' }, second.name);
    await service.idle(guild.id);

    // One request met the refusal; the other change waits instead of being tried or failed.
    const puts = () => [
      ...roleEdits(fakes, guild.id, quinn, human),
      ...roleEdits(fakes, guild.id, rose, human),
    ];
    expect(puts()).toHaveLength(1);
    expect(waiting).toMatchObject({ kind: 'linked', blockedRoleIds: [human] });
    const failed = (await store.listAuditEvents({ guildId: guild.id })).filter(
      (e) => e.kind === 'role_failed',
    );
    expect(failed).toEqual([]);
    expect(await store.pendingRoleChanges(guild.id)).toBe(2);
    expect((await service.guilds.status(guild.id)).blockedRoleIds).toEqual([human]);
    expect((await service.members.report(guild.id, rose)).blockedRoleIds).toEqual([human]);
    const warnings = channelMessages(fakes, guild.textChannelId)
      .flatMap((m) => m.split('\n'))
      .filter((l) => l.startsWith('⚠️'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('Missing Permissions');
    expect(warnings[0]).toContain('move it above “Verified”');

    // The admin fixes the permission: Discord reports a role update, and the waiting changes go out.
    service.start();
    fakes.discord.clearFaults();
    const role = fakes.discord.state.guilds.get(guild.id)?.roles.get(human);
    if (!role) throw new Error('role missing');
    fakes.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: guild.id, role: { ...role, name: 'Verified' } });
    await waitFor(
      () =>
        memberRoles(fakes, guild, quinn).includes(human) && memberRoles(fakes, guild, rose).includes(human),
    );
    expect(puts()).toHaveLength(3);
    expect((await service.guilds.status(guild.id)).blockedRoleIds).toEqual([]);
  });

  it('a blocked role is probed once per backoff step, and a successful probe sends the rest', async () => {
    await setUp({ logChannelId: null });
    const blocked = track(
      createService(fakes, store, { worker: { pollMs: 20, probeMs: 150, maxProbeMs: 400 } }),
    );
    const members = [await linkedMember('pia'), await linkedMember('pol'), await linkedMember('pux')];
    fakes.discord.addFault({
      method: 'PUT',
      path: new RegExp(`^/guilds/${guild.id}/members/\\d+/roles/`),
      times: 2,
      status: 403,
      body: { message: 'Missing Permissions', code: 50013 },
    });
    await blocked.guilds.recheckGuild(guild.id, { fresh: true });
    const puts = () => members.flatMap(({ userId }) => roleEdits(fakes, guild.id, userId, human, 'PUT'));
    await waitFor(() => puts().length === 2, 2_000);
    // The first probe came after 150 ms and met the refusal again: the next waits twice as long.
    expect(puts()[1]?.at ?? 0).toBeGreaterThanOrEqual((puts()[0]?.at ?? 0) + 140);
    await waitFor(
      () => members.every(({ userId }) => memberRoles(fakes, guild, userId).includes(human)),
      3_000,
    );
    // Two refused probes, then one that worked and the two changes that waited behind it.
    expect(puts()).toHaveLength(5);
    expect(puts()[2]?.at ?? 0).toBeGreaterThanOrEqual((puts()[1]?.at ?? 0) + 290);
  });

  it('a role moved above the bot after setup: no request, the admins are told, and moving it back sends the change', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('sam'), { discordHandle: 'sam' });
    const userId = await addMember(fakes, guild, 'sam');
    const role = fakes.discord.state.guilds.get(guild.id)?.roles.get(human);
    if (!role) throw new Error('role missing');
    const moved = { ...role, position: 50 };
    fakes.discord.state.guilds.get(guild.id)?.roles.set(human, moved);
    fakes.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: guild.id, role: moved });
    await waitFor(() => fakes.client.guilds.cache.get(guild.id)?.roles.cache.get(human)?.rawPosition === 50);

    service.start();
    await service.verification.verify(guild.id, { id: userId, username: 'sam' }, identity.name);
    await service.idle(guild.id);
    expect(roleEdits(fakes, guild.id, userId, human)).toEqual([]);
    expect(await store.pendingRoleChanges(guild.id)).toBe(1);
    expect(channelMessages(fakes, guild.textChannelId).join('\n')).toContain(
      'Move the bot’s role above “Verified”',
    );

    fakes.discord.state.guilds.get(guild.id)?.roles.set(human, role);
    fakes.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: guild.id, role });
    await waitFor(() => memberRoles(fakes, guild, userId).includes(human));
    expect(roleEdits(fakes, guild.id, userId, human)).toHaveLength(1);
  });

  it('429 on role edits: every edit applied, none sent before retry_after', async () => {
    await setUp({ logChannelId: null });
    const members: string[] = [];
    for (const name of ['tara', 'uma', 'vic', 'wes', 'xia']) {
      const { userId } = await linkedMember(name);
      members.push(userId);
    }
    fakes.discord.limitRoleEdits(guild.id, 2);
    fakes.discord.addFault({
      method: 'PUT',
      path: new RegExp(`^/guilds/${guild.id}/members/\\d+/roles/`),
      times: 1,
      status: 429,
      body: { retry_after: 0.4 },
    });
    try {
      const result = await service.guilds.recheckGuild(guild.id);
      expect(result.changes).toBe(5);
      await service.idle(guild.id);
    } finally {
      fakes.discord.limitRoleEdits(guild.id, null);
    }
    for (const userId of members) {
      expect(memberRoles(fakes, guild, userId)).toEqual([human]);
      expect(roleEdits(fakes, guild.id, userId, human).filter((r) => r.status === 204)).toHaveLength(1);
    }
    const edits = fakes.discord.requests.filter(
      (r) => r.method === 'PUT' && r.path.startsWith(`/guilds/${guild.id}/members/`),
    );
    const limited = edits.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const hit of limited) {
      const next = edits.find(
        (r) => r.at > hit.at || (r.at === hit.at && edits.indexOf(r) > edits.indexOf(hit)),
      );
      expect(next).toBeDefined();
      // The forced 429 says 0.4 s; the limiter's own say what is left of its 1 s window.
      if (hit.fault) expect((next?.at ?? 0) - hit.at).toBeGreaterThanOrEqual(400);
    }
    // The limiter never let more than 2 edits through in a window, and no limiter 429 was provoked
    // by a request sent while discord.js knew the bucket was empty.
    const successes = edits.filter((r) => r.status === 204).map((r) => r.at);
    for (const at of successes) {
      expect(successes.filter((t) => t >= at && t < at + 1_000).length).toBeLessThanOrEqual(2);
    }
  });
});

describe('resuming after a stop or a crash', () => {
  it('a new service on the same store applies every queued change exactly once', async () => {
    const leaseStore = await openStore({ leaseMs: 150 });
    const first = track(createService(fakes, leaseStore));
    await first.guilds.setup(
      guild.id,
      { humanRoleId: human, spamRoleId: null, riskyRoleId: null, minScore: null, logChannelId: null },
      guild.ownerId,
    );
    await first.idle(guild.id);
    const members: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const name = `res${i}`;
      const { userId } = await linkedMember(name, { store: leaseStore });
      members.push(userId);
    }
    fakes.discord.limitRoleEdits(guild.id, 2);
    try {
      await first.guilds.recheckGuild(guild.id);
      await fakes.discord.waitForRequest(
        (r) => r.method === 'PUT' && r.status === 204 && r.path.startsWith(`/guilds/${guild.id}/members/`),
      );
      await first.stop();
      const left = await leaseStore.pendingRoleChanges(guild.id);
      expect(left).toBeGreaterThan(0);

      // A crash: one change claimed (and even applied on Discord) by a worker that died before recording it.
      const [claimed] = await leaseStore.claimRoleChanges(guild.id, 1);
      if (!claimed) throw new Error('nothing left to claim');
      const crashedOn = fakes.discord.state.guilds.get(guild.id)?.members.get(claimed.userId);
      if (crashedOn)
        fakes.discord.updateMember(guild.id, claimed.userId, { roles: [...crashedOn.roles, human] });

      const second = track(createService(fakes, leaseStore));
      second.start();
      await waitFor(() => members.every((m) => memberRoles(fakes, guild, m).includes(human)), 10_000);
      await second.idle(guild.id);
    } finally {
      fakes.discord.limitRoleEdits(guild.id, null);
    }
    for (const userId of members) {
      const applied = roleEdits(fakes, guild.id, userId, human, 'PUT').filter((r) => r.status === 204);
      expect(applied.length, `edits for ${userId}`).toBeLessThanOrEqual(1);
    }
    const manual = members.filter(
      (m) => roleEdits(fakes, guild.id, m, human, 'PUT').filter((r) => r.status === 204).length === 0,
    );
    expect(manual).toHaveLength(1);
    expect(await leaseStore.pendingRoleChanges(guild.id)).toBe(0);
    await leaseStore.close();
  });
});

describe('the roles a proof decides are durable', () => {
  /** The store, with every member sync of `userId` failing (a database fault) while `failing()` is true. */
  function syncFailsFor(base: GatingStore, userId: () => string, failing: () => boolean): GatingStore {
    const wrapped = Object.create(base) as GatingStore;
    wrapped.openRoleChanges = async (guildId, member) => {
      if (failing() && member === userId())
        throw Object.assign(new Error('terminating connection due to administrator command'), {
          code: '57P01',
        });
      return base.openRoleChanges(guildId, member);
    };
    return wrapped;
  }
  const dueChecks = (s: GatingStore) => s.listDueChecks(Date.now() + 60_000, 100);

  it('a synced proof leaves no due check behind', async () => {
    await setUp();
    const { userId } = await verifiedMember('dan');
    expect((await dueChecks(store)).filter((c) => c.userId === userId)).toEqual([]);
  });

  it('a failed sync after the proof: the reply says the roles follow, and the due-check pass applies them', async () => {
    await setUp();
    let failing = true;
    let member = '';
    const flaky = syncFailsFor(
      store,
      () => member,
      () => failing,
    );
    const faulty = track(createService(fakes, flaky));
    const identity = addEnsIdentity(fakes, uniqueName('eve'), { discordHandle: 'eve' });
    member = await addMember(fakes, guild, 'eve');
    const result = await faulty.verification.verify(guild.id, { id: member, username: 'eve' }, identity.name);
    if (result.kind !== 'linked') throw new Error(`not linked: ${result.kind}`);
    expect(result.rolesLater).toBe(true);
    expect(result.diff).toEqual({ add: [], remove: [] });
    await faulty.idle(guild.id);
    expect(memberRoles(fakes, guild, member)).toEqual([]);
    expect(await dueChecks(store)).toEqual([
      { guildId: guild.id, userId: member, dueAt: result.link.provenAt },
    ]);
    // A pass while the fault lasts keeps the check.
    expect(await faulty.dueChecks.run()).toBe(0);
    expect(await dueChecks(store)).toHaveLength(1);
    failing = false;
    expect(await faulty.dueChecks.run()).toBe(1);
    await faulty.idle(guild.id);
    expect(memberRoles(fakes, guild, member)).toEqual([human]);
    expect(await dueChecks(store)).toEqual([]);
  });

  it('survives a crash: a service started on the same store applies the roles by itself', async () => {
    await setUp();
    const member = await addMember(fakes, guild, 'fay');
    const identity = addEnsIdentity(fakes, uniqueName('fay'), { discordHandle: 'fay' });
    const crashed = track(
      createService(
        fakes,
        syncFailsFor(
          store,
          () => member,
          () => true,
        ),
      ),
    );
    const result = await crashed.verification.verify(
      guild.id,
      { id: member, username: 'fay' },
      identity.name,
    );
    expect(result).toMatchObject({ kind: 'linked', rolesLater: true });
    await crashed.stop();
    expect(memberRoles(fakes, guild, member)).toEqual([]);

    const restarted = track(createService(fakes, store, { dueCheckMs: 50 }));
    restarted.start();
    await waitFor(() => memberRoles(fakes, guild, member).includes(human));
    await restarted.idle(guild.id);
    expect(await dueChecks(store)).toEqual([]);
  });

  it('a member who lost a link to the proof loses its roles even when their own sync failed', async () => {
    await setUp();
    const address = signer.address.toLowerCase();
    const identity = addEnsIdentity(fakes, uniqueName('gus'), { address, discordHandle: 'gus' });
    const first = await addMember(fakes, guild, 'gus');
    await service.verification.verify(guild.id, { id: first, username: 'gus' }, identity.name);
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, first)).toEqual([human]);
    let failing = true;
    const faulty = track(
      createService(
        fakes,
        syncFailsFor(
          store,
          () => first,
          () => failing,
        ),
      ),
    );
    const second = await addMember(fakes, guild, 'gus-alt');
    const record = usedNonce(second, identity.name, address, 'e');
    expect(await faulty.verification.completeSignature({ record, address: signer.address })).toEqual({
      ok: true,
    });
    await faulty.idle(guild.id);
    expect(memberRoles(fakes, guild, second)).toEqual([human]);
    // The first member's sync (the link moved away) failed: the role stays, for now.
    expect(memberRoles(fakes, guild, first)).toEqual([human]);
    expect((await dueChecks(store)).map((c) => c.userId)).toEqual([first]);
    failing = false;
    expect(await faulty.dueChecks.run()).toBe(1);
    await faulty.idle(guild.id);
    expect(memberRoles(fakes, guild, first)).toEqual([]);
    expect(await dueChecks(store)).toEqual([]);
  });
});

describe('setup', () => {
  it('refuses roles it could not manage, naming each role and the fix, and saves nothing', async () => {
    const above = await addRole(fakes, guild, 'Moderators', 40);
    const managed = await addRole(fakes, guild, 'Server Booster', 1, true);
    const result = await service.guilds.setup(
      guild.id,
      {
        humanRoleId: above.id,
        spamRoleId: managed.id,
        riskyRoleId: guild.id,
        minScore: null,
        logChannelId: null,
      },
      guild.ownerId,
    );
    expect(result).toMatchObject({ settings: null });
    expect(result.problems.map((p) => [p.roleId, p.problem])).toEqual([
      [above.id, 'above_bot'],
      [managed.id, 'managed'],
      [guild.id, 'everyone'],
    ]);
    expect(result.problems[0]).toMatchObject({ roleName: 'Moderators', problem: 'above_bot' });
    expect(await store.getGuildSettings(guild.id)).toBeUndefined();
  });

  it('saves the rules with an audit event and re-checks every linked member with fresh lookups', async () => {
    const { userId, identity } = await linkedMember('yara');
    await fakes.web3bio.getCredentials(identity.name);
    fakes.web3.world.setCredentials(
      identity.name,
      gatingCredentials(identity.name, { human: false, spam: true }),
    );

    const { settings } = await setUp();
    expect(settings).toMatchObject({
      guildId: guild.id,
      enabled: true,
      humanRoleId: human,
      spamRoleId: spam,
      minScore: 20,
      spamRemovesHuman: true,
    });
    expect(memberRoles(fakes, guild, userId)).toEqual([spam]);
    const events = await store.listAuditEvents({ guildId: guild.id, userId: guild.ownerId });
    expect(events.map((e) => e.kind)).toEqual(['settings_changed']);
    expect((await store.getGuildSettings(guild.id))?.lastFullSyncAt).toEqual(expect.any(Number));
  });

  it('disable keeps the settings but switches gating off', async () => {
    expect(await service.guilds.disable(guild.id, guild.ownerId)).toEqual({ kind: 'not_set_up' });
    await setUp();
    expect(await service.guilds.disable(guild.id, guild.ownerId)).toEqual({ kind: 'disabled' });
    expect(await service.guilds.getSettings(guild.id)).toMatchObject({ enabled: false, humanRoleId: human });
    expect(await service.guilds.disable(guild.id, guild.ownerId)).toEqual({ kind: 'already_off' });
    expect(await service.guilds.recheckGuild(guild.id)).toEqual({
      pendingRemovals: 0,
      heldRemovals: 0,
      members: 0,
      changes: 0,
      failures: 0,
      unlinked: 0,
    });
  });
});

describe('members and links', () => {
  it('a linked member who rejoins gets the role back on join', async () => {
    await setUp();
    const { userId } = await verifiedMember('zed');
    fakes.discord.removeMember(guild.id, userId);
    const joined = memberJoined(fakes.client, guild.id, userId);
    fakes.discord.addMember(guild.id, { id: userId, username: 'zed' }, { dispatchJoin: true });
    const member = await joined;
    await service.members.onMemberJoin(member);
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
  });

  it('a member who joins without links costs no lookup', async () => {
    await setUp();
    const userId = nextSnowflake();
    const joined = memberJoined(fakes.client, guild.id, userId);
    fakes.discord.addMember(guild.id, { id: userId, username: 'newbie' }, { dispatchJoin: true });
    const member = await joined;
    const before = fakes.web3.requests.length;
    await service.members.onMemberJoin(member);
    expect(fakes.web3.requests.length).toBe(before);
  });

  it('unverify removes the link and the human role, but a spam flag stays', async () => {
    await setUp();
    const identity = addEnsIdentity(fakes, uniqueName('amy'), {
      discordHandle: 'amy',
      human: false,
      spam: true,
    });
    const userId = await addMember(fakes, guild, 'amy', [human]);
    await service.verification.verify(guild.id, { id: userId, username: 'amy' }, identity.name);
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([spam]);

    const { verification } = service;
    expect(await verification.unverify(guild.id, userId, await verification.namesOf('nothing.eth'))).toBe(0);
    const named = await verification.namesOf(identity.name.toUpperCase());
    expect(named).toEqual([identity.name]);
    expect(await verification.unverify(guild.id, userId, named)).toBe(1);
    await service.idle(guild.id);
    expect(await store.getUserLinks(guild.id, userId)).toEqual([
      expect.objectContaining({ identity: identity.name, releasedAt: expect.any(Number) }),
    ]);
    const report = await service.members.report(guild.id, userId);
    expect(report.links).toEqual([]);
    expect(report.released.map((l) => l.identity)).toEqual([identity.name]);
    expect(memberRoles(fakes, guild, userId)).toEqual([spam]);
  });

  it('unverify without a link removes the human role of a verified member', async () => {
    await setUp();
    const { userId } = await verifiedMember('ben');
    expect(await service.verification.unverify(guild.id, userId)).toBe(1);
    await service.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([]);
  });

  it('an identity proven by another member moves to them', async () => {
    await setUp();
    const address = signer.address.toLowerCase();
    const identity = addEnsIdentity(fakes, uniqueName('cat'), { address, discordHandle: 'cat' });
    const first = await addMember(fakes, guild, 'cat');
    await service.verification.verify(guild.id, { id: first, username: 'cat' }, identity.name);
    const second = await addMember(fakes, guild, 'cat-alt');
    const record = usedNonce(second, identity.name, address, 'f');
    await service.verification.completeSignature({ record, address: signer.address });
    await service.idle(guild.id);
    expect(await store.getIdentityLinks(guild.id, identity.name)).toEqual([
      expect.objectContaining({ userId: second }),
    ]);
    expect(memberRoles(fakes, guild, first)).toEqual([]);
    expect(memberRoles(fakes, guild, second)).toEqual([human]);
  });

  it('refuses a sixth identity', async () => {
    await setUp();
    const userId = await addMember(fakes, guild, 'dan');
    for (let i = 0; i < 5; i += 1) {
      await store.saveLink(
        {
          guildId: guild.id,
          userId,
          identity: `dan${i}.eth`,
          platform: 'ens',
          address: null,
          proofMethod: 'signature',
          provenAt: Date.now(),
        },
        'seeded',
      );
    }
    const result = await service.verification.verify(guild.id, { id: userId, username: 'dan' }, 'dan9.eth');
    expect(result).toEqual({ kind: 'refused', refusal: { code: 'too_many_links', count: 5, max: 5 } });
  });
});

describe('moderator views', () => {
  it('report shows links, credentials, decisions and the roles held, without writing anything', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('eve');
    fakes.web3.world.setCredentials(identity.name, { isHuman: [], isRisky: [], isSpam: [] });
    const eventsBefore = await store.listAuditEvents({ guildId: guild.id });
    const report = await service.members.report(guild.id, userId, { fresh: true });
    expect(report.links.map((l) => l.identity)).toEqual([identity.name]);
    expect(report.evidence).toEqual([
      { identity: identity.name, credentials: { isHuman: [], isRisky: [], isSpam: [] } },
    ]);
    expect(report.decisions.find((d) => d.roleId === human)?.want).toBe(false);
    expect(report.currentRoleIds).toEqual([human]);
    expect(report.diff.remove.map((r) => r.roleId)).toEqual([human]);
    expect(await store.listAuditEvents({ guildId: guild.id })).toEqual(eventsBefore);
    expect(await store.pendingRoleChanges(guild.id)).toBe(0);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
  });

  it('preview counts what a re-check would change, with a sample, and changes nothing', async () => {
    await setUp();
    const keep = await verifiedMember('fay');
    const lose = await verifiedMember('gus');
    fakes.web3.world.setCredentials(lose.identity.name, { isHuman: [], isRisky: [], isSpam: [] });
    await fakes.web3bio.getCredentials(lose.identity.name, { fresh: true });
    const preview = await service.guilds.preview(guild.id);
    expect(preview).toMatchObject({ members: 2, addCount: 0, removeCount: 1, unknownCount: 0 });
    expect(preview.sample).toEqual([
      {
        userId: lose.userId,
        username: 'gus',
        add: [],
        remove: [human],
        because: [expect.stringContaining('no unexpired isHuman')],
      },
    ]);
    expect(await store.pendingRoleChanges(guild.id)).toBe(0);
    expect(memberRoles(fakes, guild, keep.userId)).toEqual([human]);
    expect(memberRoles(fakes, guild, lose.userId)).toEqual([human]);
  });

  it('status reports permissions, intents, problems, last sync, queue and links', async () => {
    expect(await service.guilds.status(guild.id)).toMatchObject({
      enabled: false,
      settings: null,
      problems: [],
      linkedMembers: 0,
    });
    await setUp();
    await verifiedMember('hana');
    const status = await service.guilds.status(guild.id);
    expect(status).toMatchObject({
      enabled: true,
      manageRoles: true,
      guildMembersIntent: true,
      problems: [],
      queueLength: 0,
      linkedMembers: 1,
      lastFullSyncAt: expect.any(Number),
    });
  });
});

describe('start and the periodic re-check', () => {
  it('runs the scheduled task over enabled guilds with cached lookups, and catches up at start', async () => {
    await setUp();
    const { userId, identity } = await verifiedMember('ian');
    let task: (() => Promise<void>) | undefined;
    const scheduler = {
      start(t: () => Promise<void>) {
        task = t;
      },
      stop() {},
    };
    let offset = 0;
    const clock = () => Date.now() + offset;
    const periodic = track(createService(fakes, store, { scheduler, recheckIntervalMs: 1, now: clock }));
    periodic.start();
    await periodic.idle(guild.id);
    const afterCatchUp = (await store.getGuildSettings(guild.id))?.lastFullSyncAt ?? 0;
    expect(afterCatchUp).toBeGreaterThan(0);

    fakes.web3.world.setCredentials(identity.name, { isHuman: [], isRisky: [], isSpam: [] });
    await fakes.web3bio.getCredentials(identity.name, { fresh: true });
    if (!task) throw new Error('the scheduler was not started');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await task();
    await periodic.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([human]);
    offset += 60 * 60_000;
    await task();
    await periodic.idle(guild.id);
    expect(memberRoles(fakes, guild, userId)).toEqual([]);
    expect((await store.getGuildSettings(guild.id))?.lastFullSyncAt).toBeGreaterThan(afterCatchUp);
  });
});
