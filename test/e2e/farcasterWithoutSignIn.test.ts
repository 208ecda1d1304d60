/**
 * Sign in with Farcaster needs the Discord sign-in (issue #33): only the sign-in ties a Farcaster page to
 * the member it was made for. With OPTIMISM_RPC_URL set but no DISCORD_CLIENT_SECRET, start-up says
 * Farcaster sign-in is off and why, /verify does not offer it, and a forwarded page (a flow made for the
 * sender, opened by the victim) opens nothing: no channel, no approval, no FID for the sender. Next to
 * it, the honest control with the secret: the page opens for its member and for no one else.
 */
import { describe, expect, it } from 'vitest';
import { FARCASTER_NEEDS_DISCORD_SIGN_IN } from '../../src/app/gatingSetup.ts';
import { createFarcasterFlow } from '../../src/gating/proofs/farcasterSignIn.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  browserAs,
  type FarcasterGating,
  farcasterAccount,
  farcasterGatingPerTest,
  farcasterLinkOf,
  startOnPage,
  titleOf,
} from './farcasterHarness.ts';
import { hasRole, PUBLIC_URL, seen } from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';

const start = farcasterGatingPerTest();

/** A flow for the victim's FID made for Bob, as /verify made one before Farcaster needed the sign-in. */
async function bobsFlow(f: FarcasterGating): Promise<string> {
  const made = await createFarcasterFlow(
    f.g.gating.store,
    { publicUrl: PUBLIC_URL },
    {
      guildId: f.g.guildId,
      userId: BOB,
      userName: 'bob',
      guildName: null,
      identity: 'victim.farcaster',
      fid: 85,
    },
  );
  return made.url;
}

const startUpSaysOff = (f: FarcasterGating) =>
  f.g.h.logs.some((l) => l.msg === FARCASTER_NEEDS_DISCORD_SIGN_IN && l.level === 40);

describe('Sign in with Farcaster without the Discord sign-in (DISCORD_CLIENT_SECRET unset)', () => {
  it('start-up says it is off and why; /verify does not offer it; a forwarded page opens nothing and proves nothing', async () => {
    const f = await start({ DISCORD_CLIENT_SECRET: '' });
    const { g } = f;
    farcasterAccount(f, 'victim', 85);
    expect(startUpSaysOff(f)).toBe(true);
    const reply = visibleMessage(await g.h.run('verify', { identity: 'victim.farcaster' }, { userId: BOB }));
    expect(seen(reply)).toContain('Sign in with Farcaster is not configured on this bot');
    expect(() => farcasterLinkOf(reply)).toThrow();
    // Bob sends the victim a Farcaster page anyway (a flow made for him): it is not there to open.
    const link = await bobsFlow(f);
    const victim = new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
    const page = await victim.open(link);
    expect(page.status).toBe(404);
    expect(page.text).not.toContain('/start');
    expect((await victim.open(`${link}/start`, { method: 'POST' })).status).toBe(404);
    expect((await victim.open(`${link}/status`)).status).toBe(404);
    expect(f.relay.channels.size).toBe(0);
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, BOB)).toEqual([]);
    expect(hasRole(g, BOB, g.humanRoleId)).toBe(false);
  });

  it('the honest control, with DISCORD_CLIENT_SECRET: no start-up warning, the page opens for its member only', async () => {
    const f = await start();
    const { g } = f;
    farcasterAccount(f, 'victim', 85);
    expect(startUpSaysOff(f)).toBe(false);
    const link = farcasterLinkOf(
      visibleMessage(await g.h.run('verify', { identity: 'victim.farcaster' }, { userId: BOB })),
    );
    const bob = browserAs(f, BOB);
    expect((await bob.open(link)).status).toBe(200);
    expect(titleOf(await startOnPage(bob, link))).toBe('Approve in your Farcaster app');
    const alice = browserAs(f, ALICE);
    const forwarded = await alice.open(link);
    expect(forwarded.status).toBe(403);
    expect(titleOf(forwarded)).toBe('This link belongs to someone else');
  });
});
