/**
 * Role gating played by its attackers and through an upstream incident (issue #7, the threat model):
 * the real bot against the stand-in Discord and Web3.bio, every move made through slash commands, the
 * signing page or the stand-ins' own answers, and every outcome read where it lands (roles held,
 * requests Discord received, log-channel lines, direct messages, the store).
 */
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import {
  addIdentity,
  addMember,
  closeGating,
  directMessages,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  logChannelMessages,
  option,
  roleEdits,
  seen,
  setup,
  signFromReply,
  signingLinkOf,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';

afterEach(closeGating);

/** The guild's gating settings as stored (undefined when setup never saved). */
const settingsOf = (g: GatingHarness) => g.gating.service.guilds.getSettings(g.guildId);

/** Log-channel lines, one per notice. */
function logLines(g: GatingHarness): string[] {
  return logChannelMessages(g).flatMap((m) => m.content.split('\n'));
}

/** `count` members proven by record, each holding the human role. */
async function humans(
  g: GatingHarness,
  prefix: string,
  count: number,
): Promise<{ id: string; name: string }[]> {
  const members: { id: string; name: string }[] = [];
  for (let i = 0; i < count; i += 1) {
    const username = `${prefix}${i}`;
    const id = await addMember(g, username);
    const name = `${username}.eth`;
    addIdentity(g, name, { discordHandle: username });
    await verifyByRecord(g, name, id);
    members.push({ id, name });
  }
  await waitFor(() => members.every((m) => hasRole(g, m.id, g.humanRoleId)), 'every member to be human');
  return members;
}

describe('escalation: a moderator cannot make the bot hand out what they could not', () => {
  it('refuses a role at or above the invoker’s highest role, naming it; the setup stays unchanged', async () => {
    const g = await startGating();
    // Manage Roles through a role at position 1: below Verified Human (2) and Spam (3).
    const moderator = await addMember(g, 'mod', { permissions: PermissionFlagsBits.ManageRoles });
    const result = await gatingCommandRun(
      g,
      'setup',
      [option(ApplicationCommandOptionType.Role, 'human-role', g.humanRoleId)],
      moderator,
    );
    const text = seen(visibleMessage(result));
    expect(text).toContain('Verified Human');
    expect(text).toContain('at or above your highest role');
    expect(text).toContain('Nothing was saved');
    expect(await settingsOf(g)).toBeUndefined();

    // The owner can: Discord's own rule does not bind the owner.
    await setup(g);
    expect((await settingsOf(g))?.humanRoleId).toBe(g.humanRoleId);
  });

  it('refuses, for anyone, a role carrying an elevated permission, naming the permission', async () => {
    const g = await startGating();
    const admins = g.h.discord.addRole(g.guildId, {
      name: 'Admins',
      position: 4,
      permissions: PermissionFlagsBits.Administrator.toString(),
    });
    const mods = g.h.discord.addRole(g.guildId, {
      name: 'Mods',
      position: 5,
      permissions: PermissionFlagsBits.BanMembers.toString(),
    });
    await waitFor(
      () => g.h.bot.client.guilds.cache.get(g.guildId)?.roles.cache.has(mods.id) === true,
      'the roles',
    );
    for (const [role, permission] of [
      [admins, 'Administrator'],
      [mods, 'Ban Members'],
    ] as const) {
      const result = await gatingCommandRun(g, 'setup', [
        option(ApplicationCommandOptionType.Role, 'human-role', g.humanRoleId),
        option(ApplicationCommandOptionType.Role, 'spam-role', role.id),
      ]);
      const text = seen(visibleMessage(result));
      expect(text).toContain(`carries the ${permission} permission`);
      expect(await settingsOf(g)).toBeUndefined();
    }
  });

  it('a configured role that later gains Administrator is no longer granted; status and the log say why', async () => {
    const g = await startGating();
    await setup(g);
    const role = g.h.discord.state.guilds.get(g.guildId)?.roles.get(g.humanRoleId);
    if (!role) throw new Error('role missing');
    const elevated = { ...role, permissions: PermissionFlagsBits.Administrator.toString() };
    g.h.discord.state.guilds.get(g.guildId)?.roles.set(g.humanRoleId, elevated);
    g.h.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: g.guildId, role: elevated });
    await waitFor(
      () =>
        g.h.bot.client.guilds.cache
          .get(g.guildId)
          ?.roles.cache.get(g.humanRoleId)
          ?.permissions.has('Administrator') === true,
      'the role update',
    );

    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    expect(roleEdits(g, ALICE, g.humanRoleId)).toEqual([]);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
    await waitFor(() => logLines(g).some((l) => l.includes('Administrator')), 'the log line');
    expect(logLines(g).find((l) => l.includes('Administrator'))).toContain(
      'never hands out a role with moderator powers',
    );
    const status = seen(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status).toContain('carries the Administrator permission');
  });
});

describe('flag shedding: a spam flag holds until its own identity clears', () => {
  it('linking a clean identity and unlinking the flagged one keeps the spam role; whoami and check name the holder', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    addIdentity(g, 'flagged.eth', { discordHandle: 'alice', human: false });
    g.h.upstream.world.setCredentials(
      'flagged.eth',
      gatingCredentials('flagged.eth', { human: false, spam: true }),
    );
    addIdentity(g, 'clean.eth', { discordHandle: 'alice', human: true });
    await verifyByRecord(g, 'flagged.eth');
    expect(hasRole(g, ALICE, g.spamRoleId)).toBe(true);
    await verifyByRecord(g, 'clean.eth');

    const unverify = await g.h.run('unverify', { identity: 'flagged.eth' }, { userId: ALICE });
    expect(seen(visibleMessage(unverify))).toContain('is no longer linked to you');
    await g.gating.service.idle(g.guildId);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.spamRoleId)).toBe(true);
    expect(roleEdits(g, ALICE, g.spamRoleId, 'DELETE')).toEqual([]);

    const whoami = seen(visibleMessage(await g.h.run('whoami', {}, { userId: ALICE })));
    expect(whoami).toContain('Flags held by unlinked identities');
    expect(whoami).toContain('flagged.eth');
    const check = seen(
      visibleMessage(
        await gatingCommandRun(g, 'check', [option(ApplicationCommandOptionType.User, 'member', ALICE)]),
      ),
    );
    expect(check).toContain('flagged.eth');
    expect(check).toContain('isSpam');

    // Only the flagged identity's own credentials clear it: seen clean twice, then the role goes.
    g.h.upstream.world.setCredentials('flagged.eth', gatingCredentials('flagged.eth', { human: false }));
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.spamRoleId)).toBe(true);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.spamRoleId)).toBe(false);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ identity: 'clean.eth', releasedAt: null }),
    ]);
  });
});

describe('one wallet, one member', () => {
  it('a name pointing at a wallet someone else backs is refused; a signature by the wallet moves it, and both are told', async () => {
    const g = await startGating();
    await setup(g);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const address = wallet.address.toLowerCase();
    addIdentity(g, 'w.eth', { address, discordHandle: 'alice' });
    addIdentity(g, 'sub.w.eth', { address, discordHandle: 'bob' });
    g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
    await verifyByRecord(g, 'w.eth', ALICE);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);

    // Bob's free subname resolves to the same wallet: its record names Bob, but proves nothing of the wallet.
    const sub = seen(await verifyByRecord(g, 'sub.w.eth', BOB));
    expect(sub).toContain('already backs another member');
    expect(await g.gating.store.getUserLinks(g.guildId, BOB)).toEqual([]);
    expect(hasRole(g, BOB, g.humanRoleId)).toBe(false);

    // Carol signs with the wallet itself: the address moves to her, and Alice loses what it gave.
    const carol = await addMember(g, 'carol');
    const reply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: carol }));
    const signed = await signFromReply(g, reply, wallet);
    expect(signed).toMatchObject({ status: 200, body: { ok: true } });
    await g.gating.service.idle(g.guildId);
    await waitFor(() => !hasRole(g, ALICE, g.humanRoleId), 'Alice to lose the role');
    expect(hasRole(g, carol, g.humanRoleId)).toBe(true);
    expect(
      (await g.gating.store.getAddressLinks(g.guildId, address)).filter((l) => l.releasedAt === null),
    ).toEqual([expect.objectContaining({ userId: carol, proofMethod: 'signature' })]);
    await waitFor(() => directMessages(g, ALICE).length > 0, 'the direct message to Alice');
    expect(directMessages(g, ALICE)[0]).toContain('moved to another Discord account');
    expect(logLines(g).some((l) => l.includes('w.eth') && l.includes('Unlinked'))).toBe(true);
  });
});

describe('an upstream incident never strips the server', () => {
  it('a "not found" storm for known identities removes nothing, holds the pass and alerts once', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const members = await humans(g, 'storm', 6);
    for (const m of members) g.h.upstream.world.setCredentials(m.name, null);

    const first = seen(visibleMessage(await gatingCommandRun(g, 'recheck')));
    await g.gating.service.idle(g.guildId);
    expect(first).toContain('Held back as a mass removal: 6');
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    const one = seen(
      visibleMessage(
        await gatingCommandRun(g, 'recheck', [
          option(ApplicationCommandOptionType.User, 'member', members[0]?.id ?? ''),
        ]),
      ),
    );
    await g.gating.service.idle(g.guildId);
    expect(one).toContain('Not removed yet');

    for (const m of members) expect(hasRole(g, m.id, g.humanRoleId)).toBe(true);
    expect(g.h.discord.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/roles/'))).toEqual(
      [],
    );
    await waitFor(() => logLines(g).some((l) => l.includes('Held back')), 'the breaker alert');
    expect(logLines(g).filter((l) => l.includes('Held back'))).toHaveLength(1);
    expect(logLines(g).find((l) => l.includes('Held back'))).toContain('from 6 of its 6 holders');
    const status = seen(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status).toContain('6 removals held back');
  });

  it('a 200 carrying "Network Error" is a failure: nothing is removed, by a pass or by a moderator', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    g.h.upstream.addFault({
      match: '/credential',
      action: { kind: 'status', status: 200, body: { identity: 'alice.eth', error: 'Network Error' } },
    });
    for (let pass = 0; pass < 2; pass += 1) {
      const text = seen(visibleMessage(await gatingCommandRun(g, 'recheck')));
      expect(text).toContain('Lookups failed for 1 member');
    }
    const member = seen(
      visibleMessage(
        await gatingCommandRun(g, 'recheck', [option(ApplicationCommandOptionType.User, 'member', ALICE)]),
      ),
    );
    await g.gating.service.idle(g.guildId);
    expect(member).toContain('already match');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(roleEdits(g, ALICE, g.humanRoleId, 'DELETE')).toEqual([]);
    const [link] = await g.gating.store.getUserLinks(g.guildId, ALICE);
    expect(link?.lastResult?.isHuman).toHaveLength(1);
  });

  it('the mass-removal breaker: real answers taking the role from many wait for a moderator; additions go through', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const members = await humans(g, 'lost', 6);
    for (const m of members) {
      g.h.upstream.world.setCredentials(m.name, gatingCredentials(m.name, { human: false }));
    }
    const newcomer = await addMember(g, 'newcomer');
    addIdentity(g, 'newcomer.eth', { discordHandle: 'newcomer' });
    await g.gating.store.saveLink(
      {
        guildId: g.guildId,
        userId: newcomer,
        identity: 'newcomer.eth',
        platform: 'ens',
        address: null,
        proofMethod: 'record',
        provenAt: Date.now(),
      },
      'proven earlier',
    );

    const held = seen(visibleMessage(await gatingCommandRun(g, 'recheck')));
    await g.gating.service.idle(g.guildId);
    expect(held).toContain('Held back as a mass removal: 6');
    for (const m of members) expect(hasRole(g, m.id, g.humanRoleId)).toBe(true);
    expect(hasRole(g, newcomer, g.humanRoleId)).toBe(true);
    await waitFor(() => logLines(g).some((l) => l.includes('Held back')), 'the breaker alert');
    const alert = logLines(g).find((l) => l.includes('Held back')) ?? '';
    expect(alert).toMatch(/from 6 of its [67] holders/);
    expect(alert).toContain('confirm-removals:true');
    // The audit trail has the hold and the pass, with the holders counted from the member list (the
    // owners' dashboard charts them).
    const store = g.gating.store;
    // (The newcomer's role may or may not have landed when the pass read the member list.)
    const hold = await store.latestAuditEvent(g.guildId, 'removals_held');
    expect(hold).toMatchObject({ roleId: g.humanRoleId, details: { count: 6 } });
    const pass = await store.latestAuditEvent(g.guildId, 'recheck_pass');
    expect(pass).toMatchObject({ details: { complete: true, members: 7, heldRemovals: 6 } });
    const holders = (pass?.details as { holders?: { human: number; flagged: number } } | undefined)?.holders;
    expect(holders?.flagged).toBe(0);
    expect([6, 7]).toContain(holders?.human);
    expect((hold?.details as { holders?: number } | undefined)?.holders).toBe(holders?.human);
    const today = Math.floor(Date.now() / 86_400_000);
    expect(await store.countAuditDaily(g.guildId, ['removals_held', 'recheck_pass'], today - 1)).toEqual([
      { metric: 'recheck_pass', day: today, count: 2 },
      { metric: 'removals_held', day: today, count: 6 },
    ]);

    const confirmed = await gatingCommandRun(g, 'recheck', [
      option(ApplicationCommandOptionType.Boolean, 'confirm-removals', true),
    ]);
    expect(seen(visibleMessage(confirmed))).toContain('Role changes queued: 6');
    await g.gating.service.idle(g.guildId);
    for (const m of members) expect(hasRole(g, m.id, g.humanRoleId)).toBe(false);
    expect(hasRole(g, newcomer, g.humanRoleId)).toBe(true);
  });
});

describe('permission block recovery', () => {
  it('one 50013 blocks the role without failing anything; replies say why; a role update sends the waiting changes', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    addIdentity(g, 'bob.eth', { discordHandle: 'bob' });
    g.h.discord.addFault({
      method: 'PUT',
      path: /\/members\/\d+\/roles\/\d+$/,
      status: 403,
      body: { message: 'Missing Permissions', code: 50_013 },
      times: Number.POSITIVE_INFINITY,
    });

    await verifyByRecord(g, 'alice.eth', ALICE);
    const bobReply = seen(await verifyByRecord(g, 'bob.eth', BOB));
    expect(bobReply).toContain('wait on a permission problem');
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);

    const puts = () => g.h.discord.requests.filter((r) => r.method === 'PUT' && r.path.includes('/roles/'));
    expect(puts()).toHaveLength(1);
    // Nothing is failed or lost: both changes wait for the fix.
    expect(await g.gating.store.pendingRoleChanges(g.guildId)).toBe(2);
    const events = await g.gating.store.listAuditEvents({ guildId: g.guildId });
    expect(events.filter((e) => e.kind === 'role_failed')).toEqual([]);
    await waitFor(() => logLines(g).some((l) => l.includes('Missing Permissions')), 'the admin message');
    const notice = logLines(g).filter((line) => line.includes('Missing Permissions'));
    expect(notice).toHaveLength(1);
    expect(notice[0]).toContain('Give the bot’s role Manage Roles and move it above “Verified Human”');
    expect(seen(visibleMessage(await g.h.run('whoami', {}, { userId: BOB })))).toContain(
      'wait on a permission problem',
    );
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status')))).toContain('Waiting on permissions');

    // An admin fixes the role: Discord sends GUILD_ROLE_UPDATE, and the waiting changes go out at once.
    g.h.discord.clearFaults();
    const role = g.h.discord.state.guilds.get(g.guildId)?.roles.get(g.humanRoleId);
    if (!role) throw new Error('role missing');
    g.h.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: g.guildId, role });
    await waitFor(
      () => hasRole(g, ALICE, g.humanRoleId) && hasRole(g, BOB, g.humanRoleId),
      'the roles after the fix',
    );
    expect(puts()).toHaveLength(3);
  });
});

describe('link cap', () => {
  it('seven challenges opened before the cap and all signed: only five links, the rest refused with the reason', async () => {
    const g = await startGating();
    await setup(g);
    const replies: ReturnType<typeof visibleMessage>[] = [];
    const wallets = Array.from({ length: 7 }, () => privateKeyToAccount(generatePrivateKey()));
    const open = async (from: number, to: number) => {
      for (const wallet of wallets.slice(from, to)) {
        replies.push(
          visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: ALICE })),
        );
      }
    };
    const outcomes: Awaited<ReturnType<typeof signFromReply>>[] = [];
    const sign = async (from: number, to: number) => {
      for (let i = from; i < to; i += 1) {
        const [reply, wallet] = [replies[i], wallets[i]];
        if (!reply || !wallet) throw new Error('no reply');
        outcomes.push(await signFromReply(g, reply, wallet));
      }
    };
    // An account holds at most five open challenges, so they are opened in two rounds, all before the
    // fifth link: five, two of them signed, then the last two.
    await open(0, 5);
    await sign(0, 2);
    await open(5, 7);
    await sign(2, 7);
    await g.gating.service.idle(g.guildId);
    expect(outcomes.map((o) => o.status)).toEqual([200, 200, 200, 200, 200, 409, 409]);
    expect(outcomes[5]?.body.message).toContain('most verified identities allowed');
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toHaveLength(5);
    expect(embedOf(visibleMessage(await g.h.run('whoami', {}, { userId: ALICE }))).description).toContain(
      '5 proven identities',
    );
  });
});

describe('challenge cap', () => {
  it("an account's sixth open challenge replaces its first: that link is gone, the five others still work", async () => {
    const g = await startGating();
    await setup(g);
    const wallets = Array.from({ length: 6 }, () => privateKeyToAccount(generatePrivateKey()));
    const replies: ReturnType<typeof visibleMessage>[] = [];
    for (const wallet of wallets) {
      replies.push(visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: ALICE })));
    }
    const [first, last, lastWallet] = [replies[0], replies[5], wallets[5]];
    if (!first || !last || !lastWallet) throw new Error('no reply');
    const gone = await fetch(`${signingLinkOf(g, first)}/message`);
    expect(gone.status).toBe(404);
    await expect(gone.json()).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });
    for (const reply of replies.slice(1)) {
      expect((await fetch(`${signingLinkOf(g, reply)}/message`)).status).toBe(200);
    }
    expect(await signFromReply(g, last, lastWallet)).toMatchObject({ status: 200, body: { ok: true } });
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ address: lastWallet.address.toLowerCase() }),
    ]);
  });
});

describe('record proofs follow the Discord username', () => {
  it('after a username change the record is read again at once, and a record naming the old name no longer links', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);

    // Alice renames herself; "alice" is free for anyone to take now.
    const member = g.h.discord.state.guilds.get(g.guildId)?.members.get(ALICE);
    if (!member?.user) throw new Error('member missing');
    member.user = { ...member.user, username: 'alice_renamed' };
    g.h.discord.dispatch('GUILD_MEMBER_UPDATE', { ...member, guild_id: g.guildId });
    await waitFor(() => !hasRole(g, ALICE, g.humanRoleId), 'the role to follow the dropped link', 8_000);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([]);
    const [unlinked] = (await g.gating.store.listAuditEvents({ guildId: g.guildId, userId: ALICE })).filter(
      (e) => e.kind === 'unlinked',
    );
    expect(unlinked?.reason).toContain('no longer names alice_renamed');
  });
});

describe('upkeep', () => {
  it('prunes expired challenges, finished role changes and audit events past AUDIT_RETENTION_DAYS', async () => {
    const g = await startGating({ env: { AUDIT_RETENTION_DAYS: '1' } });
    await setup(g);
    const store = g.gating.store;
    const old = Date.now() - 8 * 86_400_000;
    await store.addAuditEvent({ guildId: g.guildId, kind: 'linked', reason: 'long ago', createdAt: old });
    await store.createNonce({
      nonce: 'e'.repeat(32),
      guildId: g.guildId,
      userId: ALICE,
      userName: 'alice',
      guildName: null,
      identity: 'alice.eth',
      address: '0x0000000000000000000000000000000000000001',
      expiresAt: Date.now() - 1,
    });
    const pruned = await g.gating.service.prune();
    expect(pruned.nonces).toBe(1);
    expect(pruned.auditEvents).toBeGreaterThanOrEqual(1);
    const reasons = (await store.listAuditEvents({ guildId: g.guildId })).map((e) => e.reason);
    expect(reasons).not.toContain('long ago');
    expect(reasons).toContain('gating set up');
  });
});
