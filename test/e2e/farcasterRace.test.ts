/**
 * One FID, one Discord account, under concurrency (issue #29): ten accounts each start Sign in with
 * Farcaster for the same FID, half on one bot process and half on a second one sharing PostgreSQL, and
 * the FID's owner approves every channel at the same moment. The store's registry decides: exactly one
 * account holds the FID, every other page says another account proved it after its sign-in started, and
 * only the holder gets the role.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  CLIENT_SECRET,
  type FarcasterGating,
  farcasterAccount,
  farcasterLinkOf,
  startFarcasterGating,
  startOnPage,
  titleOf,
} from './farcasterHarness.ts';
import { addMember, closeGating, hasRole, PUBLIC_URL, startSecondBot, waitFor } from './gatingHarness.ts';
import { visibleMessage } from './harness.ts';

const ACCOUNTS = 10;
const cleanups: (() => Promise<void>)[] = [];
let current: FarcasterGating | undefined;
afterEach(async () => {
  await current?.close();
  current = undefined;
  await closeGating();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('one FID for many accounts at once, on PostgreSQL and two bot processes', () => {
  it('exactly one account holds the FID; every other is told another account proved it after its sign-in started', async () => {
    const database = await createDatabase('farcaster_race');
    cleanups.push(database.drop);
    const f = await startFarcasterGating({ env: { DATABASE_URL: database.url } });
    current = f;
    const { g } = f;
    const second = await startSecondBot(g, {
      DATABASE_URL: database.url,
      GATING_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: CLIENT_SECRET,
      FARCASTER_RELAY_URL: f.relay.url,
      OPTIMISM_RPC_URL: f.chain.url,
    });
    cleanups.push(second.stop);
    const owner = farcasterAccount(f, 'shared', 95);

    const started: { userId: string; link: string; browser: TestBrowser }[] = [];
    for (let i = 0; i < ACCOUNTS; i += 1) {
      const userId = await addMember(g, `racer${i}`);
      const link = farcasterLinkOf(
        visibleMessage(await g.h.run('verify', { identity: 'shared.farcaster' }, { userId })),
      );
      // Half the pages are served by the second process: both read and write the one PostgreSQL.
      const server = i % 2 === 0 ? g.gating.verifyUrl : second.url;
      g.h.discord.oauth.signInAs(userId);
      const browser = new TestBrowser(PUBLIC_URL, () => server);
      expect((await browser.open(link)).status).toBe(200);
      expect(titleOf(await startOnPage(browser, link))).toBe('Approve in your Farcaster app');
      started.push({ userId, link, browser });
    }
    expect(f.relay.channels.size).toBe(ACCOUNTS);

    // The FID's owner approves every channel at once; each process's watcher reads its own.
    await Promise.all(
      [...f.relay.channels.keys()].map((token) =>
        f.relay.approve(token, { account: owner.custody, fid: 95 }),
      ),
    );
    const ends = async () =>
      Promise.all(
        started.map(async (s) => ({ userId: s.userId, title: titleOf(await s.browser.open(s.link)) })),
      );
    let pages = await ends();
    const deadline = Date.now() + 15_000;
    while (pages.some((p) => p.title !== 'Verified' && p.title !== 'Approved, but not linked')) {
      if (Date.now() > deadline) throw new Error(`pages did not finish: ${JSON.stringify(pages)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      pages = await ends();
    }
    const winners = pages.filter((p) => p.title === 'Verified');
    expect(winners).toHaveLength(1);
    const winner = winners[0]?.userId ?? '';
    const loser = started.find((s) => s.userId !== winner);
    const lost = await loser?.browser.open(loser.link);
    expect(lost?.text).toContain('another Discord account proved FID 95 after this sign-in started');

    const holding = await g.gating.store.getHolding(g.guildId, 'identity', 'farcaster,#95');
    expect(holding?.userId).toBe(winner);
    const linked = [];
    for (const s of started) linked.push(...(await g.gating.store.getUserLinks(g.guildId, s.userId)));
    expect(linked.filter((l) => l.releasedAt === null).map((l) => l.userId)).toEqual([winner]);
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, winner, g.humanRoleId), 'the human role for the one holder');
    expect(started.filter((s) => hasRole(g, s.userId, g.humanRoleId)).map((s) => s.userId)).toEqual([winner]);
  }, 60_000);
});
