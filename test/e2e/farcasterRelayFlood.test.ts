/**
 * A relay that answers more than 64 KiB (issue #33): the member's page opens a channel, and the relay
 * streams a 256 MiB answer. The bot's server stops reading at 64 KiB and closes the connection: the
 * page says the relay did not answer, nothing changes, and the stand-in saw only what the kernel's
 * buffers took before the close, never the whole answer. The honest control: the same relay answering
 * normally opens the channel and the member proves the FID.
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
  titleOf,
} from './farcasterHarness.ts';
import { hasRole, waitFor } from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';

const start = farcasterGatingPerTest();

const FLOOD = 256 * 1024 * 1024;

describe('a Farcaster relay answering more than 64 KiB', () => {
  it('is cut off while read: the page says the relay did not answer, and most of the answer was never sent', async () => {
    const f = await start();
    const alice = farcasterAccount(f, 'alice', 88);
    const link = farcasterLinkOf(
      visibleMessage(await f.g.h.run('verify', { identity: 'alice.farcaster' }, { userId: ALICE })),
    );
    const browser = browserAs(f, ALICE);
    expect((await browser.open(link)).status).toBe(200);
    f.relay.setMode('flood');
    const failed = await startOnPage(browser, link);
    expect(failed.status).toBe(502);
    expect(failed.text).toContain('The Farcaster relay did not answer, so no approval link could be made.');
    // The bot closed the connection: the stand-in stopped writing a few MiB in, at most.
    await waitFor(() => f.relay.floods[0]?.closed === true, 'the flooded connection closed');
    expect(f.relay.floods).toHaveLength(1);
    const [flooded] = f.relay.floods;
    expect(flooded?.finished).toBe(false);
    expect(flooded?.bytes).toBeLessThan(16 * 1024 * 1024);
    expect(flooded?.bytes).toBeLessThan(FLOOD);
    expect(f.relay.channels.size).toBe(0);
    await f.g.gating.service.idle(f.g.guildId);
    expect(await f.g.gating.store.getUserLinks(f.g.guildId, ALICE)).toEqual([]);

    // The honest control: the relay answers as the protocol says, and the same flow proves the FID.
    f.relay.setMode('up');
    expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
    await approveAs(f, alice);
    await pageUntil(browser, link, 'Verified');
    await f.g.gating.service.idle(f.g.guildId);
    await waitFor(() => hasRole(f.g, ALICE, f.g.humanRoleId), 'the human role');
  });
});
