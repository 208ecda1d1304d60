/**
 * Sign in with Farcaster on the Linked Roles page, finished by the server (issue #34 item 4): once the
 * member approves in their Farcaster app (the stand-in relay), the bot's watch of the channel connects
 * the FID and the stand-in Discord receives the role-connection write, with no page loaded again; a later
 * page load shows it and writes nothing more. A flow opened by another account, an approval that is not
 * the one asked for, and an FID another account signed for after the flow was made write nothing.
 */
import { describe, expect, it } from 'vitest';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import type { FarcasterFlow } from '../../src/store/types.ts';
import type { TestBrowser } from '../testBrowser.ts';
import {
  approveAs,
  browserAs,
  expectConnectedByFid,
  type FarcasterGating,
  farcasterAccount,
  farcasterGatingPerTest,
  startOnPage,
  titleOf,
} from './farcasterHarness.ts';
import { PUBLIC_URL, waitFor } from './gatingHarness.ts';
import { ALICE, BOB, FARCASTER_POLL_MS } from './harness.ts';

const startGating = farcasterGatingPerTest();

/**
 * The gating bot with Linked Roles and Sign in with Farcaster on, the app's metadata registered, and Alice's
 * Farcaster account (`aliceFid`).
 */
async function start(aliceFid: number) {
  const f = await startGating({ LINKED_ROLES_ENABLED: 'true', TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32) });
  const oauth = f.g.h.discord.oauth;
  Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
  oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
  return { f, g: f.g, oauth, alice: farcasterAccount(f, 'alice', aliceFid) };
}

/** `userId` signs in on the Linked Roles page and asks to sign in with Farcaster as `identity`. */
async function makeFlow(
  f: FarcasterGating,
  userId: string,
  identity: string,
): Promise<{ browser: TestBrowser; link: string }> {
  const browser = browserAs(f, userId);
  await browser.open(`${PUBLIC_URL}/linked-role`);
  const made = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ identity, proof: 'farcaster' }).toString(),
  });
  expect(titleOf(made)).toBe('Sign in with Farcaster');
  const link = made.url.replace(f.g.gating.verifyUrl, PUBLIC_URL);
  expect(link).toMatch(/\/linked-role\/farcaster\/[0-9a-f]{32}$/);
  return { browser, link };
}

/** Role-connection writes (`PUT /users/@me/applications/{id}/role-connection`) the stand-in Discord saw. */
function roleConnectionPuts(f: FarcasterGating): number {
  return f.g.h.discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/role-connection'))
    .length;
}

/** The flow of `link` once `settled` holds of it, or after 10 s (no page is loaded meanwhile). */
async function flowOnceSettled(
  f: FarcasterGating,
  link: string,
  settled: (flow: FarcasterFlow) => boolean = (flow) => flow.state === 'done' && flow.outcome !== null,
): Promise<FarcasterFlow | undefined> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const flow = await f.g.gating.store.getFarcasterFlow(link.slice(-32));
    if ((flow && settled(flow)) || Date.now() > deadline) return flow;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Long enough for the server's watch (a read every FARCASTER_POLL_MS) to have read the channel twice more. */
function watchPasses(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5 * FARCASTER_POLL_MS));
}

describe('Sign in with Farcaster on the Linked Roles page, finished by the server', () => {
  it('the approval alone writes the role connection once; a later page load shows it and writes nothing', async () => {
    const { f, alice } = await start(93);
    const { browser, link } = await makeFlow(f, ALICE, 'alice.farcaster');
    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    expect(roleConnectionPuts(f)).toBe(0);

    await approveAs(f, alice);
    // No page is loaded from here on: only the server's watch of the channel reads the approval.
    await waitFor(() => roleConnectionPuts(f) === 1, 'the role-connection write', 10_000);
    await expectConnectedByFid(f, ALICE, 93);
    const flow = await flowOnceSettled(f, link);
    expect(flow).toMatchObject({ state: 'done', outcome: { kind: 'connected' } });
    // The grant the flow kept is dropped with its outcome.
    expect(flow?.sealedGrant ?? null).toBeNull();

    await watchPasses();
    expect(roleConnectionPuts(f)).toBe(1);
    // The page, loaded after the server finished, shows the connection (twice) and writes nothing again.
    for (let i = 0; i < 2; i += 1) {
      const page = await browser.open(link);
      expect(page.status).toBe(200);
      expect(titleOf(page)).toBe('Connected');
      expect(page.text).toContain('by Sign in with Farcaster');
      expect(page.text).toContain('farcaster,#93');
    }
    const status = await browser.open(`${link}/status`);
    expect(JSON.parse(status.text)).toMatchObject({ ok: true, state: 'done.0' });
    expect(roleConnectionPuts(f)).toBe(1);
  });

  it("another account's browser opens and starts nothing of the flow; the approval writes only for the member who made it", async () => {
    const { f, g, oauth, alice } = await start(94);
    const { browser, link } = await makeFlow(f, ALICE, 'alice.farcaster');

    // Bob, signed in on the Linked Roles page himself, opens Alice's flow: refused, no channel opened.
    const bob = browserAs(f, BOB);
    await bob.open(`${PUBLIC_URL}/linked-role`);
    expect((await bob.open(link)).status).toBe(403);
    expect((await bob.open(`${link}/start`, { method: 'POST' })).status).toBe(403);
    expect(JSON.parse((await bob.open(`${link}/status`)).text)).toMatchObject({ state: 'other_account' });
    expect(f.relay.channels.size).toBe(0);
    await watchPasses();
    expect(roleConnectionPuts(f)).toBe(0);

    // Honest control: Alice starts and approves it; the write is hers alone.
    g.h.discord.oauth.signInAs(ALICE);
    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    await approveAs(f, alice);
    await waitFor(() => roleConnectionPuts(f) === 1, 'the role-connection write', 10_000);
    expect(oauth.roleConnections.get(ALICE)?.platform_username).toBe('farcaster,#94');
    expect(oauth.roleConnections.get(BOB)).toBeUndefined();
    expect(await g.gating.store.getRoleConnection(BOB)).toBeUndefined();
    // Bob loading the page after it finished still gets nothing of it.
    expect((await bob.open(link)).status).toBe(403);
    expect(roleConnectionPuts(f)).toBe(1);
  });

  it('an approval from another FID is refused by the server: nothing is written, and the member may start again', async () => {
    const { f, alice } = await start(95);
    const { browser, link } = await makeFlow(f, ALICE, 'alice.farcaster');
    await startOnPage(browser, link);
    await approveAs(f, alice, { fid: 4242 });
    expect(await flowOnceSettled(f, link, (flow) => flow.state !== 'open')).toMatchObject({
      state: 'refused',
      outcome: { reason: 'wrong_fid' },
    });
    await watchPasses();
    expect(roleConnectionPuts(f)).toBe(0);
    expect(f.g.h.discord.oauth.roleConnections.get(ALICE)).toBeUndefined();
    const page = await browser.open(link);
    expect(titleOf(page)).toBe('That approval was refused');
    expect(roleConnectionPuts(f)).toBe(0);
  });

  it('an FID another account signed for after the flow was made is not taken over: nothing is written for the later approval', async () => {
    const { f, g, oauth, alice } = await start(96);
    // Bob makes his flow for the FID first; Alice then signs for it (her own flow, approved).
    const bobFlow = await makeFlow(f, BOB, 'alice.farcaster');
    const aliceFlow = await makeFlow(f, ALICE, 'alice.farcaster');
    await startOnPage(aliceFlow.browser, aliceFlow.link);
    await approveAs(f, alice);
    await waitFor(() => roleConnectionPuts(f) === 1, "Alice's role-connection write", 10_000);
    expect(oauth.roleConnections.get(ALICE)?.platform_username).toBe('farcaster,#96');

    // Bob's older flow is approved by the same FID: the server refuses the claim and writes nothing.
    expect(titleOf(await startOnPage(bobFlow.browser, bobFlow.link))).toBe('Approve in your Farcaster app');
    await approveAs(f, alice);
    expect(await flowOnceSettled(f, bobFlow.link)).toMatchObject({
      state: 'done',
      outcome: { kind: 'refused' },
    });
    await watchPasses();
    expect(roleConnectionPuts(f)).toBe(1);
    expect(oauth.roleConnections.get(BOB)).toBeUndefined();
    expect(await g.gating.store.getHolding('0', 'identity', 'farcaster,#96')).toMatchObject({
      userId: ALICE,
    });
    // Bob's page then says another account proved the FID, and writes nothing either.
    const page = await bobFlow.browser.open(bobFlow.link);
    expect(page.status).toBe(409);
    expect(roleConnectionPuts(f)).toBe(1);
  });
});
