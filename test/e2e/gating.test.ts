/**
 * Role gating end to end: the real bot (`startBot` with GATING_ENABLED) against the stand-in Discord and
 * the stand-in Web3.bio, SQLite in a temporary DATA_DIR (and once PostgreSQL). Members and moderators
 * act through slash commands on the stand-in gateway, signatures are POSTed to the bot's verify server,
 * and the outcome is read where it lands: member roles, audit-log reasons and log-channel messages on
 * the stand-in Discord, links in the store.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import pg from 'pg';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterEach, onTestFinished as afterThis, describe, expect, it } from 'vitest';
import checkCredentials from '../../commands/checkCredentials.ts';
import gatingCommand from '../../commands/gating.ts';
import { commandsFor } from '../../commands/index.ts';
import { startFakeDiscord } from '../../fakes/discord/server.ts';
import { gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { startBot } from '../../src/app/bot.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createWeb3BioFromConfig } from '../../src/app/wiring.ts';
import { buildSiweMessage } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge } from '../../src/gating/proofs/siwe.ts';
import { createLogger } from '../../src/ops/log.ts';
import { openPostgresStore, openStore } from '../../src/store/index.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import {
  addIdentity,
  closeGating,
  embedOf,
  GATING_ENV,
  gatingCommandRun,
  hasRole,
  logChannelMessages,
  memberOf,
  option,
  PUBLIC_URL,
  roleEdits,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, fakesEnv, isEphemeral, startHarness, visibleMessage } from './harness.ts';

afterEach(closeGating);

describe('verification', () => {
  it('verify by record: linked at once, the human role added with an audit-log reason, logged without pings', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });

    const message = await verifyByRecord(g);

    expect(isEphemeral(message)).toBe(true);
    expect(embedOf(message).title).toBe('Verified');
    expect(seen(message)).toContain('➕ **Verified Human**: isHuman: Dentity Humanity Verified');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    const audit = g.h.discord.state.auditLog.filter((e) => e.userId === ALICE);
    expect(audit).toHaveLength(1);
    expect(audit[0]?.action).toBe('member_role_add');
    expect(audit[0]?.reason).toMatch(/^web3 gating: isHuman: Dentity Humanity Verified \(alice\.eth\)/);
    const link = await g.gating.store.getLink({ guildId: g.guildId, userId: ALICE, identity: 'alice.eth' });
    expect(link?.proofMethod).toBe('record');

    await waitFor(() => logChannelMessages(g).some((m) => m.content.includes('Added')), 'the log line');
    const logged = logChannelMessages(g)
      .map((m) => m.content)
      .join('\n');
    expect(logged).toContain(`Verified <@${ALICE}> as alice.eth (record)`);
    expect(logged).toContain(`Added <@&${g.humanRoleId}> to <@${ALICE}>`);
    for (const m of logChannelMessages(g)) {
      expect(m.mentions).toEqual([]);
      expect(m.mention_roles).toEqual([]);
    }
  });

  it('verify by signature: a one-time link; the signed message POSTed to the verify server links and adds the role; a replay is refused', async () => {
    const g = await startGating();
    await setup(g);
    const account: PrivateKeyAccount = privateKeyToAccount(generatePrivateKey());
    addIdentity(g, 'bob.eth', { address: account.address.toLowerCase() });

    const result = await g.h.run('verify', { identity: 'bob.eth' }, { userId: BOB });
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    const text = seen(message);
    expect(text).toMatch(/expires <t:\d+:R>/);
    expect(text).toContain('never asks for a transaction, a payment or your seed phrase');
    const button = (message.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
    const url = button?.url ?? '';
    expect(url.startsWith(`${PUBLIC_URL}/verify/`)).toBe(true);
    expect(roleEdits(g, BOB, g.humanRoleId)).toHaveLength(0);

    // The page at PUBLIC_URL is served by the bot's verify server: talk to it where it listens.
    const local = url.replace(PUBLIC_URL, g.gating.verifyUrl);
    const toSign = (await (await fetch(`${local}/message`)).json()) as { message: string };
    const signature = await account.signMessage({ message: toSign.message });
    const post = () =>
      fetch(local, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ message: toSign.message, signature }),
      });
    const accepted = await post();
    expect(accepted.status).toBe(200);
    expect(await accepted.json()).toMatchObject({ ok: true });
    await g.gating.service.idle(g.guildId);

    expect(hasRole(g, BOB, g.humanRoleId)).toBe(true);
    const link = await g.gating.store.getLink({ guildId: g.guildId, userId: BOB, identity: 'bob.eth' });
    expect(link).toMatchObject({ proofMethod: 'signature', address: account.address.toLowerCase() });

    const replay = await post();
    expect(replay.status).toBe(410);
    expect(await replay.json()).toMatchObject({ ok: false, reason: 'used' });
    await g.gating.service.idle(g.guildId);
    expect(roleEdits(g, BOB, g.humanRoleId, 'PUT')).toHaveLength(1);
  });

  it('an expired or foreign-signed challenge is refused and links nothing', async () => {
    const g = await startGating();
    await setup(g);
    const account = privateKeyToAccount(generatePrivateKey());
    const address = account.address.toLowerCase() as `0x${string}`;
    addIdentity(g, 'late.eth', { address });
    const siwe = { publicUrl: PUBLIC_URL };
    const input = {
      guildId: g.guildId,
      userId: BOB,
      userName: 'bob',
      guildName: null,
      identity: 'late.eth',
      address,
    };

    const expired = await createChallenge(
      g.gating.store,
      { ...siwe, now: () => Date.now() - 11 * 60_000 },
      input,
    );
    const expiredRecord = await g.gating.store.getNonce(expired.nonce);
    if (!expiredRecord) throw new Error('challenge not stored');
    const message = buildSiweMessage(siwe, expiredRecord);
    const late = await fetch(`${g.gating.verifyUrl}/verify/${expired.nonce}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ message, signature: await account.signMessage({ message }) }),
    });
    expect(late.status).toBe(410);
    expect(await late.json()).toMatchObject({ ok: false, reason: 'expired' });

    const fresh = await createChallenge(g.gating.store, siwe, input);
    const freshRecord = await g.gating.store.getNonce(fresh.nonce);
    if (!freshRecord) throw new Error('challenge not stored');
    const freshMessage = buildSiweMessage(siwe, freshRecord);
    const intruder = privateKeyToAccount(generatePrivateKey());
    const foreign = await fetch(`${g.gating.verifyUrl}/verify/${fresh.nonce}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        message: freshMessage,
        signature: await intruder.signMessage({ message: freshMessage }),
      }),
    });
    expect(foreign.status).toBe(422);
    expect(await foreign.json()).toMatchObject({ ok: false, reason: 'wrong_address' });

    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, BOB)).toEqual([]);
    expect(roleEdits(g, BOB, g.humanRoleId)).toHaveLength(0);
  });
});

describe('roles follow members and credentials', () => {
  it('a linked member who leaves and joins again gets the role back on join', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);

    g.h.discord.removeMember(g.guildId, ALICE);
    const rejoinedAt = Date.now();
    g.h.discord.addMember(g.guildId, { id: ALICE, username: 'alice' }, { dispatchJoin: true });
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);

    const edit = await g.h.discord.waitForRequest(
      (r) =>
        r.method === 'PUT' &&
        r.at >= rejoinedAt &&
        r.path.endsWith(`/members/${ALICE}/roles/${g.humanRoleId}`),
    );
    expect(edit.status).toBe(204);
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(roleEdits(g, ALICE, g.humanRoleId, 'PUT')).toHaveLength(2);
  });

  it('a lost credential (a real answer) removes the role at once at /gating recheck member:, with the reason', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    g.h.upstream.world.setCredentials('alice.eth', gatingCredentials('alice.eth', { human: false }));

    const result = await gatingCommandRun(g, 'recheck', [
      option(ApplicationCommandOptionType.User, 'member', ALICE),
    ]);
    const text = seen(visibleMessage(result));
    expect(text).toContain('Fresh credentials read for **alice**.');
    expect(text).toContain('Queued:');
    expect(text).toContain('➖ **Verified Human**: no unexpired isHuman credential is true');
    await g.gating.service.idle(g.guildId);

    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
    const removal = g.h.discord.state.auditLog.find((e) => e.action === 'member_role_remove');
    expect(removal?.reason).toMatch(/^web3 gating: no unexpired isHuman credential is true/);
    expect(roleEdits(g, ALICE, g.humanRoleId, 'DELETE')).toHaveLength(1);
  });

  it('upstream down: a re-check removes nothing, and the link keeps its last known result', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    g.h.upstream.world.setCredentials('alice.eth', gatingCredentials('alice.eth', { human: false }));
    g.h.upstream.addFault({ action: { kind: 'status', status: 503 } });

    const result = await gatingCommandRun(g, 'recheck');
    expect(seen(visibleMessage(result))).toContain(
      'Lookups failed for 1 member: their roles were left as they are.',
    );
    await g.gating.service.idle(g.guildId);

    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(roleEdits(g, ALICE, g.humanRoleId, 'DELETE')).toHaveLength(0);
    const link = await g.gating.store.getLink({ guildId: g.guildId, userId: ALICE, identity: 'alice.eth' });
    expect(link?.lastCheckOk).toBe(false);
    expect(link?.lastResult?.isHuman).toHaveLength(1);
  });
});

describe('Discord refusals and rate limits', () => {
  it('429 on a role edit: retried after retry_after, applied once', async () => {
    const g = await startGating();
    await setup(g, false);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    g.h.discord.addFault({
      method: 'PUT',
      path: /\/members\/\d+\/roles\/\d+$/,
      status: 429,
      body: { retry_after: 0.6 },
    });

    await verifyByRecord(g);

    const edits = roleEdits(g, ALICE, g.humanRoleId, 'PUT');
    expect(edits.map((e) => e.status)).toEqual([429, 204]);
    const [limited, retried] = edits;
    if (!limited || !retried) throw new Error('expected two edits');
    expect(retried.at - limited.at).toBeGreaterThanOrEqual(590);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(g.h.discord.state.auditLog.filter((e) => e.userId === ALICE)).toHaveLength(1);
  });

  it('role edits beyond the per-guild limit wait for the window instead of being refused', async () => {
    const g = await startGating();
    await setup(g, false);
    const members = [ALICE, BOB, g.h.newUser(), g.h.newUser(), g.h.newUser()];
    g.h.discord.limitRoleEdits(g.guildId, 2);
    for (const [i, userId] of members.entries()) {
      const username = memberOf(g, userId).user.username;
      addIdentity(g, `member${i}.eth`, { discordHandle: username });
      await g.h.run('verify', { identity: `member${i}.eth` }, { userId });
    }
    await g.gating.service.idle(g.guildId);

    for (const userId of members) expect(hasRole(g, userId, g.humanRoleId)).toBe(true);
    const edits = g.h.discord.requests.filter((r) => r.method === 'PUT' && r.path.includes('/roles/'));
    // The stand-in answers 429 to any edit over the limit: none means every edit waited for its window.
    expect(edits.map((r) => r.status)).toEqual(members.map(() => 204));
    const first = edits[0]?.at ?? 0;
    const last = edits.at(-1)?.at ?? 0;
    expect(last - first).toBeGreaterThanOrEqual(1_000);
  });
});

describe('moderator tools', () => {
  it('a member without Manage Roles cannot run /gating setup (nothing changes); the command data asks for it too', async () => {
    const g = await startGating();
    const result = await gatingCommandRun(
      g,
      'setup',
      [option(ApplicationCommandOptionType.Role, 'human-role', g.humanRoleId)],
      BOB,
    );
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    expect(embedOf(message).title).toBe('🔒 Manage Roles needed');
    expect(await g.gating.store.getGuildSettings(g.guildId)).toBeUndefined();
    expect(g.h.discord.requests.filter((r) => r.path.includes('/roles/'))).toHaveLength(0);

    for (const command of [gatingCommand, checkCredentials]) {
      expect(command.data).toMatchObject({ default_member_permissions: '268435456', contexts: [0] });
    }
  });

  it('setup refuses a role above the bot, naming the role and the fix', async () => {
    const g = await startGating();
    const high = g.h.discord.addRole(g.guildId, { name: 'Too High', position: 50 });
    await waitFor(
      () => g.h.bot.client.guilds.cache.get(g.guildId)?.roles.cache.has(high.id) === true,
      'the role to reach the client',
    );
    const result = await gatingCommandRun(g, 'setup', [
      option(ApplicationCommandOptionType.Role, 'human-role', high.id),
    ]);
    const text = seen(visibleMessage(result));
    expect(text).toContain('Nothing was saved');
    expect(text).toContain('Too High');
    expect(await g.gating.store.getGuildSettings(g.guildId)).toBeUndefined();
  });

  it('check, the context menu, preview, status, rules, whoami, unverify and disable', async () => {
    // Credentials are not cached, so the preview (which reads through the cache) sees the change.
    const g = await startGating({ env: { CACHE_TTL_CREDENTIAL_SECONDS: '0' } });
    const setupMessage = await setup(g);
    expect(seen(setupMessage)).toContain('**Verified Human**');
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);

    const check = visibleMessage(
      await gatingCommandRun(g, 'check', [option(ApplicationCommandOptionType.User, 'member', ALICE)]),
    );
    expect(isEphemeral(check)).toBe(true);
    const checkText = seen(check);
    expect(checkText).toContain('**alice** has 1 proven identity.');
    expect(checkText).toContain('**Verified Human**: ✅ wanted · held');

    const menu = visibleMessage(
      await g.h.discord.runCommand({
        name: 'Check web3 credentials',
        type: 'user',
        targetId: ALICE,
        userId: g.ownerId,
      }),
    );
    expect(isEphemeral(menu)).toBe(true);
    expect(seen(menu)).toBe(checkText);

    const bobMenu = visibleMessage(
      await g.h.discord.runCommand({
        name: 'Check web3 credentials',
        type: 'user',
        targetId: ALICE,
        userId: BOB,
      }),
    );
    expect(embedOf(bobMenu).title).toBe('🔒 Manage Roles needed');

    g.h.upstream.world.setCredentials('alice.eth', gatingCredentials('alice.eth', { human: false }));
    const preview = seen(visibleMessage(await gatingCommandRun(g, 'preview')));
    expect(preview).toContain('Linked members: 1');
    expect(preview).toContain('Would add: 0 · would remove: 1');
    expect(preview).toContain('➖ **Verified Human**');
    expect(preview).toContain('Nothing was changed.');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    g.h.upstream.world.setCredentials('alice.eth', gatingCredentials('alice.eth'));

    // This bot runs without DISCORD_CLIENT_SECRET: the one thing status asks for is binding signing links.
    const status = seen(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status).toContain('Some things need attention.');
    expect(status).toContain('Not bound to an account');
    expect(status).toContain('✅ Manage Roles');
    expect(status).toContain('Server Members');

    const rules = seen(visibleMessage(await gatingCommandRun(g, 'rules')));
    expect(rules).toContain('A spam flag takes the human role away.');

    const whoami = visibleMessage(await g.h.run('whoami', {}, { userId: ALICE }));
    expect(isEphemeral(whoami)).toBe(true);
    expect(seen(whoami)).toContain('alice.eth · ENS');

    const unverify = visibleMessage(await g.h.run('unverify', {}, { userId: ALICE }));
    expect(seen(unverify)).toContain('1 linked identity was removed.');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);

    const disabled = visibleMessage(await gatingCommandRun(g, 'disable'));
    expect(embedOf(disabled).title).toBe('Role gating turned off');
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(false);
    const recheckWhenOff = visibleMessage(await gatingCommandRun(g, 'recheck'));
    expect(embedOf(recheckWhenOff).title).toBe('Role gating is off in this server');
    const verifyWhenOff = visibleMessage(
      await g.h.run('verify', { identity: 'alice.eth' }, { userId: ALICE }),
    );
    expect(seen(verifyWhenOff)).toContain('Role gating is not switched on in this server');
  });

  it('with GATING_ENABLED off, no gating command is registered and no GuildMembers intent is asked for', async () => {
    const h = await startHarness({ upstream: { seed: false } });
    afterThis(() => h.close());
    expect(h.bot.gating).toBeUndefined();
    expect(commandsFor({ GATING_ENABLED: false }).map((c) => c.data.name)).not.toContain('gating');
    expect(h.bot.client.options.intents.has('GuildMembers')).toBe(false);
    expect(commandsFor({ GATING_ENABLED: true }).map((c) => c.data.name)).toEqual(
      expect.arrayContaining(['verify', 'unverify', 'whoami', 'gating', 'Check web3 credentials']),
    );
  });
});

describe('PostgreSQL (DATABASE_URL)', () => {
  const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

  it('the basic flow: setup, verify by record, role added, links and audit events in PostgreSQL', async () => {
    // A database of its own: DATABASE_URL takes no schema, and the run must not touch other data.
    const database = `gating_e2e_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    try {
      const g = await startGating({
        env: { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}` },
      });
      await setup(g);
      addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
      const message = await verifyByRecord(g);
      expect(embedOf(message).title).toBe('Verified');
      expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
      await closeGating();

      // What the bot wrote is in PostgreSQL: read it back through a store of our own.
      const store = await openPostgresStore(`postgres://postgres@127.0.0.1:5432/${database}`);
      try {
        const links = await store.getUserLinks(g.guildId, ALICE);
        expect(links.map((l) => [l.identity, l.proofMethod])).toEqual([['alice.eth', 'record']]);
        const kinds = (await store.listAuditEvents({ guildId: g.guildId })).map((e) => e.kind);
        expect(kinds).toEqual(expect.arrayContaining(['settings_changed', 'linked', 'role_added']));
        expect(await store.pendingRoleChanges(g.guildId)).toBe(0);
      } finally {
        await store.close();
      }
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe('a crash mid-sync', () => {
  const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));
  const MEMBERS = 16;
  const EDITS_PER_SECOND = 4;

  /** `node src/app/main.js` with exactly `env` (plus PATH), from an empty directory so no `.env` is read. */
  function runBot(
    env: Record<string, string>,
    cwd: string,
  ): { child: ChildProcess; exited: Promise<unknown> } {
    const child = spawn(process.execPath, [MAIN], {
      cwd,
      env: { PATH: process.env.PATH ?? '', ...env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    return { child, exited: once(child, 'exit') };
  }

  it('SIGKILL while role edits are being slowed: the restart resumes, every edit happens exactly once', async () => {
    const discord = await startFakeDiscord();
    const upstream = await startFakeWeb3Bio({ seed: false });
    const dataDir = await mkdtemp(join(tmpdir(), 'e2e-gating-kill-'));
    const children: { child: ChildProcess; exited: Promise<unknown> }[] = [];
    try {
      const guild = discord.addGuild({ name: 'Crash Guild' });
      const human = discord.addRole(guild.id, { name: 'Verified Human', position: 2 });
      const members = Array.from({ length: MEMBERS }, (_, i) => {
        const id = `40000000000000${String(i).padStart(4, '0')}`;
        discord.addMember(guild.id, { id, username: `crash${i}` });
        upstream.world.setCredentials(`crash${i}.eth`, gatingCredentials(`crash${i}.eth`));
        return id;
      });
      // Seed what earlier verifications left: settings and signature-proven links, never synced.
      const seeded = await openStore({ dataDir });
      await seeded.saveGuildSettings({
        guildId: guild.id,
        enabled: true,
        humanRoleId: human.id,
        spamRoleId: null,
        riskyRoleId: null,
        minScore: null,
        spamRemovesHuman: true,
        logChannelId: null,
      });
      for (const [i, userId] of members.entries()) {
        await seeded.saveLink(
          {
            guildId: guild.id,
            userId,
            identity: `crash${i}.eth`,
            platform: 'ens',
            address: nextAddress(),
            proofMethod: 'signature',
            provenAt: Date.now(),
          },
          'seeded',
        );
      }
      await seeded.close();
      discord.limitRoleEdits(guild.id, EDITS_PER_SECOND);

      const env = {
        ...fakesEnv(discord, upstream, dataDir),
        GATING_ENABLED: 'true',
        PUBLIC_URL,
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: '0',
        // A change claimed when the process died is retried once its claim lapses: 2 s, not the default minute.
        GATING_LEASE_SECONDS: '2',
        LOG_LEVEL: 'warn',
      };
      const applied = () =>
        discord.requests.filter((r) => r.method === 'PUT' && r.path.includes('/roles/') && r.status === 204);

      // Starting catches up on the never-synced guild: the edits are queued and applied, slowly.
      const first = runBot(env, dataDir);
      children.push(first);
      await waitFor(() => applied().length >= 5, 'five role edits before the kill', 15_000);
      first.child.kill('SIGKILL');
      await first.exited;
      const beforeRestart = applied().length;
      expect(beforeRestart).toBeLessThan(MEMBERS);

      const second = runBot(env, dataDir);
      children.push(second);
      const everyone = () => members.every((id) => guild.members.get(id)?.roles.includes(human.id));
      await waitFor(everyone, 'every member to get the role after the restart', 30_000);
      const store = await openStore({ dataDir });
      try {
        const deadline = Date.now() + 15_000;
        while ((await store.pendingRoleChanges(guild.id)) > 0) {
          if (Date.now() > deadline) throw new Error('the queue was not drained after the restart');
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        second.child.kill('SIGTERM');
        await second.exited;

        for (const userId of members) {
          const path = `/guilds/${guild.id}/members/${userId}/roles/${human.id}`;
          const ok = discord.requests.filter((r) => r.path === path && r.status === 204);
          expect(
            ok.map((r) => r.method),
            `edits of ${userId}`,
          ).toEqual(['PUT']);
        }
        expect(discord.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/roles/'))).toEqual(
          [],
        );
        const events = await store.listAuditEvents({ guildId: guild.id, limit: 500 });
        const added = events.filter((e) => e.kind === 'role_added').map((e) => e.userId);
        expect(added.sort()).toEqual([...members].sort());
        expect(events.filter((e) => e.kind === 'role_failed')).toEqual([]);
      } finally {
        await store.close();
      }
    } finally {
      for (const { child, exited } of children) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await exited;
      }
      await Promise.allSettled([discord.close(), upstream.close()]);
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

describe('startBot with a store of the caller', () => {
  it('uses the given store, serves the verify page, and leaves the store open on stop', async () => {
    const discord = await startFakeDiscord();
    const upstream = await startFakeWeb3Bio({ seed: false });
    const store = await openSqliteStore(':memory:');
    const config = loadConfig({
      ...GATING_ENV,
      DISCORD_API_URL: discord.apiUrl,
      DISCORD_TOKEN: discord.token,
      DISCORD_APPLICATION_ID: discord.applicationId,
      WEB3BIO_API_URL: upstream.url,
      LOG_LEVEL: 'silent',
    });
    const logger = createLogger({ level: 'silent', secrets: [] });
    const web3bio = createWeb3BioFromConfig(config, logger);
    try {
      const bot = await startBot({ config, logger, web3bio, store });
      expect(bot.gating?.store).toBe(store);
      expect(bot.client.options.intents.has('GuildMembers')).toBe(true);
      const health = await fetch(`${bot.gating?.verifyUrl}/healthz`);
      expect(await health.text()).toBe('ok');
      await bot.stop(1_000);
      await expect(fetch(`${bot.gating?.verifyUrl}/healthz`)).rejects.toThrow();
      expect(await store.countLinkedUsers('1')).toBe(0);
    } finally {
      await store.close();
      await web3bio.close();
      await Promise.allSettled([discord.close(), upstream.close()]);
    }
  });
});
