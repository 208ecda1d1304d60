/**
 * The dashboard's guarantees, acted out through the stand-in Discord by the actors of the threat model:
 * a member without Manage Server opening a server's pages; an admin of one server reading or changing
 * another by its id; a cross-site form post (no or a foreign Origin, no CSRF token, another session's
 * token); a replayed or stolen OAuth2 `state`; and a session cookie from before a demotion (the pages
 * go within the rights' maximum age; changes are refused at once, as they read the member's roles).
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  csrfOf,
  type Dashboard,
  RIGHTS_SECONDS,
  signIn,
  startServerA,
  TestBrowser,
  textOf,
  untilSnapshot,
} from './dashboardHarness.ts';
import { addGuildRole, addMember, closeGating } from './gatingHarness.ts';
import { BOB } from './harness.ts';

/** What a server's page must never show to someone without the rights: its name, roles or events. */
function assertNothingOf(html: string, secrets: string[]): void {
  for (const secret of secrets) expect(html).not.toContain(secret);
}

describe('the dashboard against its attackers', () => {
  let d: Dashboard;
  let base: string;
  let admins: string;
  let owner: Awaited<ReturnType<typeof signIn>>;
  let csrf: string;
  const RULE_ROLE = 'Secret Rule Role';
  let ruleRole: string;

  beforeAll(async () => {
    // Rights read at most RIGHTS_SECONDS ago: a demotion shows within that (60 s at most in production).
    ({ d, base, admins } = await startServerA(RIGHTS_SECONDS));
    ruleRole = await addGuildRole(d.g, RULE_ROLE, 4);
    await untilSnapshot(d.g, d.g.guildId, [ruleRole]);
    owner = await signIn(d, d.g.ownerId);
    csrf = csrfOf((await owner.get(`${base}/rules`)).text);
  }, 60_000);
  afterAll(async () => {
    await closeGating();
  });

  const rulesStored = () => d.g.gating.store.listRuleConditions(d.g.guildId);
  const apply = { role: '', condition: 'score:30', match: '' };

  it('a member without Manage Server sees no server, and a 404 with nothing of it on every page', async () => {
    // Bob may even hold Manage Roles (enough for /gating): the dashboard takes Manage Server.
    const rolesOnly = await addGuildRole(d.g, 'Role Managers', 6, PermissionFlagsBits.ManageRoles);
    d.g.h.discord.updateMember(d.g.guildId, BOB, { roles: [rolesOnly] });
    const bob = await signIn(d, BOB);
    expect(textOf(bob.page.text)).toContain('None yet');
    for (const path of ['', '/rules', '/exemptions', '/held', '/audit', '/audit.csv', '/health']) {
      const page = await bob.get(`${base}${path}`);
      expect(page.status, path).toBe(404);
      assertNothingOf(page.text, ['Server A', RULE_ROLE, 'Verified Human', 'gating set up']);
    }
    const post = await bob.post(`${base}/rules/apply`, {
      csrf: csrfOf(bob.page.text),
      ...apply,
      role: ruleRole,
    });
    expect(post.status).toBe(404);
    expect(await rulesStored()).toEqual([]);
    // Signed out altogether: 403, a sign-in link, nothing of the server.
    const stranger = await new TestBrowser(d.publicUrl).get(base);
    expect(stranger.status).toBe(403);
    expect(stranger.text).toContain(`href="/dashboard?next=%2F${d.g.guildId}"`);
    assertNothingOf(stranger.text, ['Server A', RULE_ROLE]);
    const anonymousPost = await new TestBrowser(d.publicUrl).post(`${base}/rules/apply`, {
      ...apply,
      role: ruleRole,
    });
    expect(anonymousPost.status).toBe(403);
  });

  it('an admin of server A can neither read nor change server B by its id', async () => {
    const serverB = d.g.h.discord.addGuild({ name: 'Server B' });
    const bRole = d.g.h.discord.addRole(serverB.id, { name: 'B Only Role', position: 2 });
    // Server A's owner is a plain member of B; B exists, the bot is in it, and it has data.
    d.g.h.discord.addMember(serverB.id, { id: d.g.ownerId, username: 'guild-owner' });
    await untilSnapshot(d.g, serverB.id, [bRole.id]);
    await d.g.gating.store.saveGuildSettings({
      guildId: serverB.id,
      enabled: true,
      humanRoleId: bRole.id,
      spamRoleId: null,
      riskyRoleId: null,
      minScore: null,
      spamRemovesHuman: true,
      logChannelId: null,
    });
    await d.g.gating.store.addAuditEvent({ guildId: serverB.id, kind: 'linked', reason: 'B secret event' });
    const a = await signIn(d, d.g.ownerId);
    expect(textOf(a.page.text)).not.toContain('Server B');
    const token = csrfOf(a.page.text);
    for (const path of [
      '',
      '/rules',
      '/exemptions',
      '/held',
      '/audit',
      '/audit.csv?kind=linked',
      '/health',
    ]) {
      const page = await a.get(`/dashboard/${serverB.id}${path}`);
      expect(page.status, path).toBe(404);
      assertNothingOf(page.text, ['Server B', 'B Only Role', 'B secret event']);
    }
    for (const [path, form] of [
      ['/rules/preview', { role: bRole.id, kind: 'score', value: '1' }],
      ['/rules/apply', { ...apply, role: bRole.id }],
      ['/exemptions/add', { member: d.g.ownerId, role: '' }],
      ['/held/confirm', {}],
      ['/held/keep', {}],
    ] as const) {
      const post = await a.post(`/dashboard/${serverB.id}${path}`, { csrf: token, ...form });
      expect(post.status, path).toBe(404);
    }
    expect(await d.g.gating.store.listRuleConditions(serverB.id)).toEqual([]);
    expect(await d.g.gating.store.listExemptions(serverB.id)).toEqual([]);
    // Nor through A's pages: a role of B named in A's form is refused before anything runs.
    const crossed = await a.post(`${base}/rules/apply`, { csrf: token, ...apply, role: bRole.id });
    expect(crossed.status).toBe(400);
    expect(await rulesStored()).toEqual([]);
    // A server the account owns where the bot is not installed is nobody's dashboard either.
    const noBot = d.g.h.discord.addGuild({ name: 'No Bot Here', ownerId: d.g.ownerId, botInstalled: false });
    expect((await a.get(`/dashboard/${noBot.id}`)).status).toBe(404);
  });

  it('a cross-site form post changes nothing: no or a foreign Origin, no CSRF token, another session’s token', async () => {
    const form = { csrf, ...apply, role: ruleRole };
    const site = new URL(d.publicUrl).origin;
    const fromSite = { origin: site, 'sec-fetch-site': 'same-origin' };
    // Each as a browser (or a script) would send it, the victim's session cookie included.
    const attempts: [string, Record<string, string>, Record<string, string>][] = [
      ['no Origin, no Referer', form, {}],
      ['a foreign Origin', form, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }],
      ['a foreign Origin without Sec-Fetch-Site', form, { origin: 'https://evil.example' }],
      ['a foreign Referer and no Origin', form, { referer: 'https://evil.example/page' }],
      ['Sec-Fetch-Site cross-site', form, { origin: site, 'sec-fetch-site': 'cross-site' }],
      ['the Origin "null"', form, { origin: 'null' }],
      ['no CSRF token', { ...apply, role: ruleRole }, fromSite],
      ['a forged CSRF token', { ...form, csrf: 'A'.repeat(43) }, fromSite],
    ];
    for (const [what, body, headers] of attempts) {
      const answer = await owner.request(`${base}/rules/apply`, { form: body, headers });
      expect(answer.status, what).toBe(403);
      expect(textOf(answer.text), what).toContain('Nothing was changed');
    }
    // A JSON body is no form: no token is read from it.
    const json = await owner.request(`${base}/rules/apply`, {
      method: 'POST',
      headers: { origin: new URL(d.publicUrl).origin, 'content-type': 'application/json' },
    });
    expect(json.status).toBe(403);
    // Another account's session token, and another session of the same account: refused.
    const other = await signIn(d, d.g.ownerId);
    const otherToken = csrfOf(other.page.text);
    expect(otherToken).not.toBe(csrf);
    expect((await owner.post(`${base}/rules/apply`, { ...form, csrf: otherToken })).status).toBe(403);
    d.g.h.discord.addMember(
      d.g.guildId,
      { id: '300000000000000077', username: 'carol' },
      { roles: [admins] },
    );
    const carol = await signIn(d, '300000000000000077');
    expect((await owner.post(`${base}/rules/apply`, { ...form, csrf: csrfOf(carol.page.text) })).status).toBe(
      403,
    );
    // Sign-out is a change too.
    expect((await owner.request('/dashboard/sign-out', { form: { csrf } })).status).toBe(403);
    expect((await owner.get(base)).status).toBe(200);
    expect(await rulesStored()).toEqual([]);
    // The same form from this site, with the token (Referer alone stands in for Origin): it runs.
    const ok = await owner.request(`${base}/rules/apply`, {
      form,
      headers: { referer: `${d.publicUrl}${base}/rules` },
    });
    expect(ok.status).toBe(200);
    expect(await rulesStored()).toHaveLength(1);
    await owner.post(`${base}/rules/remove`, { csrf, rule: `${ruleRole}:score:30` });
    expect(await rulesStored()).toEqual([]);
    const refusals = d.g.h.logs.filter((l) => String(l.msg).startsWith('dashboard request refused'));
    expect(refusals.length).toBeGreaterThanOrEqual(attempts.length);
  });

  it('a replayed or stolen state signs nobody in', async () => {
    d.g.h.discord.oauth.signInAs(d.g.ownerId);
    const victim = new TestBrowser(d.publicUrl);
    const start = await victim.request('/dashboard');
    expect(start.status).toBe(303);
    const authorize = new URL(start.location ?? '');
    expect(authorize.searchParams.get('response_type')).toBe('code');
    expect(authorize.searchParams.get('scope')).toBe('identify guilds');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${d.publicUrl}/dashboard/callback`);
    const stateCookie = victim.cookies.get('dashboard_state');
    expect(stateCookie?.path).toBe('/dashboard/callback');
    const back = await fetch(authorize, { redirect: 'manual' });
    const callback = back.headers.get('location') ?? '';
    expect((await victim.request(callback)).status).toBe(303);
    expect(victim.cookies.has('dashboard_session')).toBe(true);

    // Replayed: the same callback, even with the state cookie put back, is refused.
    const replayer = new TestBrowser(d.publicUrl);
    replayer.cookies.set('dashboard_state', stateCookie ?? { value: '', path: '' });
    const replayed = await replayer.request(callback);
    expect(replayed.status).toBe(400);
    expect(textOf(replayed.text)).toContain('This sign-in has expired or was already used');
    expect(replayer.cookies.has('dashboard_session')).toBe(false);

    // Stolen: the attacker's state (and code) opened in the victim's browser, which never started it.
    d.g.h.discord.oauth.signInAs(BOB);
    const attacker = new TestBrowser(d.publicUrl);
    const attackerStart = await attacker.request('/dashboard');
    const attackerBack = await fetch(new URL(attackerStart.location ?? ''), { redirect: 'manual' });
    const planted = attackerBack.headers.get('location') ?? '';
    const fresh = new TestBrowser(d.publicUrl);
    const stolen = await fresh.request(planted);
    expect(stolen.status).toBe(400);
    expect(fresh.cookies.has('dashboard_session')).toBe(false);
    // …or in a browser holding a state of its own.
    const own = new TestBrowser(d.publicUrl);
    await own.request('/dashboard');
    expect((await own.request(planted)).status).toBe(400);
    expect(own.cookies.has('dashboard_session')).toBe(false);
    // A state of another flow (the signing page's) is not the dashboard's.
    const other = new TestBrowser(d.publicUrl);
    const forged = new URL(planted);
    forged.searchParams.set('state', 'x'.repeat(43));
    other.cookies.set('dashboard_state', { value: 'x'.repeat(43), path: '/dashboard/callback' });
    expect((await other.request(forged.toString())).status).toBe(400);
  });

  it('a session from before a demotion: changes refused at once, the pages gone within the rights’ age', async () => {
    const modId = await addMember(d.g, 'mod', { roles: [admins] });
    const mod = await signIn(d, modId);
    expect(textOf(mod.page.text)).toContain('Server A');
    const token = csrfOf((await mod.get(`${base}/rules`)).text);
    const stolenCookie = new Map(mod.cookies);
    // Demoted in Discord: the Admins role taken away.
    d.g.h.discord.updateMember(d.g.guildId, modId, { roles: [] });
    // At once, within the same minute: the page still shows, but the change reads the member's roles now.
    const refused = await mod.post(`${base}/rules/apply`, { csrf: token, ...apply, role: ruleRole });
    expect(refused.status).toBe(200);
    expect(textOf(refused.text)).toContain('Changes need Manage Roles in this server');
    expect(await rulesStored()).toEqual([]);
    const keep = await mod.post(`${base}/held/keep`, { csrf: token });
    expect(textOf(keep.text)).toContain('Changes need Manage Roles in this server');
    // Within the rights' age (RIGHTS_SECONDS here, 60 s at most): the server is gone from every page.
    await new Promise((resolve) => setTimeout(resolve, RIGHTS_SECONDS * 1_000 + 200));
    expect((await mod.get(base)).status).toBe(404);
    expect(textOf((await mod.get('/dashboard')).text)).not.toContain('Server A');
    // The cookie from before the demotion, replayed elsewhere, reads the rights again too.
    const copy = new TestBrowser(d.publicUrl);
    for (const [name, value] of stolenCookie) copy.cookies.set(name, value);
    expect((await copy.get(base)).status).toBe(404);
    // And a revoked Discord token ends the session.
    d.g.h.discord.oauth.revokeAccessTokens(d.g.ownerId);
    await new Promise((resolve) => setTimeout(resolve, RIGHTS_SECONDS * 1_000 + 200));
    const ended = await owner.get(base);
    expect(ended.status).toBe(403);
    expect(textOf(ended.text)).toContain('Discord no longer accepts this sign-in');
    expect(owner.cookies.has('dashboard_session')).toBe(false);
  });

  // Signing out, and a copy of the cookie replayed after it: dashboardSignOut.test.ts (with Discord down too).
});
