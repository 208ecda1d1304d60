/**
 * The owners' dashboard through the real bot and the stand-ins, as a browser uses it (cookies, Discord's
 * sign-in, forms with the page's CSRF token): the server list (only servers the account manages and the
 * bot is in), the overview's counts and charts after real activity, a rule added through the same dry
 * run and Apply as `/gating rule add`, a mass removal held by the breaker and confirmed, exemptions, the
 * audit log's filters, keyset pages and CSV, health, another language, and no Discord token anywhere.
 */
import { ApplicationCommandOptionType, Locale } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import {
  CLIENT_SECRET,
  csrfOf,
  type Dashboard,
  ENCRYPTION_KEY,
  signIn,
  startDashboard,
  textOf,
  untilSnapshot,
} from './dashboardHarness.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  gatingCommandRun,
  hasRole,
  option,
  setup,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB } from './harness.ts';
import { scoreOf } from './ruleShortcuts.ts';

describe('the owners’ dashboard over HTTP', () => {
  let d: Dashboard;
  let owner: Awaited<ReturnType<typeof signIn>>;
  let base: string;
  const humans: { id: string; name: string }[] = [];

  beforeAll(async () => {
    d = await startDashboard();
    await setup(d.g);
    base = `/dashboard/${d.g.guildId}`;
    for (let i = 0; i < 6; i += 1) {
      const username = `human${i}`;
      const id = await addMember(d.g, username);
      const name = `${username}.eth`;
      addIdentity(d.g, name, { discordHandle: username, human: true });
      await verifyByRecord(d.g, name, id);
      humans.push({ id, name });
    }
    await waitFor(() => humans.every((m) => hasRole(d.g, m.id, d.g.humanRoleId)), 'every member to be human');
    // A full pass counts the role holders the overview shows.
    await gatingCommandRun(d.g, 'recheck');
    await d.g.gating.service.idle(d.g.guildId);
    owner = await signIn(d, d.g.ownerId);
  }, 60_000);
  afterAll(async () => {
    await closeGating();
  });

  it('lists only the servers where the account manages and the bot is a member', async () => {
    const noBot = d.g.h.discord.addGuild({
      name: 'Owned Without The Bot',
      ownerId: d.g.ownerId,
      botInstalled: false,
    });
    const memberOnly = d.g.h.discord.addGuild({ name: 'Only A Member Here' });
    d.g.h.discord.addMember(memberOnly.id, { id: d.g.ownerId, username: 'guild-owner' });
    await untilSnapshot(d.g, memberOnly.id);
    const fresh = await signIn(d, d.g.ownerId);
    const list = textOf(fresh.page.text);
    expect(list).toContain('E2E Guild');
    expect(list).not.toContain('Owned Without The Bot');
    expect(list).not.toContain('Only A Member Here');
    expect(fresh.page.text).toContain(`href="/dashboard/${d.g.guildId}"`);
    expect(fresh.page.text).not.toContain(noBot.id);
    expect(fresh.page.text).not.toContain(memberOnly.id);
    // The session cookie is sealed, HttpOnly, SameSite=Lax, on /dashboard; nothing readable in it.
    const cookie = fresh.cookies.get('dashboard_session');
    expect(cookie?.path).toBe('/dashboard');
    expect(cookie?.value).toMatch(/^[A-Za-z0-9._~:-]+$/);
    expect(cookie?.value).not.toContain(d.g.ownerId);
  });

  it('the overview counts role holders, links and held removals, and charts the activity of 30 and 90 days', async () => {
    const page = await owner.get(base);
    expect(page.status).toBe(200);
    const shown = textOf(page.text);
    expect(shown).toMatch(/Members holding Verified Human 6 /);
    expect(shown).toMatch(/Members with a proven identity 6 /);
    expect(shown).toMatch(/Removals held by the breaker 0 /);
    expect(shown).toContain('Human role Verified Human');
    expect(shown).toContain('Log channel #general');
    // Five charts, each an image with a name and summary, and a table of the same numbers.
    const charts = page.text.match(/<svg viewBox="0 0 720 180" role="img" aria-labelledby="[^"]+"/g) ?? [];
    expect(charts).toHaveLength(5);
    expect(shown).toContain('Roles given and removed per day 6 in the last 30 days; at most 6 in one day');
    expect(shown).toContain('New proofs per day 6 in the last 30 days');
    // One bar today (six roles given), the legend's swatch aside.
    expect(
      (page.text.match(/<rect x="[^"]+" y="[^"]+" width="[^"]+" height="[^"]+" fill="#1d4ed8"/g) ?? [])
        .length,
    ).toBe(1);
    const rows = page.text.match(/<tr><th scope="row">[^<]+<\/th><td>\d+<\/td><td>\d+<\/td><\/tr>/g) ?? [];
    expect(rows).toHaveLength(30);
    expect(rows.at(-1)).toMatch(/<td>6<\/td><td>0<\/td>/);
    const quarter = await owner.get(`${base}?days=90`);
    expect(
      (quarter.text.match(/<tr><th scope="row">[^<]+<\/th><td>\d+<\/td><td>\d+<\/td><\/tr>/g) ?? []).length,
    ).toBe(90);
    expect(quarter.text).toContain('aria-current="page">Last 90 days');
    // No script at all, and a CSP that allows none.
    expect(page.text).not.toContain('<script');
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'nonce-[^']+'/);
    expect(page.headers.get('referrer-policy')).toBe('same-origin');
  });

  it('adds a rule through the dry run and Apply, with the refusals of /gating rule add', async () => {
    const scored = await addGuildRole(d.g, 'Scored', 4);
    await untilSnapshot(d.g, d.g.guildId, [scored]);
    // Two members proven with scores (the dry run reads cached lookups: what the proofs saw).
    const scorers: string[] = [];
    for (const [name, score] of [
      ['scorer40', 40],
      ['scorer10', 10],
    ] as const) {
      const id = await addMember(d.g, name);
      addIdentity(d.g, `${name}.eth`, { discordHandle: name });
      scoreOf(d.g, `${name}.eth`, score);
      await verifyByRecord(d.g, `${name}.eth`, id);
      scorers.push(id);
    }
    const rules = await owner.get(`${base}/rules`);
    const csrf = csrfOf(rules.text);

    const refused = await owner.post(`${base}/rules/preview`, {
      csrf,
      role: d.g.humanRoleId,
      kind: 'score',
      value: '30',
    });
    expect(textOf(refused.text)).toContain('Verified Human is already given by /gating setup');
    const badValue = await owner.post(`${base}/rules/preview`, {
      csrf,
      role: scored,
      kind: 'score',
      value: 'lots',
    });
    expect(textOf(badValue.text)).toContain('That value does not fit this kind');
    const badRole = await owner.post(`${base}/rules/preview`, {
      csrf,
      role: '123456789012345678',
      kind: 'score',
      value: '3',
    });
    expect(badRole.status).toBe(400);
    expect(textOf(badRole.text)).toContain('Pick one of this server’s roles');

    const preview = await owner.post(`${base}/rules/preview`, {
      csrf,
      role: scored,
      kind: 'score',
      value: '30',
    });
    expect(preview.status).toBe(200);
    const previewText = textOf(preview.text);
    expect(previewText).toContain('Dry run: nothing is stored yet');
    expect(previewText).toMatch(
      /Of 8 members with proven identities, 1 would gain Scored and 0 would lose it/,
    );
    expect(previewText).toContain('@scorer40');
    expect(previewText).not.toContain('@scorer10');
    expect(await d.g.gating.store.listRuleConditions(d.g.guildId)).toEqual([]);

    const apply = Object.fromEntries(
      [...preview.text.matchAll(/<input type="hidden" name="(role|condition|match)" value="([^"]*)">/g)].map(
        (m) => [m[1], m[2]],
      ),
    );
    expect(apply).toEqual({ role: scored, condition: 'score:30', match: '' });
    const applied = await owner.post(`${base}/rules/apply`, { csrf, ...apply } as Record<string, string>);
    expect(textOf(applied.text)).toContain('Stored for Scored: all of: humanity score ≥ 30');
    expect(await d.g.gating.store.listRuleConditions(d.g.guildId)).toMatchObject([
      { roleId: scored, condition: 'score:30', addedBy: d.g.ownerId },
    ]);
    await d.g.gating.service.idle(d.g.guildId);
    await waitFor(() => hasRole(d.g, scorers[0] ?? '', scored), 'the rule role to be given');
    expect(hasRole(d.g, scorers[1] ?? '', scored)).toBe(false);
    expect(textOf((await owner.get(`${base}/rules`)).text)).toContain('Scored all of humanity score ≥ 30');

    const again = await owner.post(`${base}/rules/apply`, { csrf, ...apply } as Record<string, string>);
    expect(textOf(again.text)).toContain('Scored already had this condition');
    const removed = await owner.post(`${base}/rules/remove`, { csrf, rule: `${scored}:score:30` });
    expect(textOf(removed.text)).toContain('“humanity score ≥ 30” no longer counts for Scored');
    expect(await d.g.gating.store.listRuleConditions(d.g.guildId)).toEqual([]);
    const gone = await owner.post(`${base}/rules/remove`, { csrf, rule: `${scored}:score:30` });
    expect(textOf(gone.text)).toContain('That condition is not there any more');
  });

  it('exempts a member and lifts it, with the words of /gating exempt', async () => {
    const csrf = csrfOf((await owner.get(`${base}/exemptions`)).text);
    const bad = await owner.post(`${base}/exemptions/add`, { csrf, member: 'alice', role: '' });
    expect(bad.status).toBe(400);
    expect(textOf(bad.text)).toContain('A member is given by their Discord user id');
    const both = await owner.post(`${base}/exemptions/add`, { csrf, member: ALICE, role: d.g.spamRoleId });
    expect(textOf(both.text)).toContain('Give a member or a role (one of them, not both)');
    const added = await owner.post(`${base}/exemptions/add`, { csrf, member: ALICE, role: '' });
    expect(textOf(added.text)).toContain(`${ALICE} is exempt`);
    expect(await d.g.gating.store.listExemptions(d.g.guildId)).toMatchObject([
      { kind: 'member', targetId: ALICE },
    ]);
    const lifted = await owner.post(`${base}/exemptions/remove`, { csrf, member: ALICE });
    expect(textOf(lifted.text)).toContain('The exemption was removed');
    expect(await d.g.gating.store.listExemptions(d.g.guildId)).toEqual([]);
  });

  it('shows a mass removal the breaker holds, and confirming it removes the roles', async () => {
    for (const m of humans)
      d.g.h.upstream.world.setCredentials(m.name, gatingCredentials(m.name, { human: false }));
    await gatingCommandRun(d.g, 'recheck');
    await d.g.gating.service.idle(d.g.guildId);
    await gatingCommandRun(d.g, 'recheck');
    await d.g.gating.service.idle(d.g.guildId);
    const held = await owner.get(`${base}/held`);
    expect(textOf(held.text)).toContain('6 removals are held.');
    for (const m of humans) expect(held.text).toContain(m.id);
    expect(textOf((await owner.get(base)).text)).toMatch(/Removals held by the breaker 6 /);

    const confirmed = await owner.post(`${base}/held/confirm`, { csrf: csrfOf(held.text) });
    expect(textOf(confirmed.text)).toMatch(/Re-check done: 6 role changes queued|The re-check is running/);
    await d.g.gating.service.idle(d.g.guildId);
    await waitFor(() => humans.every((m) => !hasRole(d.g, m.id, d.g.humanRoleId)), 'the removals');
    expect(textOf((await owner.get(`${base}/held`)).text)).toContain('No removal is held.');
    const overview = textOf((await owner.get(base)).text);
    expect(overview).toMatch(/Roles given and removed per day \d+ in the last 30 days/);
    expect(overview).toMatch(/Removals held by the breaker per day 6 in the last 30 days/);
  });

  it('filters the audit log, pages it by keyset, and downloads the same events as CSV', async () => {
    const linked = await owner.get(`${base}/audit?kind=linked`);
    const rows = linked.text.match(/<tr><td><time/g) ?? [];
    expect(rows).toHaveLength(8);
    expect(linked.text).toContain('<td>Identity proven</td>');
    expect(linked.text).not.toContain('<td>Role given</td>');
    const member = await owner.get(`${base}/audit?member=${humans[2]?.id}`);
    expect(textOf(member.text)).toContain('Identity proven');
    expect(member.text).not.toContain(humans[3]?.id ?? '-');
    // Enough events for three pages of 50, then walk them by their links, older and back.
    for (let i = 0; i < 110; i += 1)
      await d.g.gating.store.addAuditEvent({
        guildId: d.g.guildId,
        kind: 'role_failed',
        reason: `bulk ${i}`,
      });
    const link = (html: string, rel: string) =>
      new RegExp(`href="([^"]+)" rel="${rel}"`)
        .exec(html)?.[1]
        ?.replaceAll('&#38;', '&')
        .replaceAll('&amp;', '&');
    const first = await owner.get(`${base}/audit?kind=role_failed`);
    expect(first.text.match(/<tr><td><time/g)).toHaveLength(50);
    expect(textOf(first.text)).toContain('bulk 109');
    expect(link(first.text, 'prev')).toBeUndefined();
    const second = await owner.get(link(first.text, 'next') ?? '');
    expect(second.text.match(/<tr><td><time/g)).toHaveLength(50);
    expect(textOf(second.text)).toContain('bulk 59');
    expect(textOf(second.text)).not.toContain('bulk 60 ');
    const third = await owner.get(link(second.text, 'next') ?? '');
    expect(third.text.match(/<tr><td><time/g)).toHaveLength(10);
    expect(link(third.text, 'next')).toBeUndefined();
    const back = await owner.get(link(third.text, 'prev') ?? '');
    expect(back.text.match(/<tr><td><time/g)).toEqual(second.text.match(/<tr><td><time/g));
    expect(textOf(back.text)).toBe(textOf(second.text));
    const bad = await owner.get(`${base}/audit?member=bob&from=2026-02-31`);
    expect(bad.status).toBe(400);
    expect(textOf(bad.text)).toContain('A member is given by their Discord user id');
    const badCursor = await owner.get(`${base}/audit?before=yesterday`);
    expect(badCursor.status).toBe(400);

    const csv = await owner.get(`${base}/audit.csv?kind=linked`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="audit-${d.g.guildId}.csv"`);
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('\uFEFFtime,kind,member_id,role_id,reason,actor');
    expect(lines).toHaveLength(9);
    expect(lines.slice(1).every((l) => l.includes(',linked,'))).toBe(true);
  });

  it('health names the hierarchy problems /gating status finds, and the verify panel’s place', async () => {
    const ok = textOf((await owner.get(`${base}/health`)).text);
    expect(ok).toContain('No problem found');
    expect(ok).toContain('No verify panel was posted');
    // The re-check cycle of every server (issue #37): none finished yet, its figures so far.
    expect(ok).toMatch(/Re-check cycle under way, all servers .+ Credential requests to Web3\.bio \d+/);
    expect(ok).toContain('Answered by another server’s check of the same identity');
    await gatingCommandRun(d.g, 'panel', [
      option(ApplicationCommandOptionType.Channel, 'channel', d.g.logChannelId),
    ]);
    // The bot's own role moved below the human role: the bot can no longer give it.
    const guild = d.g.h.discord.state.guilds.get(d.g.guildId);
    const botRole = guild?.roles.get(guild.botRoleId);
    if (!guild || !botRole) throw new Error('no bot role');
    const moved = { ...botRole, position: 1 };
    guild.roles.set(botRole.id, moved);
    d.g.h.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: d.g.guildId, role: moved });
    await waitFor(
      () => d.g.h.bot.client.guilds.cache.get(d.g.guildId)?.roles.cache.get(botRole.id)?.rawPosition === 1,
      'the moved role',
    );
    const problems = textOf((await owner.get(`${base}/health`)).text);
    expect(problems).toContain('Move the bot’s role above “Verified Human”');
    expect(problems).toContain('Verify panels #general');
    guild.roles.set(botRole.id, botRole);
    d.g.h.discord.dispatch('GUILD_ROLE_UPDATE', { guild_id: d.g.guildId, role: botRole });
  });

  it('speaks the signed-in account’s language', async () => {
    d.g.h.discord.addUser({ id: BOB, username: 'bob', locale: Locale.German });
    const admins = await addGuildRole(d.g, 'Admins', 6, 1n << 5n);
    await untilSnapshot(d.g, d.g.guildId, [admins]);
    d.g.h.discord.updateMember(d.g.guildId, BOB, { roles: [admins] });
    const bob = await signIn(d, BOB);
    const overview = await bob.get(base);
    expect(overview.text).toContain('<html lang="de">');
    expect(overview.headers.get('content-language')).toBe('de');
    expect(textOf(overview.text)).toContain('Auf einen Blick');
  });

  it('never puts a Discord token or the app’s secrets in a page, a cookie or a log line', async () => {
    const pages = await Promise.all(
      ['', '/rules', '/held', '/audit', '/health'].map((p) => owner.get(`${base}${p}`)),
    );
    const everything = [
      ...pages.map((p) => p.text),
      JSON.stringify([...owner.cookies.values()]),
      JSON.stringify(d.g.h.logs),
    ].join('\n');
    expect(everything).not.toMatch(/fake-access\.|fake-refresh\./);
    expect(everything).not.toContain(CLIENT_SECRET);
    expect(everything).not.toContain(ENCRYPTION_KEY);
  });
});
