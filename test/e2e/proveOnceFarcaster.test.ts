/**
 * Prove once, bring it anywhere (issue #36) with Sign in with Farcaster: a FID proven in server A by the
 * member's Farcaster app is brought to server B by its name, with no new sign-in: linked as the FID, as
 * in A. Another account typing the same name in B is sent to its own Sign in with Farcaster.
 */
import { describe, expect, it } from 'vitest';
import {
  approveAs,
  browserAs,
  farcasterAccount,
  farcasterGatingPerTest,
  farcasterLinkOf,
  pageUntil,
  startOnPage,
} from './farcasterHarness.ts';
import { embedOf, hasRole, seen } from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';
import { addServer, verifyIn } from './serverShortcuts.ts';

const start = farcasterGatingPerTest();

describe('a Farcaster account proven in one server, brought to another', () => {
  it('B links FID 77 at once for her, with no sign-in; Bob asking for the same name is sent to sign in himself', async () => {
    const f = await start();
    const { g } = f;
    const alice = farcasterAccount(f, 'alice', 77);
    const b = await addServer(g, 'Server B');

    const link = farcasterLinkOf(visibleMessage(await g.h.run('verify', { identity: 'alice.farcaster' })));
    const browser = browserAs(f, ALICE);
    await browser.open(link);
    await startOnPage(browser, link);
    await approveAs(f, alice);
    await pageUntil(browser, link, 'Verified');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect((await g.gating.store.accountProofsOf(ALICE)).map((p) => p.subject)).toEqual(['farcaster,#77']);

    const bobs = await verifyIn(g, b, BOB, 'alice.farcaster');
    expect(seen(bobs)).toContain('Sign in with Farcaster');
    expect(await g.gating.store.getUserLinks(b.id, BOB)).toEqual([]);

    const brought = await verifyIn(g, b, ALICE, 'alice.farcaster');
    expect(embedOf(brought).title).toBe('Verified');
    expect(seen(brought)).toContain('was proven before by your own signature');
    expect(JSON.stringify(brought.components)).not.toContain('/farcaster/');
    expect(await g.gating.store.getUserLinks(b.id, ALICE)).toEqual([
      expect.objectContaining({
        identity: 'farcaster,#77',
        proofMethod: 'signature',
        address: alice.custody.address.toLowerCase(),
      }),
    ]);
    expect(g.h.discord.state.guilds.get(b.id)?.members.get(ALICE)?.roles).toContain(b.humanRoleId);
  });
});
