/**
 * Sign in with Farcaster (issue #29), end to end: the real bot with gating, its page driven over HTTP by
 * the member's browser (signed in to Discord), the stand-in relay playing the member's Farcaster app and
 * the stand-in OP Mainnet node answering the registries' calls. An honest member proves `name.farcaster`
 * and gets its rules' roles; each attack is acted out through the stand-ins and changes nothing.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { TEST_TOKEN } from '../../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../../fakes/chains/evmRpc.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { createFarcasterFlow } from '../../src/gating/proofs/farcasterSignIn.ts';
import type { TestBrowser } from '../testBrowser.ts';
import {
  approveAs,
  browserAs,
  expectConnectedByFid,
  type FarcasterAccount,
  type FarcasterGating,
  farcasterAccount,
  farcasterLinkOf,
  openedChannel,
  pageUntil,
  startFarcasterGating,
  startOnPage,
  titleOf,
} from './farcasterHarness.ts';
import {
  addGuildRole,
  closeGating,
  directMessages,
  gatingCommandRun,
  hasRole,
  logChannelMessages,
  PUBLIC_URL,
  seen,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, FARCASTER_POLL_MS, visibleMessage } from './harness.ts';
import { addRule } from './ruleShortcuts.ts';

let current: FarcasterGating | undefined;
let baseNode: FakeEvmRpc | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
  await closeGating();
  await baseNode?.close();
  baseNode = undefined;
});

async function start(env: Record<string, string> = {}): Promise<FarcasterGating> {
  current = await startFarcasterGating({ env });
  return current;
}

/** `/verify identity` by `userId`: the page link of its Sign in with Farcaster reply. */
async function verifyLink(f: FarcasterGating, identity: string, userId = ALICE): Promise<string> {
  return farcasterLinkOf(visibleMessage(await f.g.h.run('verify', { identity }, { userId })));
}

/** The member opens the page (signing in to Discord) and starts it: the relay channel is open. */
async function openPage(f: FarcasterGating, link: string, userId = ALICE): Promise<TestBrowser> {
  const browser = browserAs(f, userId);
  expect((await browser.open(link)).status).toBe(200);
  expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
  return browser;
}

/** The whole honest flow for `account` by `userId`; resolves once the page says it is done. */
async function proveFid(f: FarcasterGating, account: FarcasterAccount, userId: string, identity?: string) {
  const link = await verifyLink(f, identity ?? `${account.name}.farcaster`, userId);
  const browser = await openPage(f, link, userId);
  await approveAs(f, account);
  const page = await pageUntil(browser, link, 'Verified');
  await f.g.gating.service.idle(f.g.guildId);
  return page;
}

/** Nothing was linked for anyone, and no role was given. */
async function nothingChanged(f: FarcasterGating): Promise<void> {
  await f.g.gating.service.idle(f.g.guildId);
  expect(await f.g.gating.store.getUserLinks(f.g.guildId, ALICE)).toEqual([]);
  expect(await f.g.gating.store.getUserLinks(f.g.guildId, BOB)).toEqual([]);
  expect(hasRole(f.g, ALICE, f.g.humanRoleId)).toBe(false);
}

describe('Sign in with Farcaster: the honest member', () => {
  it('proves alice.farcaster in her Farcaster app; the bot links FID 77 by its custody signature and gives the human role', async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 77, { followers: 2_000 });

    const reply = visibleMessage(await g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE }));
    const text = seen(reply);
    expect(text).toContain('Sign in with Farcaster');
    expect(text).toContain('(FID 77)');
    expect(text).toContain('never one someone sent you');
    const link = farcasterLinkOf(reply);

    const browser = browserAs(f, ALICE);
    const page = await browser.open(link);
    expect(page.status).toBe(200);
    expect(titleOf(page)).toBe('Sign in with Farcaster');
    expect(page.text).toContain('Approve only a sign-in you started yourself, on this page.');
    expect(page.text).toContain('verify.example.test');
    expect(f.relay.channels.size).toBe(0);

    const waiting = await startOnPage(browser, link);
    expect(titleOf(waiting)).toBe('Approve in your Farcaster app');
    const channel = f.relay.lastChannel();
    expect(channel?.signatureParams).toMatchObject({
      domain: 'verify.example.test',
      siweUri: link,
      requestId: `discord:user:${ALICE}:server:${g.guildId}`,
    });
    expect(waiting.text).toContain(`href="${channel?.url}"`);
    expect(waiting.text).toMatch(/<div class="qr"[^>]*><svg viewBox/);

    await approveAs(f, alice);
    const done = await pageUntil(browser, link, 'Verified');
    expect(done.text).toContain('FID 77 is now linked to your Discord account.');
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({
        identity: 'farcaster,#77',
        platform: 'farcaster',
        proofMethod: 'signature',
        address: alice.custody.address.toLowerCase(),
      }),
    ]);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role for Alice');

    // She proved FID 77, not the name: /unverify of the name she typed still finds it (and nothing else).
    await g.h.run('unverify', { identity: 'bob.farcaster' }, { userId: ALICE });
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ identity: 'farcaster,#77', releasedAt: null }),
    ]);
    await g.h.run('unverify', { identity: 'alice.farcaster' }, { userId: ALICE });
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([]);
    await waitFor(() => !hasRole(g, ALICE, g.humanRoleId), 'the human role taken back');
  });
});

describe('Sign in with Farcaster: the rules, re-checks and flags', () => {
  it("the FID's profile gives the platform and follower rules' roles, read again at re-checks; a spam flag sticks after /unverify", async () => {
    const f = await start();
    const { g } = f;
    const caster = await addGuildRole(g, 'Caster', 1);
    const famous = await addGuildRole(g, 'Famous', 1);
    await addRule(g, caster, 'platform', 'farcaster');
    await addRule(g, famous, 'followers', 'farcaster:1000');
    const spam = farcasterAccount(f, 'loud', 91, { followers: 5_000, spam: true });
    await proveFid(f, spam, ALICE);
    await waitFor(
      () => hasRole(g, ALICE, caster) && hasRole(g, ALICE, famous) && hasRole(g, ALICE, g.spamRoleId),
      'the platform, follower and spam roles',
    );
    const grant = g.h.discord.state.auditLog.find((e) => e.userId === ALICE && e.roleIds.includes(famous));
    expect(grant?.reason).toContain('5000 farcaster followers ≥ 1000 (farcaster,#91)');

    const before = g.h.upstream.requests.length;
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    const reads = g.h.upstream.requests.slice(before).map((r) => decodeURIComponent(r.path));
    expect(reads).toContain('/profile/farcaster/farcaster,#91');
    expect(reads).toContain('/credential/farcaster,#91');

    await g.h.run('unverify', {}, { userId: ALICE });
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, caster)).toBe(false);
    expect(hasRole(g, ALICE, g.spamRoleId)).toBe(true);
  });

  it('an auth address registered for the FID may approve; the link names it as the signer', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 78);
    const auth = privateKeyToAccount(generatePrivateKey());
    f.chain.addAuthAddress(78, auth.address);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    await f.relay.approve(openedChannel(f).token, {
      account: auth,
      fid: alice.fid,
      authMethod: 'authAddress',
    });
    await pageUntil(browser, link, 'Verified');
    await f.g.gating.service.idle(f.g.guildId);
    expect(await f.g.gating.store.getUserLinks(f.g.guildId, ALICE)).toEqual([
      expect.objectContaining({ identity: 'farcaster,#78', address: auth.address.toLowerCase() }),
    ]);
    const linked = (await f.g.gating.store.listAuditEvents({ guildId: f.g.guildId, userId: ALICE })).find(
      (e) => e.kind === 'linked',
    );
    expect(linked?.reason).toBe(
      `Sign in with Farcaster by FID 78 (its auth address ${auth.address.toLowerCase()})`,
    );
  });
});

describe('Sign in with Farcaster: every approval that is not the one asked for is refused and changes nothing', () => {
  it.each([
    ['another FID', { fid: 4242 }, 'That approval came from another Farcaster account, not FID 80.'],
    [
      'another domain',
      { domain: 'evil.example' },
      'That approval was for another site, not verify.example.test.',
    ],
    [
      'another nonce',
      { nonce: 'aaaabbbbccccddddeeeeffff00001111' },
      'That approval belongs to another sign-in',
    ],
    [
      'another Discord account in the request',
      { requestId: `discord:user:${BOB}:server:1` },
      'names another Discord account',
    ],
  ] as const)('an approval with %s', async (_what, override, sentence) => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 80);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    await approveAs(f, alice, override);
    const refused = await pageUntil(browser, link, 'That approval was refused');
    expect(refused.text).toContain(sentence);
    expect(refused.text).toContain('Nothing was changed');
    // The member may start again (a new channel), and nothing was linked.
    expect(refused.text).toContain('Start again with a new link');
    await nothingChanged(f);
  });

  it('a signer that no longer holds the FID (the chain says its custody moved) is refused', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 81);
    f.chain.setCustody(81, privateKeyToAccount(generatePrivateKey()).address);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    await approveAs(f, alice);
    const refused = await pageUntil(browser, link, 'That approval was refused');
    expect(refused.text).toContain('neither holds FID 81 (its custody address)');
    expect(f.chain.calls.some((c) => c.functionName === 'custodyOf')).toBe(true);
    expect(f.chain.calls.some((c) => c.functionName === 'keyDataOf')).toBe(true);
    await nothingChanged(f);
  });

  it('an approval that arrives after the flow expired is refused, and the page then opens nothing', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 82);
    // A flow made 10 minutes minus 3 s ago (as /verify would have): it expires while the member approves.
    const made = await createFarcasterFlow(
      f.g.gating.store,
      { publicUrl: PUBLIC_URL, now: () => Date.now() - 600_000 + 3_000 },
      {
        guildId: f.g.guildId,
        userId: ALICE,
        userName: 'alice',
        guildName: null,
        identity: 'alice.farcaster',
        fid: 82,
      },
    );
    const browser = await openPage(f, made.url);
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    await approveAs(f, alice);
    const late = await browser.open(made.url);
    expect(late.status).toBe(410);
    expect(titleOf(late)).toBe('This link has expired');
    // The server's watch reads the channel again meanwhile: the late approval still changes nothing.
    await new Promise((resolve) => setTimeout(resolve, 5 * FARCASTER_POLL_MS));
    await nothingChanged(f);
  });

  it('a replayed channel: an approval read once proves nothing again, for this flow or a new one', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 83);
    await proveFid(f, alice, ALICE);
    const first = openedChannel(f);
    // Everywhere: the account keeps no proof of the FID, so /verify starts a new sign-in (issue #36).
    await f.g.h.run('unverify', { everywhere: true }, { userId: ALICE });
    await f.g.gating.service.idle(f.g.guildId);
    expect(await f.g.gating.store.getUserLinks(f.g.guildId, ALICE)).toEqual([]);

    // The relay serves the old completed channel again, and completes it twice: the finished flow ignores it.
    f.relay.reopen(first.token);
    await f.relay.approve(first.token, { account: alice.custody, fid: alice.fid });
    const again = await browserAs(f, ALICE).open(first.signatureParams.siweUri);
    expect(titleOf(again)).toBe('This link was already used');

    // A new flow whose channel the relay answers with the old approval (its nonce is the old flow's).
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    const channel = openedChannel(f);
    Object.assign(channel, {
      state: 'completed',
      message: first.message,
      signature: first.signature,
      fid: 83,
    });
    const refused = await pageUntil(browser, link, 'That approval was refused');
    expect(refused.text).toContain('That approval belongs to another sign-in');
    await f.g.gating.service.idle(f.g.guildId);
    expect(await f.g.gating.store.getUserLinks(f.g.guildId, ALICE)).toEqual([]);
  });

  it('a flow is burned after 5 refused approvals: the page starts nothing more', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 84);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    for (let i = 1; i <= 5; i += 1) {
      await approveAs(f, alice, { fid: 9_000 + i });
      await pageUntil(browser, link, i < 5 ? 'That approval was refused' : 'This sign-in is closed');
      if (i < 5) expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    }
    const channels = f.relay.channels.size;
    const closed = await startOnPage(browser, link);
    expect(closed.status).toBe(409);
    expect(closed.text).toContain('Too many approvals were refused');
    expect(f.relay.channels.size).toBe(channels);
    await nothingChanged(f);
  });
});

describe('Sign in with Farcaster: channels opened on the relay are limited per client', () => {
  it('the 31st start in 10 minutes from one client opens no channel and says how long to wait', async () => {
    const f = await start();
    farcasterAccount(f, 'alice', 93);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    for (let i = 2; i <= 30; i += 1) expect((await startOnPage(browser, link)).status).toBe(200);
    expect(f.relay.channels.size).toBe(30);
    const refused = await startOnPage(browser, link);
    expect(refused.status).toBe(429);
    expect(refused.text).toMatch(/Slow down: too many requests. Try again in \d+ s./);
    expect(f.relay.channels.size).toBe(30);
  });
});

describe('Sign in with Farcaster: the forwarded link', () => {
  it("a member who starts the flow for a victim's FID and sends the victim the bot's page gets nothing: the page opens nothing for the victim", async () => {
    const f = await start();
    const { g } = f;
    const victim = farcasterAccount(f, 'victim', 85);
    // Bob (the attacker) runs /verify for Alice's FID and sends Alice the page.
    const link = await verifyLink(f, 'victim.farcaster', BOB);
    const alice = browserAs(f, ALICE);
    const page = await alice.open(link);
    expect(page.status).toBe(403);
    expect(titleOf(page)).toBe('This link belongs to someone else');
    expect(page.text).toContain('made for the Discord account <strong>@bob</strong>');
    expect(page.text).toContain('do not approve anything in your Farcaster app for them');
    expect(page.text).not.toContain('/start');
    // Her browser can neither start it nor read it; the relay was never asked for a channel.
    const started = await fetch(`${link.replace(PUBLIC_URL, g.gating.verifyUrl)}/start`, {
      method: 'POST',
      headers: { cookie: alice.cookieHeader(link) },
    });
    expect(started.status).toBe(401);
    const status = await fetch(`${link.replace(PUBLIC_URL, g.gating.verifyUrl)}/status`, {
      headers: { cookie: alice.cookieHeader(link) },
    });
    expect(status.status).toBe(401);
    expect(f.relay.channels.size).toBe(0);
    expect(g.h.logs.some((l) => l.msg === 'signing link opened by another Discord account: refused')).toBe(
      true,
    );
    void victim;
    await nothingChanged(f);
  });
});

describe('Sign in with Farcaster: one FID, one Discord account', () => {
  it('a later approval by the same FID for another account takes it over, as a wallet signature does; both are told', async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 86);
    await proveFid(f, alice, ALICE);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role for Alice');
    await proveFid(f, alice, BOB);
    await waitFor(
      () => hasRole(g, BOB, g.humanRoleId) && !hasRole(g, ALICE, g.humanRoleId),
      'the human role moving to Bob',
    );
    expect(await g.gating.store.getHolding(g.guildId, 'identity', 'farcaster,#86')).toMatchObject({
      userId: BOB,
    });
    // Alice is told by direct message (the identity written for Discord, its # escaped), and the log channel says why.
    await waitFor(
      () =>
        directMessages(g, ALICE).some((m) => m.includes('farcaster,\\#86') && m.includes('moved to another')),
      'the DM to Alice',
    );
    await waitFor(
      () => logChannelMessages(g).some((m) => m.content.includes('was proven by another member')),
      'the log line',
    );
  });
});

describe('one Farcaster account backs one member, proven by its record or by Sign in with Farcaster', () => {
  it("a sign-in of the FID takes it from the member who proved its name by record; that record can't take it back", async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 97, { discordHandle: 'alice' });
    const byRecord = seen(
      visibleMessage(await g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE })),
    );
    expect(byRecord).toContain('its own record names you');
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), "Alice's human role (by record)");
    expect(await g.gating.store.getHolding(g.guildId, 'identity', 'farcaster,#97')).toMatchObject({
      userId: ALICE,
      identity: 'alice.farcaster',
      proofMethod: 'record',
    });

    // Bob holds the account's custody key (say, Alice's alt, or the real owner): his sign-in takes it over.
    await proveFid(f, alice, BOB);
    await waitFor(
      () => hasRole(g, BOB, g.humanRoleId) && !hasRole(g, ALICE, g.humanRoleId),
      'the human role moving to Bob',
    );
    const aliceLinks = await g.gating.store.getUserLinks(g.guildId, ALICE);
    expect(aliceLinks.filter((l) => l.releasedAt === null)).toEqual([]);

    // The name's record still names Alice, but a record cannot take the FID from a sign-in.
    const again = seen(
      visibleMessage(await g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE })),
    );
    expect(again).toContain('already backs another member here, proven with Sign in with Farcaster');
    await g.gating.service.idle(g.guildId);
    expect(
      (await g.gating.store.getUserLinks(g.guildId, ALICE)).filter((l) => l.releasedAt === null),
    ).toEqual([]);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
    expect(await g.gating.store.getHolding(g.guildId, 'identity', 'farcaster,#97')).toMatchObject({
      userId: BOB,
    });
  });
});

describe('Sign in with Farcaster: the relay or the chain down', () => {
  it('the relay down: a clear message, nothing removed, and the flow can be retried', async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 87);
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = browserAs(f, ALICE);
    await browser.open(link);
    f.relay.setMode('down');
    const failed = await startOnPage(browser, link);
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('The Farcaster relay did not answer, so no approval link could be made.');
    expect(failed.text).toContain('Start again with a new link');

    f.relay.setMode('up');
    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    f.relay.setMode('down');
    const waiting = await pageUntil(browser, link, 'Approve in your Farcaster app');
    await waitFor(
      () => g.h.logs.some((l) => l.msg === 'farcaster relay: channel not read'),
      'the relay warning',
    );
    const down = await browser.open(link);
    expect(down.text).toContain('The Farcaster relay is not answering right now');
    void waiting;
    f.relay.setMode('up');
    await approveAs(f, alice);
    await pageUntil(browser, link, 'Verified');
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role after the relay came back');
  });

  it('the chain down: the approval cannot be checked, nothing is removed, and starting again works', async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 88);
    const bob = farcasterAccount(f, 'bobcat', 89);
    await proveFid(f, bob, BOB);
    await waitFor(() => hasRole(g, BOB, g.humanRoleId), "Bob's human role");

    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    f.chain.setMode('unavailable');
    await approveAs(f, alice);
    const refused = await pageUntil(browser, link, 'That approval was refused');
    expect(refused.text).toContain('could not read Farcaster’s registry on Optimism just now');
    expect(JSON.stringify(g.h.logs)).not.toContain(f.chain.url);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, BOB, g.humanRoleId)).toBe(true);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([]);

    f.chain.setMode('up');
    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    await approveAs(f, alice);
    await pageUntil(browser, link, 'Verified');
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role after the chain came back');
  });
});

describe('Sign in with Farcaster: not configured', () => {
  it('without OPTIMISM_RPC_URL, /verify of a Farcaster name says so and offers the wallet Web3.bio lists', async () => {
    const f = await start({ OPTIMISM_RPC_URL: '' });
    const alice = farcasterAccount(f, 'alice', 90);
    const reply = visibleMessage(
      await f.g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE }),
    );
    const text = seen(reply);
    expect(text).toContain('Sign in with Farcaster is not configured on this bot');
    expect(text).toContain(alice.listed);
    expect(() => farcasterLinkOf(reply)).toThrow();
  });
});

describe('Sign in with Farcaster on the Linked Roles page', () => {
  it('connects the FID, so likely_human rests on a Farcaster proof; the flow opens for no other browser', async () => {
    const f = await start({ LINKED_ROLES_ENABLED: 'true', TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32) });
    const { g } = f;
    const oauth = g.h.discord.oauth;
    Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
    oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
    const alice = farcasterAccount(f, 'alice', 92);
    const browser = browserAs(f, ALICE);
    const form = await browser.open(`${PUBLIC_URL}/linked-role`);
    expect(form.text).toContain('value="farcaster"');
    const made = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: 'alice.farcaster', proof: 'farcaster' }).toString(),
    });
    expect(titleOf(made)).toBe('Sign in with Farcaster');
    const link = made.url.replace(g.gating.verifyUrl, PUBLIC_URL);
    expect(link).toMatch(/\/linked-role\/farcaster\/[0-9a-f]{32}$/);
    expect(made.text).toContain('every server (Linked Roles)');

    // Another account's browser, with a Linked Roles session of its own, gets nothing from it.
    const bob = browserAs(f, BOB);
    await bob.open(`${PUBLIC_URL}/linked-role`);
    const refused = await bob.open(link);
    expect(refused.status).toBe(403);
    expect((await bob.open(`${link}/start`, { method: 'POST' })).status).toBe(403);
    expect(f.relay.channels.size).toBe(0);

    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    expect(openedChannel(f).signatureParams.requestId).toBe(`discord:user:${ALICE}:linked-roles`);
    await approveAs(f, alice);
    const connected = await pageUntil(browser, link, 'Connected');
    expect(connected.text).toContain('by Sign in with Farcaster');
    await expectConnectedByFid(f, ALICE, 92);

    // /unverify of the name she typed clears the connection that rests on its FID.
    await g.h.run('unverify', { identity: 'alice.farcaster' }, { userId: ALICE });
    expect(await g.gating.store.getRoleConnection(ALICE)).toBeUndefined();
    expect(oauth.roleConnections.get(ALICE)?.metadata).not.toMatchObject({ likely_human: '1' });
  });
});

describe('Sign in with Farcaster: holdings (issue #35)', () => {
  const TOKEN = TEST_TOKEN;
  const units = (whole: number) => BigInt(whole) * 1_000_000n;

  /** Farcaster gating with a Base node holding a 6-decimal token, and a `token base:…:100` rule. */
  async function startWithToken(): Promise<{ f: FarcasterGating; node: FakeEvmRpc; holders: string }> {
    const node = await startFakeEvmRpc(8453);
    baseNode = node;
    node.addToken(TOKEN, 'erc20', 6);
    const f = await start({ BASE_RPC_URL: node.url });
    const holders = await addGuildRole(f.g, 'Holders', 1);
    await addRule(f.g, holders, 'token', `base:${TOKEN}:100`);
    return { f, node, holders };
  }

  it('the custody address that signed counts; the wallet Web3.bio lists for the profile does not', async () => {
    const { f, node, holders } = await startWithToken();
    const alice = farcasterAccount(f, 'alice', 501);
    node.setBalance(TOKEN, alice.custody.address.toLowerCase(), units(150));
    const bob = farcasterAccount(f, 'bob', 502);
    // Bob's profile lists a whale's wallet; his custody address holds nothing.
    node.setBalance(TOKEN, bob.listed, units(1_000));

    await proveFid(f, alice, ALICE);
    await proveFid(f, bob, BOB);
    await waitFor(() => hasRole(f.g, ALICE, holders), 'the holders role for Alice');
    await gatingCommandRun(f.g, 'recheck');
    await f.g.gating.service.idle(f.g.guildId);
    expect(hasRole(f.g, BOB, holders)).toBe(false);
    expect(hasRole(f.g, ALICE, holders)).toBe(true);
  });

  it('an auth address that signed counts as itself; the custody address it did not sign for earns nothing', async () => {
    const { f, node, holders } = await startWithToken();
    const alice = farcasterAccount(f, 'alice', 503);
    const auth = privateKeyToAccount(generatePrivateKey());
    f.chain.addAuthAddress(503, auth.address);
    node.setBalance(TOKEN, alice.custody.address.toLowerCase(), units(1_000));
    const link = await verifyLink(f, 'alice.farcaster');
    const browser = await openPage(f, link);
    await f.relay.approve(openedChannel(f).token, { account: auth, fid: 503, authMethod: 'authAddress' });
    await pageUntil(browser, link, 'Verified');
    await f.g.gating.service.idle(f.g.guildId);
    await gatingCommandRun(f.g, 'recheck');
    await f.g.gating.service.idle(f.g.guildId);
    expect(hasRole(f.g, ALICE, holders)).toBe(false);

    node.setBalance(TOKEN, auth.address.toLowerCase(), units(150));
    await gatingCommandRun(f.g, 'recheck');
    await waitFor(() => hasRole(f.g, ALICE, holders), 'the holders role for the auth address');
  });
});
