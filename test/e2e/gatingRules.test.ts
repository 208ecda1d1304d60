/**
 * `/gating rule` (issue #19 part 2): roles given for what members proved, played through the real bot
 * against the stand-in Discord and Web3.bio: add (preview, then Apply) / remove / list, suggestions for
 * kinds and rules, score tiers granted and taken away by re-checks, and the attacks on each kind.
 */
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  gatingCommandRun,
  gatingGroupRun,
  hasRole,
  logChannelMessages,
  option,
  roleEdits,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';
import {
  addOptions,
  addRule,
  buttonIds,
  moveRole,
  recheckTwice,
  ruleCommand,
  scoreOf,
  suggestions,
} from './ruleShortcuts.ts';

afterEach(closeGating);

const { String: Text } = ApplicationCommandOptionType;
const MODERATOR = PermissionFlagsBits.ManageRoles | PermissionFlagsBits.ManageGuild;

describe('/gating rule add, list and remove; score tiers re-checked', () => {
  it('previews, applies on Apply only, grants and takes tiers with the reason, lists and removes by suggestion', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const tier20 = await addGuildRole(g, 'Tier 20', 1);
    const tier30 = await addGuildRole(g, 'Tier 30', 1);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    scoreOf(g, 'alice.eth', 25);
    await verifyByRecord(g);

    // Cancel stores nothing.
    const first = visibleMessage(await ruleCommand(g, 'add', addOptions(tier20, 'score', '20')));
    expect(seen(first)).toContain('1 would gain the role, 0 would lose it');
    expect(seen(first)).toContain('Nothing is stored until you press Apply');
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual([]);
    const cancel = buttonIds(first).find((id) => id === 'gating|ruleCancel') ?? '';
    expect(seen(visibleMessage(await g.h.click(first, cancel, undefined, { userId: g.ownerId })))).toContain(
      'Nothing was stored.',
    );
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual([]);
    expect(hasRole(g, ALICE, tier20)).toBe(false);

    const twenty = await addRule(g, tier20, 'score', '20');
    expect(twenty.applied).toContain('Saved: **Tier 20**: all of: humanity score ≥ 20');
    await waitFor(() => hasRole(g, ALICE, tier20), 'the tier-20 role');
    const thirty = await addRule(g, tier30, 'score', '30');
    expect(thirty.preview).toContain('0 would gain the role');
    expect(hasRole(g, ALICE, tier30)).toBe(false);

    // Her score rises: the next re-check gives tier 30 too.
    scoreOf(g, 'alice.eth', 35);
    await gatingCommandRun(g, 'recheck');
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, tier30)).toBe(true);
    const grant = g.h.discord.state.auditLog.find(
      (e) => e.action === 'member_role_add' && e.roleIds.includes(tier30),
    );
    expect(grant?.reason).toContain('humanity score 35 ≥ 30 (alice.eth)');

    // It falls: both tiers go, each explained in the log channel.
    scoreOf(g, 'alice.eth', 10);
    await recheckTwice(g);
    expect(hasRole(g, ALICE, tier20)).toBe(false);
    expect(hasRole(g, ALICE, tier30)).toBe(false);
    await waitFor(
      () => logChannelMessages(g).some((m) => m.content.includes('no unexpired humanity score ≥ 30')),
      'the log line of the lost tier',
    );
    const report = seen(
      visibleMessage(
        await gatingCommandRun(g, 'check', [option(ApplicationCommandOptionType.User, 'member', ALICE)]),
      ),
    );
    expect(report).toContain('no unexpired humanity score ≥ 20');
    // The member reads it in their own language.
    const whoami = seen(
      visibleMessage(await g.h.run('whoami', {}, { userId: ALICE, locale: 'de' as never })),
    );
    expect(whoami).toContain('**Tier 30**');
    expect(whoami.replace(/\\/g, '')).toContain('kein gültiger Menschlichkeits-Score ≥ 30 (alice.eth)');

    const list = seen(visibleMessage(await ruleCommand(g, 'list')));
    expect(list).toContain('**Tier 20**: all of: humanity score ≥ 20');
    expect(list).toContain('**Tier 30**: all of: humanity score ≥ 30');

    const choices = await suggestions(g, 'remove', 'rule', 'tier 30');
    expect(choices).toEqual([{ name: 'Tier 30: humanity score ≥ 30', value: `${tier30}:score:30` }]);
    const removed = seen(
      visibleMessage(await ruleCommand(g, 'remove', [option(Text, 'rule', choices[0]?.value ?? '')])),
    );
    expect(removed).toContain('humanity score ≥ 30 no longer counts for **Tier 30**');
    expect((await g.gating.store.listRuleConditions(g.guildId)).map((c) => c.roleId)).toEqual([tier20]);
    const audit = await g.gating.store.listAuditEvents({ guildId: g.guildId });
    expect(audit.filter((e) => e.kind.startsWith('rule_')).map((e) => e.kind)).toEqual([
      'rule_removed',
      'rule_added',
      'rule_added',
    ]);
    expect(seen(visibleMessage(await ruleCommand(g, 'remove', [option(Text, 'rule', 'bogus')])))).toContain(
      'There is no such condition',
    );
  });

  it('suggests the kinds in the member’s language, and refuses bad values with nothing stored', async () => {
    const g = await startGating();
    await setup(g);
    const role = await addGuildRole(g, 'Fans', 1);
    const all = await suggestions(g, 'add', 'kind', '');
    expect(all.map((c) => c.value)).toEqual(['score', 'platform', 'name-age', 'name-expiry', 'followers']);
    expect(await suggestions(g, 'add', 'kind', 'follow')).toEqual([
      {
        name: 'followers: Farcaster or Lens followers at or above N (value: farcaster:1000)',
        value: 'followers',
      },
    ]);
    const german = await suggestions(g, 'add', 'kind', 'name', 'de');
    expect(german.map((c) => c.name)).toContain(
      'name-age: ein nachgewiesener Name, vor mindestens N Tagen registriert (Wert: 365)',
    );

    const bad = seen(visibleMessage(await ruleCommand(g, 'add', addOptions(role, 'followers', 'twitter:5'))));
    expect(bad).toContain('That value does not fit this kind. Expected: followers:');
    const unknown = seen(visibleMessage(await ruleCommand(g, 'add', addOptions(role, 'karma', '5'))));
    expect(unknown).toContain('Unknown kind');
    const human = seen(visibleMessage(await ruleCommand(g, 'add', addOptions(g.humanRoleId, 'score', '5'))));
    expect(human).toContain('**Verified Human** is already given by /gating setup');
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual([]);
  });
});

describe('escalation and failures', () => {
  it('a moderator cannot add or apply a rule for a role at or above their own: refused, nothing stored', async () => {
    const g = await startGating();
    await setup(g);
    const mods = await addGuildRole(g, 'Mods', 5, MODERATOR);
    const senior = await addGuildRole(g, 'Senior', 6);
    const helpers = await addGuildRole(g, 'Helpers', 4);
    const moderator = await addMember(g, 'mod', { roles: [mods] });

    const refused = seen(
      visibleMessage(await ruleCommand(g, 'add', addOptions(senior, 'platform', 'ens'), moderator)),
    );
    expect(refused).toContain('Rule refused');
    expect(refused).toContain('“Senior” is at or above your highest role');
    expect(refused).toContain('Nothing was stored.');

    // A preview they may see; the role moves above them before Apply: Apply checks again and refuses.
    const preview = visibleMessage(
      await ruleCommand(g, 'add', addOptions(helpers, 'platform', 'ens'), moderator),
    );
    expect(seen(preview)).toContain('Preview: role rule');
    await moveRole(g, helpers, 7);
    const apply = buttonIds(preview).find((id) => id.startsWith('gating|ruleApply|')) ?? '';
    const applied = seen(visibleMessage(await g.h.click(preview, apply, undefined, { userId: moderator })));
    expect(applied).toContain('“Helpers” is at or above your highest role');
    expect(await g.gating.store.listRuleConditions(g.guildId)).toEqual([]);
    const audit = await g.gating.store.listAuditEvents({ guildId: g.guildId, userId: moderator });
    expect(audit.filter((e) => e.kind.startsWith('rule_'))).toEqual([]);
  });

  it('an exemption holds rule roles too, so exempting takes rights over them: a moderator below one is refused', async () => {
    const g = await startGating();
    await setup(g);
    const mods = await addGuildRole(g, 'Mods', 5, MODERATOR);
    const vip = await addGuildRole(g, 'VIP', 6);
    const moderator = await addMember(g, 'mod', { roles: [mods] });
    await addRule(g, vip, 'score', '50');
    const self = option(ApplicationCommandOptionType.User, 'member', moderator);
    const exempt = await gatingGroupRun(g, 'exempt', 'add', [self], moderator);
    expect(seen(visibleMessage(exempt))).toContain('You cannot manage the gated role **VIP**');
    expect(await g.gating.store.listExemptions(g.guildId)).toEqual([]);
    // /gating status names a rule role the bot can no longer hand out.
    await moveRole(g, vip, 11);
    const status = seen(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status).toContain('Move the bot’s role above “VIP”');
  });

  it('a rule role later made the human role by /gating setup follows the human rules only', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const tier = await addGuildRole(g, 'Tier 20', 1);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    scoreOf(g, 'alice.eth', 25);
    await verifyByRecord(g);
    await addRule(g, tier, 'score', '20');
    await waitFor(() => hasRole(g, ALICE, tier), 'the tier role');

    // Now the human role: a score with no min-score earns it nothing, and the rule no longer decides it.
    await gatingCommandRun(g, 'setup', [option(ApplicationCommandOptionType.Role, 'human-role', tier)]);
    await g.gating.service.idle(g.guildId);
    await recheckTwice(g);
    expect(hasRole(g, ALICE, tier)).toBe(false);
    const removal = g.h.discord.state.auditLog.find(
      (e) => e.action === 'member_role_remove' && e.roleIds.includes(tier),
    );
    expect(removal?.reason).toContain('no unexpired isHuman credential is true');
  });

  it('a failed /domain read never removes a name-age role', async () => {
    const g = await startGating({ env: { GATING_CONFIRM_MINUTES: '0' } });
    await setup(g);
    const og = await addGuildRole(g, 'OG', 1);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);
    await addRule(g, og, 'name-age', '365');
    await waitFor(() => hasRole(g, ALICE, og), 'the OG role');

    g.h.upstream.addFault({ match: '/domain', action: { kind: 'status', status: 503 } });
    await recheckTwice(g);
    expect(hasRole(g, ALICE, og)).toBe(true);
    expect(roleEdits(g, ALICE, og, 'DELETE')).toEqual([]);
  });
});
