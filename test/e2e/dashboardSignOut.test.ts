/**
 * Signing out of the dashboard ends the session whatever Discord answers (issue #33). The attack: a
 * copy of the session cookie (taken from the browser before the sign-out) replayed afterwards, with
 * Discord down at the sign-out, so the token cannot be revoked there, and with Discord back. Before,
 * the sign-out itself was refused while Discord's server list could not be read, leaving the cookie and
 * its token alive for up to 12 h. The honest control: Discord up, the token revoked at the stand-in.
 * Either way the sign-out is recorded in the shared store, so the copy opens nothing at once, even while
 * the server list it carries is fresh (no Discord read needed to trust it).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csrfOf, type Dashboard, signIn, signInWithCopy, startServerA, textOf } from './dashboardHarness.ts';
import { addMember, closeGating } from './gatingHarness.ts';

const DISCORD_DOWN = /^\/(users\/@me\/guilds|users\/@me|oauth2\/token\/revoke|oauth2\/token)$/;
const SIGNED_OUT = 'This page needs a Discord sign-in';

describe('signing out of the dashboard', () => {
  let d: Dashboard;
  let base: string;
  let admins: string;

  beforeAll(async () => {
    // Rights read at most 1 s ago: a sign-out after that would have had to read them from Discord.
    ({ d, base, admins } = await startServerA(1));
  }, 60_000);
  afterAll(async () => {
    d.g.h.discord.clearFaults();
    await closeGating();
  });

  /** A moderator signed in, and a copy of their cookies (what an attacker took from the browser). */
  async function signedInWithCopy(name: string) {
    const userId = await addMember(d.g, name, { roles: [admins] });
    const { mod, copy } = await signInWithCopy(d, userId);
    expect((await copy.get(base)).status).toBe(200);
    return { userId, mod, copy, csrf: csrfOf(mod.page.text) };
  }

  const guildListReads = () => d.g.h.discord.requests.filter((r) => r.path === '/users/@me/guilds').length;
  const revokeAsked = () =>
    d.g.h.discord.requests.filter((r) => r.method === 'POST' && r.path === '/oauth2/token/revoke');

  it('during a Discord outage: the cookie is cleared, the sign-out recorded, and the old cookie opens nothing, then or after', async () => {
    const { mod, copy, csrf } = await signedInWithCopy('outage');
    const revokedBefore = d.g.h.discord.oauth.revokedTokens.length;
    const askedBefore = revokeAsked().length;
    d.g.h.discord.addFault({ path: DISCORD_DOWN, status: 503, times: Number.POSITIVE_INFINITY });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    // The server list is older than the rights' age and Discord cannot be asked: pages say Discord is down…
    expect((await mod.get(base)).status).toBe(503);
    // …but signing out needs nothing from Discord.
    const out = await mod.post('/dashboard/sign-out', { csrf });
    expect(out.status).toBe(200);
    expect(textOf(out.text)).toContain('You are signed out of the dashboard.');
    expect(mod.cookies.has('dashboard_session')).toBe(false);
    // Revocation was tried once and failed at Discord: recorded here, not retried.
    expect(revokeAsked().length).toBe(askedBefore + 1);
    expect(revokeAsked().at(-1)?.fault).toBe(true);
    expect(d.g.h.discord.oauth.revokedTokens).toHaveLength(revokedBefore);
    expect(
      d.g.h.logs.some(
        (l) =>
          l.level === 40 &&
          l.msg ===
            'dashboard sign-out: Discord did not revoke the token; the session is signed out here all the same',
      ),
    ).toBe(true);
    // The copy of the cookie, during the outage and once Discord is back (its token still valid there).
    const during = await copy.get(base);
    expect(during.status).toBe(403);
    expect(textOf(during.text)).toContain(SIGNED_OUT);
    d.g.h.discord.clearFaults();
    const listsRead = guildListReads();
    const after = await copy.get(base);
    expect(after.status).toBe(403);
    expect(textOf(after.text)).toContain(SIGNED_OUT);
    expect(textOf(after.text)).not.toContain('Server A');
    // Refused before Discord was asked anything with the signed-out session's token.
    expect(guildListReads()).toBe(listsRead);
  });

  it('the honest control, Discord up: the token is revoked at Discord, and the copy opens nothing at once', async () => {
    const { userId, mod, copy, csrf } = await signedInWithCopy('honest');
    const revokedBefore = d.g.h.discord.oauth.revokedTokens.length;
    const out = await mod.post('/dashboard/sign-out', { csrf });
    expect(out.status).toBe(200);
    expect(mod.cookies.has('dashboard_session')).toBe(false);
    expect(d.g.h.discord.oauth.revokedTokens).toHaveLength(revokedBefore + 1);
    const revoked = d.g.h.discord.oauth.revokedTokens.at(-1) ?? '';
    expect(JSON.stringify(d.g.h.logs)).not.toContain(revoked);
    // At once: the server list in the copy is still fresh, so no Discord read would have caught it.
    const replay = await copy.get(base);
    expect(replay.status).toBe(403);
    expect(textOf(replay.text)).toContain(SIGNED_OUT);
    // The member signs in again: a new session, which opens the dashboard as before.
    const again = await signIn(d, userId);
    expect((await again.get(base)).status).toBe(200);
  });

  it('a sign-out from another site or without the session’s CSRF token is refused and ends nothing', async () => {
    const { mod, copy } = await signedInWithCopy('forged');
    expect((await mod.post('/dashboard/sign-out', { csrf: 'forged' })).status).toBe(403);
    expect(mod.cookies.has('dashboard_session')).toBe(true);
    expect((await copy.get(base)).status).toBe(200);
  });
});
