/**
 * Sign in with Farcaster (issue #29), end to end: the real bot with gating, its page driven over HTTP by
 * the member's browser (signed in to Discord), the stand-in relay playing the member's Farcaster app and
 * the stand-in OP Mainnet node answering the registries' calls. An honest member proves `name.farcaster`
 * and gets its rules' roles; each attack is acted out through the stand-ins and changes nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  approveAs,
  browserAs,
  type FarcasterGating,
  farcasterAccount,
  farcasterLinkOf,
  pageUntil,
  startFarcasterGating,
  startOnPage,
  titleOf,
} from './farcasterHarness.ts';
import { closeGating, hasRole, seen, waitFor } from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';

let current: FarcasterGating | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
  await closeGating();
});

async function start(): Promise<FarcasterGating> {
  current = await startFarcasterGating();
  return current;
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
  });
});
