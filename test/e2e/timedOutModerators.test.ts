/**
 * A timed-out moderator (issue #33): Discord leaves a timed-out member only View Channel and Read Message
 * History, owners and Administrators excepted; the bot's rights follow. Played through the stand-in
 * Discord (a moderator times the member out: GUILD_MEMBER_UPDATE with `communication_disabled_until`) and
 * the real discord.js client: slash commands, and the dashboard's pages and changes, each refused next to
 * its honest controls (a moderator not timed out, an Administrator timed out, the timeout lifted).
 */
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  csrfOf,
  type Dashboard,
  RIGHTS_SECONDS,
  signIn,
  startServerA,
  textOf,
  untilSnapshot,
} from './dashboardHarness.ts';
import {
  addGuildRole,
  addMember,
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  option,
  seen,
  waitFor,
} from './gatingHarness.ts';
import { isEphemeral, visibleMessage } from './harness.ts';
import { addOptions, buttonIds, ruleCommand } from './ruleShortcuts.ts';

const TIMED_OUT = '🔒 You are timed out';
const AN_HOUR_MS = 3_600_000;

/** Times the member out until `until` (null lifts it), as a moderator would, once the bot's client has it. */
async function timeOut(g: GatingHarness, userId: string, until: Date | null): Promise<void> {
  const iso = until?.toISOString() ?? null;
  g.h.discord.updateMember(g.guildId, userId, { communicationDisabledUntil: iso });
  await waitFor(() => {
    const cached = g.h.bot.client.guilds.cache.get(g.guildId)?.members.cache.get(userId);
    return !cached || (cached.communicationDisabledUntil?.toISOString() ?? null) === iso;
  }, 'the timeout to reach the client');
}

describe('a timed-out moderator', () => {
  let d: Dashboard;
  let base: string;
  let mods: string;
  let admins: string;
  let ruleRole: string;
  const inAnHour = () => new Date(Date.now() + AN_HOUR_MS);
  const rulesStored = () => d.g.gating.store.listRuleConditions(d.g.guildId);

  beforeAll(async () => {
    // Rights read at most RIGHTS_SECONDS ago (60 s at most in production).
    ({ d, base, admins: mods } = await startServerA(RIGHTS_SECONDS));
    admins = await addGuildRole(d.g, 'Administrators', 6, PermissionFlagsBits.Administrator);
    ruleRole = await addGuildRole(d.g, 'Tier', 4);
    await untilSnapshot(d.g, d.g.guildId, [admins, ruleRole]);
  }, 60_000);
  afterAll(async () => {
    await closeGating();
  });

  /** A moderator timed out, one not, and an Administrator timed out. */
  async function moderators(prefix: string) {
    const timedOut = await addMember(d.g, `${prefix}-timed-out`, { roles: [mods] });
    const moderator = await addMember(d.g, `${prefix}-mod`, { roles: [mods] });
    const admin = await addMember(d.g, `${prefix}-admin`, { roles: [admins] });
    await timeOut(d.g, timedOut, inAnHour());
    await timeOut(d.g, admin, inAnHour());
    return { timedOut, moderator, admin };
  }

  it('is refused by the moderator commands, says why, and changes nothing; the controls get in', async () => {
    const g = d.g;
    const { timedOut, moderator, admin } = await moderators('cmd');

    const status = visibleMessage(await gatingCommandRun(g, 'status', [], timedOut));
    expect(isEphemeral(status)).toBe(true);
    expect(embedOf(status).title).toBe(TIMED_OUT);
    expect(seen(status)).toContain('no moderator rights');
    expect(seen(status)).not.toContain('Verified Human');
    const off = visibleMessage(await gatingCommandRun(g, 'disable', [], timedOut));
    expect(embedOf(off).title).toBe(TIMED_OUT);
    expect((await g.gating.store.getGuildSettings(g.guildId))?.enabled).toBe(true);

    // A moderator not timed out, and an Administrator timed out (Discord exempts them), still get in.
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status', [], moderator)))).toContain(
      'Verified Human',
    );
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status', [], admin)))).toContain('Verified Human');
    // A timeout that has ended, or is lifted, takes nothing.
    await timeOut(g, timedOut, new Date(Date.now() - 1_000));
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status', [], timedOut)))).toContain(
      'Verified Human',
    );
    await timeOut(g, timedOut, inAnHour());
    expect(embedOf(visibleMessage(await gatingCommandRun(g, 'status', [], timedOut))).title).toBe(TIMED_OUT);
    await timeOut(g, timedOut, null);
    expect(seen(visibleMessage(await gatingCommandRun(g, 'status', [], timedOut)))).toContain(
      'Verified Human',
    );
  });

  it('a preview from before the timeout: its Apply button is refused; lifted, a new one applies', async () => {
    const g = d.g;
    const { moderator } = await moderators('click');
    const preview = visibleMessage(
      await ruleCommand(g, 'add', addOptions(ruleRole, 'score', '30'), moderator),
    );
    const apply = buttonIds(preview).find((id) => id.startsWith('gating|ruleApply|')) ?? '';
    expect(apply).not.toBe('');
    await timeOut(g, moderator, inAnHour());
    const refused = visibleMessage(await g.h.click(preview, apply, undefined, { userId: moderator }));
    expect(embedOf(refused).title).toBe(TIMED_OUT);
    await g.gating.service.idle(g.guildId);
    expect(await rulesStored()).toEqual([]);
    await timeOut(g, moderator, null);
    const again = visibleMessage(await ruleCommand(g, 'add', addOptions(ruleRole, 'score', '30'), moderator));
    const applied = visibleMessage(
      await g.h.click(
        again,
        buttonIds(again).find((id) => id.startsWith('gating|ruleApply|')) ?? '',
        undefined,
        {
          userId: moderator,
        },
      ),
    );
    expect(embedOf(applied).title).not.toBe(TIMED_OUT);
    await g.gating.service.idle(g.guildId);
    expect((await rulesStored()).map((r) => r.roleId)).toEqual([ruleRole]);
    await ruleCommand(g, 'remove', [
      option(ApplicationCommandOptionType.String, 'rule', `${ruleRole}:score:30`),
    ]);
    await g.gating.service.idle(g.guildId);
    expect(await rulesStored()).toEqual([]);
  });

  it('sees none of the server’s pages, and the controls do', async () => {
    const { timedOut: timedOutId, moderator: moderatorId, admin: adminId } = await moderators('dash');

    // The stand-in's server list counts the roles, not the timeout: the server is listed, its pages are not.
    const timedOut = await signIn(d, timedOutId);
    for (const path of ['', '/rules', '/exemptions', '/held', '/audit', '/audit.csv', '/health']) {
      const page = await timedOut.get(`${base}${path}`);
      expect(page.status, path).toBe(403);
      expect(textOf(page.text)).toContain('You are timed out in this server');
      expect(page.text).not.toContain('Verified Human');
      expect(page.text).not.toContain('gating set up');
    }
    const post = await timedOut.post(`${base}/rules/apply`, {
      csrf: csrfOf(timedOut.page.text),
      role: ruleRole,
      condition: 'score:30',
      match: '',
    });
    expect(post.status).toBe(403);
    expect(await rulesStored()).toEqual([]);

    for (const userId of [moderatorId, adminId]) {
      const browser = await signIn(d, userId);
      const rules = await browser.get(`${base}/rules`);
      expect(rules.status, userId).toBe(200);
      expect(textOf(rules.text)).toContain('Verified Human');
    }
  });

  it('a session from before the timeout: changes refused at once, the pages gone within the rights’ age', async () => {
    const g = d.g;
    const modId = await addMember(g, 'dash-later', { roles: [mods] });
    const mod = await signIn(d, modId);
    const token = csrfOf((await mod.get(`${base}/rules`)).text);
    await timeOut(g, modId, inAnHour());
    const refused = await mod.post(`${base}/rules/apply`, {
      csrf: token,
      role: ruleRole,
      condition: 'score:30',
      match: '',
    });
    expect(textOf(refused.text)).toContain('Changes need Manage Roles in this server');
    expect(await rulesStored()).toEqual([]);
    const keep = await mod.post(`${base}/held/keep`, { csrf: token });
    expect(textOf(keep.text)).toContain('Changes need Manage Roles in this server');
    await new Promise((resolve) => setTimeout(resolve, RIGHTS_SECONDS * 1_000 + 200));
    expect((await mod.get(`${base}/rules`)).status).toBe(403);
    // The timeout lifted: back within the rights' age, and the change goes through.
    await timeOut(g, modId, null);
    await new Promise((resolve) => setTimeout(resolve, RIGHTS_SECONDS * 1_000 + 200));
    const back = await mod.get(`${base}/rules`);
    expect(back.status).toBe(200);
  });
});
