/**
 * One account flooding the Linked Roles proof (the real bot, its web app at PUBLIC_URL, the stand-in
 * Discord and Web3.bio, and the bot's own Web3.bio rate limit): the proofs are limited per account and
 * read Web3.bio through the cache, so the flood costs a read or two of the record, says "slow down" with
 * the wait, and another member's /whois sent meanwhile answers inside Discord's 3-second window.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { TestBrowser } from '../testBrowser.ts';
import { addIdentity, closeGating, PUBLIC_URL, startGating } from './gatingHarness.ts';
import { ALICE, BOB } from './harness.ts';

afterEach(closeGating);

describe('a burst of 30 Linked Roles proofs by one account', () => {
  it('costs at most 2 reads of the record, turns 25 away with the wait, and leaves another member’s /whois within 3 s', async () => {
    // Reverting the per-account limit answers all 30 (no 429); reading fresh (bypassing the cache) costs
    // 2 reads per proof, which the bot's 4/s Web3.bio budget queues ahead of Bob's /whois.
    const g = await startGating({
      env: {
        DISCORD_CLIENT_SECRET: 'test-client-secret',
        LINKED_ROLES_ENABLED: 'true',
        TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
        WEB3BIO_RATE_LIMIT: '4/1s',
      },
    });
    const oauth = g.h.discord.oauth;
    Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
    oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
    oauth.signInAs(ALICE);
    const browser = new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
    expect((await browser.open(`${PUBLIC_URL}/linked-role`)).status).toBe(200);
    // A record naming someone else: each proof reads it and is refused, and the session stays.
    addIdentity(g, 'notalice.eth', { discordHandle: 'carol' });
    addIdentity(g, 'bobsname.eth', { discordHandle: 'bob' });
    const before = g.h.upstream.requests.length;

    const proofs = Array.from({ length: 30 }, () =>
      browser.open(`${PUBLIC_URL}/linked-role/prove`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ identity: 'notalice.eth' }).toString(),
      }),
    );
    const whoisStarted = performance.now();
    const whois = g.h.run('whois', { identity: 'bobsname.eth' }, { userId: BOB }).then((result) => ({
      result,
      ms: performance.now() - whoisStarted,
    }));
    const [answers, bob] = await Promise.all([Promise.all(proofs), whois]);

    const statuses = answers.map((a) => a.status).sort();
    expect(statuses).toEqual([...Array(5).fill(403), ...Array(25).fill(429)]);
    const slowed = answers.find((a) => a.status === 429);
    expect(slowed?.text).toMatch(
      /Slow down: that was many proofs in a short while\. Nothing was changed; try again in \d+ seconds\./,
    );
    // A read is a profile and a domain request; the account's first two proofs may read fresh.
    const reads = g.h.upstream.requests.slice(before).filter((r) => r.path.includes('notalice.eth'));
    expect(reads.length).toBeLessThanOrEqual(4);
    expect(bob.result.message?.embeds[0]?.title ?? '').toContain('bobsname.eth');
    expect(bob.ms).toBeLessThan(3_000);
  });
});
