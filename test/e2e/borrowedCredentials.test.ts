/**
 * Credentials count only for what was proven (issue #15, the threat model's "member with a name they
 * control"): a record proves the name, not the wallet it points at. Played through the real bot, the
 * stand-in Discord and a stand-in Web3.bio that answers a name with its wallet's entries too (their `id`
 * naming the wallet) and reports each name's owner and manager on `/domain`, as the live server does.
 */

import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { ensProfile, nextAddress, walletCredentials } from '../../fakes/web3bio/builders.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  addIdentity,
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  option,
  PUBLIC_URL,
  roleEdits,
  seen,
  setup,
  signFromReply,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';

afterEach(closeGating);

const short = (address: string) => `${address.slice(0, 6)}…${address.slice(-4)}`;

/**
 * A name whose `discord` record names `username` and which resolves to `wallet`, owned (and managed) by
 * `owner`; its own credential answer is empty, so all it carries is the wallet's.
 */
function addName(
  g: GatingHarness,
  name: string,
  o: { username: string; wallet: string; owner: string },
): void {
  const world = g.h.upstream.world;
  world.addProfile(ensProfile(name, o.wallet, o.username));
  world.setCredentials(name, { isHuman: [], isRisky: [], isSpam: [] });
  world.setDomainOwners(name, { owner: o.owner, manager: o.owner });
}

/** The stranger's wallet, with Galxe KYC and Human Passport (and a spam flag when `spam`). */
function strangerWallet(g: GatingHarness, opts: { spam?: boolean } = {}): string {
  const wallet = nextAddress();
  g.h.upstream.world.setCredentials(wallet, walletCredentials(wallet, opts));
  return wallet;
}

async function whoami(g: GatingHarness, userId: string): Promise<FakeMessage> {
  return visibleMessage(await g.h.run('whoami', {}, { userId }));
}

function buttons(message: FakeMessage): { custom_id?: string; url?: string; label?: string }[] {
  return (message.components ?? []).flatMap(
    (row) => (row as { components: { custom_id?: string; url?: string; label?: string }[] }).components,
  );
}

/** The attack: a subname Alice manages, naming her, pointed at a stranger's human wallet. */
async function borrow(g: GatingHarness, opts: { spam?: boolean } = {}) {
  const stranger = strangerWallet(g, opts);
  addName(g, 'sub.attacker.eth', { username: 'alice', wallet: stranger, owner: nextAddress() });
  const verified = await verifyByRecord(g, 'sub.attacker.eth', ALICE);
  return { stranger, verified };
}

describe('a name Alice manages, pointed at a stranger’s wallet', () => {
  it('links by record but gives no human role; /whoami explains and its button gives a signing link for the wallet', async () => {
    const g = await startGating();
    await setup(g);
    const { stranger, verified } = await borrow(g);
    expect(embedOf(verified).title).toBe('Verified');
    expect(seen(verified)).toContain('is now linked to your Discord account');
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ identity: 'sub.attacker.eth', proofMethod: 'record', address: stranger }),
    ]);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
    expect(roleEdits(g, ALICE, g.humanRoleId, 'PUT')).toEqual([]);

    const report = await whoami(g, ALICE);
    const text = seen(report);
    expect(text).toContain(
      `Galxe KYC Verified and Passport Humanity Verified belong to wallet \`${short(stranger)}\`, which you have not proven: sign with that wallet to count them.`,
    );
    expect(text).toContain('No signals that count');
    const button = buttons(report).find((b) => b.label === `Sign with ${short(stranger)}`);
    expect(button?.custom_id).toBeDefined();

    // The moderator's view says what the member can do.
    const check = seen(
      visibleMessage(
        await gatingCommandRun(g, 'check', [option(ApplicationCommandOptionType.User, 'member', ALICE)]),
      ),
    );
    expect(check).toContain(
      `which the member has not proven: they count once the member signs with that wallet (/verify \`${stranger}\`)`,
    );

    // One click: the signing link for that wallet, for Alice, privately, in place of the report.
    const click = await g.h.click(report, button?.custom_id ?? '', undefined, { userId: ALICE });
    const signing = visibleMessage(click);
    expect(signing.id).toBe(report.id);
    expect(embedOf(signing).title).toBe('✍️ Sign to verify');
    expect(seen(signing)).toContain(`sign a message with the wallet \`${stranger}\``);
    expect(buttons(signing)[0]?.url).toMatch(new RegExp(`^${PUBLIC_URL}/verify/`));
    const challenges = await g.gating.store.getUserLinks(g.guildId, ALICE);
    expect(challenges).toHaveLength(1);
    // Re-checks keep it that way: the wallet never signed.
    await gatingCommandRun(g, 'recheck', [option(ApplicationCommandOptionType.User, 'member', ALICE)]);
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
  });

  it('a spam flag on the borrowed wallet still counts: the spam role comes and the human role goes', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g, 'alice.eth', ALICE);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);

    await borrow(g, { spam: true });
    await waitFor(() => hasRole(g, ALICE, g.spamRoleId), 'the spam role');
    await waitFor(() => !hasRole(g, ALICE, g.humanRoleId), 'the human role to go');
    expect(seen(await whoami(g, ALICE))).toContain('isSpam: Known spam wallet');
  });

  it('signing with the wallet makes its credentials count', async () => {
    const g = await startGating();
    await setup(g);
    // Alice's own subname points at her second wallet, and her main wallet owns it: the record proves
    // the name only, until the second wallet signs.
    const second = privateKeyToAccount(generatePrivateKey());
    const wallet = second.address.toLowerCase();
    g.h.upstream.world.setCredentials(wallet, walletCredentials(wallet));
    addName(g, 'vault.alice.eth', { username: 'alice', wallet, owner: nextAddress() });
    await verifyByRecord(g, 'vault.alice.eth', ALICE);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);

    const report = await whoami(g, ALICE);
    const button = buttons(report).find((b) => b.custom_id?.includes(wallet));
    const signing = visibleMessage(
      await g.h.click(report, button?.custom_id ?? '', undefined, { userId: ALICE }),
    );
    expect(await signFromReply(g, signing, second)).toMatchObject({ status: 200, body: { ok: true } });
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role');
    expect(
      (await g.gating.store.getUserLinks(g.guildId, ALICE)).map((l) => [l.identity, l.proofMethod]),
    ).toEqual(
      expect.arrayContaining([
        ['vault.alice.eth', 'record'],
        [wallet, 'signature'],
      ]),
    );
    const after = await whoami(g, ALICE);
    expect(seen(after)).not.toContain('which you have not proven');
    expect(buttons(after)).toEqual([]);
  });

  it('only Alice can use the buttons of her /whoami: anyone else gets a private note, her message stays', async () => {
    const g = await startGating();
    await setup(g);
    await borrow(g);
    const report = await whoami(g, ALICE);
    const before = structuredClone(g.h.discord.state.messages.get(report.id));
    const click = await g.h.click(report, buttons(report)[0]?.custom_id ?? '', undefined, { userId: BOB });
    const note = visibleMessage(click);
    expect(note.id).not.toBe(report.id);
    expect(note.content).toContain('Only the person who ran this command');
    expect(g.h.discord.state.messages.get(report.id)).toEqual(before);
  });
});

describe('the honest case', () => {
  it('my name, owned by the wallet it resolves to, naming me: the wallet’s Passport gives the human role', async () => {
    const g = await startGating();
    await setup(g);
    const wallet = strangerWallet(g);
    addName(g, 'bob.eth', { username: 'bob', wallet, owner: wallet });
    await verifyByRecord(g, 'bob.eth', BOB);
    await waitFor(() => hasRole(g, BOB, g.humanRoleId), 'the human role');
    const text = seen(await whoami(g, BOB));
    expect(text).toContain('isHuman: Galxe KYC Verified \\(bob.eth\\)');
    expect(text).not.toContain('have not proven');
  });

  it('the manager being the wallet counts as well (owner elsewhere, e.g. a wrapped name)', async () => {
    const g = await startGating();
    await setup(g);
    const wallet = strangerWallet(g);
    addName(g, 'bob.eth', { username: 'bob', wallet, owner: nextAddress() });
    g.h.upstream.world.setDomainOwners('bob.eth', {
      owner: nextAddress(),
      manager: wallet.toUpperCase().replace('0X', '0x'),
    });
    await verifyByRecord(g, 'bob.eth', BOB);
    await waitFor(() => hasRole(g, BOB, g.humanRoleId), 'the human role');
  });
});

describe('on PostgreSQL (DATABASE_URL)', () => {
  const ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';

  it('the borrowed wallet gives no human role; the honest name does', async () => {
    const database = `borrowed_e2e_${process.pid}_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${database}`);
    try {
      const g = await startGating({
        env: { DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}` },
      });
      await setup(g);
      const { verified } = await borrow(g);
      expect(embedOf(verified).title).toBe('Verified');
      expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
      const wallet = strangerWallet(g);
      addName(g, 'bob.eth', { username: 'bob', wallet, owner: wallet });
      await verifyByRecord(g, 'bob.eth', BOB);
      await waitFor(() => hasRole(g, BOB, g.humanRoleId), 'the human role');
      await closeGating();
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await admin.end();
    }
  });
});

describe('the same borrowed wallet on the Linked Roles page', () => {
  it('a record proof writes likely_human=0; the page lists the wallet’s credentials and its one-click signature works', async () => {
    const g = await startGating({
      env: {
        DISCORD_CLIENT_SECRET: 'test-client-secret',
        LINKED_ROLES_ENABLED: 'true',
        TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
        GATING_ENABLED: 'false',
      },
    });
    const oauth = g.h.discord.oauth;
    Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
    oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
    oauth.signInAs(ALICE);
    const stranger = strangerWallet(g);
    addName(g, 'sub.attacker.eth', { username: 'alice', wallet: stranger, owner: nextAddress() });
    const browser = new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
    expect((await browser.open(`${PUBLIC_URL}/linked-role`)).status).toBe(200);
    const proved = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: 'sub.attacker.eth' }).toString(),
    });
    expect(proved.status).toBe(200);
    expect(oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '0',
      humanity_score: '0',
    });
    // The page names the wallet whose credentials did not count, with a form to sign with it.
    expect(proved.text).toContain(short(stranger));
    expect(proved.text).toMatch(new RegExp(`name="identity" value="${stranger}"`, 'i'));

    // One click: the same signed-in browser asks to sign with that wallet and lands on its signing page.
    const sign = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: stranger, proof: 'signature' }).toString(),
    });
    expect(sign.status).toBe(200);
    expect(sign.url).toMatch(/\/linked-role\/sign\/[0-9a-f]{32}$/);
  });
});
