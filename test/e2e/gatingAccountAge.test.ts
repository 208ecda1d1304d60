/**
 * Account and join age (issue #19): with a minimum age set, a member who proves a human identity too
 * early is told when the human role comes and gets nothing yet; the role then comes by itself from the
 * due check kept in the store. A fresh alt account with a valid proof gets no human role.
 */
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { memberJoined } from '../../fakes/discord/client.ts';
import {
  addIdentity,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  memberOf,
  option,
  roleEdits,
  seen,
  signFromReply,
  startGating,
  verifyByRecord,
} from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';

afterEach(closeGating);

const DAY_MS = 86_400_000;
const { Integer, Role } = ApplicationCommandOptionType;

async function setupWithAges(g: GatingHarness, ages: Record<string, number>): Promise<string> {
  const result = await gatingCommandRun(g, 'setup', [
    option(Role, 'human-role', g.humanRoleId),
    ...Object.entries(ages).map(([name, days]) => option(Integer, name, days)),
  ]);
  await g.gating.service.idle(g.guildId);
  return seen(visibleMessage(result));
}

const dueChecks = (g: GatingHarness) => g.gating.store.listDueChecks(Date.now() + 3650 * DAY_MS, 100);
const qualifiesLine = /You can get \*\*Verified Human\*\* <t:(\d+):R>/;

describe('gating: account and join age', () => {
  it('a member who just joined is told when they qualify, and gets the role then without doing anything', async () => {
    const g = await startGating();
    const saved = await setupWithAges(g, { 'min-join-age-days': 1 });
    expect(saved).toContain('Given only once the member has been in the server for 1 day.');
    expect(saved).not.toContain('Discord account is at least');
    expect(await g.gating.store.getGuildSettings(g.guildId)).toMatchObject({
      minJoinAgeDays: 1,
      minAccountAgeDays: null,
    });
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    const joinedAt = Date.parse(memberOf(g, ALICE).joined_at ?? '');

    const reply = seen(await verifyByRecord(g));
    const when = Number(reply.match(qualifiesLine)?.[1]);
    expect(when).toBe(Math.ceil((joinedAt + DAY_MS) / 1000));
    expect(reply).not.toContain('already match');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);
    expect(roleEdits(g, ALICE, g.humanRoleId)).toHaveLength(0);
    expect(await dueChecks(g)).toEqual([{ guildId: g.guildId, userId: ALICE, dueAt: joinedAt + DAY_MS }]);

    const whoami = seen(visibleMessage(await g.h.run('whoami', {})));
    expect(whoami).toMatch(qualifiesLine);

    // Nothing due yet: a pass leaves them alone.
    expect(await g.gating.service.dueChecks.run()).toBe(0);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(false);

    // A day on (the bot takes no clock, so the join moves back a day and the due time into the past).
    memberOf(g, ALICE).joined_at = new Date(joinedAt - DAY_MS - 60_000).toISOString();
    g.h.bot.client.guilds.cache.get(g.guildId)?.members.cache.delete(ALICE);
    await g.gating.store.saveDueCheck({ guildId: g.guildId, userId: ALICE, dueAt: Date.now() - 1 });
    expect(await g.gating.service.dueChecks.run()).toBe(1);
    await g.gating.service.idle(g.guildId);
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(await dueChecks(g)).toEqual([]);
  });

  it('attack: a fresh alt account with a valid wallet proof gets no human role', async () => {
    const g = await startGating();
    await setupWithAges(g, { 'min-account-age-days': 30 });
    const createdAt = Date.now();
    const altId = ((BigInt(createdAt) - 1_420_070_400_000n) << 22n).toString();
    const joined = memberJoined(g.h.bot.client, g.guildId, altId);
    g.h.discord.addMember(g.guildId, { id: altId, username: 'alt' }, { dispatchJoin: true });
    await joined;
    const wallet = privateKeyToAccount(generatePrivateKey());
    addIdentity(g, 'alt.eth', { address: wallet.address.toLowerCase() });

    const reply = visibleMessage(await g.h.run('verify', { identity: 'alt.eth' }, { userId: altId }));
    expect(await signFromReply(g, reply, wallet)).toMatchObject({ status: 200, body: { ok: true } });
    await g.gating.service.idle(g.guildId);

    expect(
      await g.gating.store.getLink({ guildId: g.guildId, userId: altId, identity: 'alt.eth' }),
    ).toBeDefined();
    expect(hasRole(g, altId, g.humanRoleId)).toBe(false);
    expect(roleEdits(g, altId, g.humanRoleId)).toHaveLength(0);
    expect(await dueChecks(g)).toEqual([
      { guildId: g.guildId, userId: altId, dueAt: createdAt + 30 * DAY_MS },
    ]);
    // A moderator's fresh re-check does not hand it out either.
    await gatingCommandRun(g, 'recheck', [option(ApplicationCommandOptionType.User, 'member', altId)]);
    await g.gating.service.idle(g.guildId);
    expect(roleEdits(g, altId, g.humanRoleId)).toHaveLength(0);
    const whoami = seen(visibleMessage(await g.h.run('whoami', {}, { userId: altId })));
    expect(whoami).toMatch(qualifiesLine);
  });
});
