import { describe, expect, it } from 'vitest';
import { MIGRATIONS } from '../../src/store/migrations.ts';
import type { GatingStore, GuildSettingsInput, LinkInput, StoreOptions } from '../../src/store/types.ts';
import type { CredentialSet } from '../../src/web3bio/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS, type StoreHarness } from './harness.ts';

const G = 'guild-1';
const HOSTILE = `'); DROP TABLE links; -- "quoted" \\ ✓ 𝔘 %s $1 ?1`;

const SETTINGS: GuildSettingsInput = {
  guildId: G,
  enabled: true,
  humanRoleId: 'role-human',
  spamRoleId: 'role-spam',
  riskyRoleId: null,
  minScore: 20.5,
  spamRemovesHuman: true,
  minAccountAgeDays: 30,
  minJoinAgeDays: 1,
  logChannelId: 'chan-log',
};

const CREDENTIALS: CredentialSet = {
  isHuman: [
    {
      id: 'ens,vitalik.eth',
      platform: 'humanpassport',
      category: 'isHuman',
      source: 'human-passport',
      type: 'score',
      value: '32.1',
      label: 'Passport',
      description: 'Proof of personhood',
      link: null,
      updatedAt: 1_700_000_000,
      expiredAt: null,
    },
  ],
  isRisky: [],
  isSpam: [],
};

function link(userId: string, identity: string, provenAt = 1_000): LinkInput {
  return {
    guildId: G,
    userId,
    identity,
    platform: 'ens',
    address: `0xabc-${userId}`,
    proofMethod: 'record',
    provenAt,
  };
}

/** A settable clock shared by the stores a test opens. */
function clock(start = 1_700_000_000_000) {
  const c = { t: start, now: () => c.t };
  return c;
}

describe.each(STORE_BACKENDS)('GatingStore contract (%s)', (_name, makeHarness) => {
  let h: StoreHarness;
  let store: GatingStore;
  let time: ReturnType<typeof clock>;

  const open = (opts: StoreOptions = {}) => h.open({ now: time.now, ...opts });

  freshDatabaseEachTest(makeHarness, async (harness) => {
    h = harness;
    time = clock();
    store = await open();
  });

  describe('migrations', () => {
    it('are recorded once and re-opening applies nothing twice', async () => {
      await store.saveGuildSettings(SETTINGS);
      await store.close();
      const again = await open();
      const third = await open();
      expect(await h.migrationRows()).toBe(MIGRATIONS.length);
      expect((await again.getGuildSettings(G))?.humanRoleId).toBe('role-human');
      expect(await third.listGuildSettings()).toHaveLength(1);
    });

    it('survive concurrent first starts', async () => {
      await h.fresh();
      const [a, b] = await Promise.all([open(), open()]);
      expect(await h.migrationRows()).toBe(MIGRATIONS.length);
      await a?.saveGuildSettings(SETTINGS);
      expect(await b?.getGuildSettings(G)).toBeDefined();
    });
  });

  describe('interaction hand-offs', () => {
    const interaction = { id: '1234567890123456789', data: { name: 'verify', hostile: HOSTILE } };
    const handoff = (interactionId: string, guildId = G) => ({
      interactionId,
      guildId,
      interaction: { ...interaction, id: interactionId },
      sealedToken: `sealed-${interactionId}`,
    });

    it('queue in order, claim once under a lease; once finished only the mark stays, with no interaction or token', async () => {
      store = await open({ leaseMs: 1_000 });
      const first = (await store.enqueueHandoff(handoff('1001'))) ?? 0;
      const second = (await store.enqueueHandoff(handoff('1002', 'guild-2'))) ?? 0;
      expect(await store.openHandoffs(10)).toEqual([
        { id: first, guildId: G },
        { id: second, guildId: 'guild-2' },
      ]);
      const claim = await store.claimHandoff(first);
      expect(claim).toMatchObject({
        id: first,
        interactionId: '1001',
        guildId: G,
        interaction: { ...interaction, id: '1001' },
        sealedToken: 'sealed-1001',
        attempts: 1,
        createdAt: time.t,
      });
      expect(await store.claimHandoff(first)).toBeNull();
      expect((await store.openHandoffs(10)).map((h) => h.id)).toEqual([second]);
      expect(await store.finishHandoff(first, 'not-the-token')).toBe(false);
      expect(await store.finishHandoff(first, claim?.claimToken ?? '')).toBe(true);
      expect(await store.finishHandoff(first, claim?.claimToken ?? '')).toBe(false);
      // Answered: never open or claimable again, even once its lease would have lapsed.
      time.t += 5_000;
      expect(await store.claimHandoff(first)).toBeNull();
      expect((await store.openHandoffs(10)).map((h) => h.id)).toEqual([second]);
    });

    it('one per interaction id: the same interaction again queues nothing, even once the first was answered', async () => {
      store = await open({ leaseMs: 1_000 });
      const id = (await store.enqueueHandoff(handoff('2001'))) ?? 0;
      expect(id).toBeGreaterThan(0);
      expect(await store.enqueueHandoff(handoff('2001'))).toBeNull();
      const claim = await store.claimHandoff(id);
      await store.finishHandoff(id, claim?.claimToken ?? '');
      expect(await store.enqueueHandoff({ ...handoff('2001'), guildId: 'guild-2' })).toBeNull();
      expect(await store.openHandoffs(10)).toEqual([]);
      // Concurrent enqueues (two replicas at once): one row.
      const both = await Promise.all([
        store.enqueueHandoff(handoff('2002')),
        store.enqueueHandoff(handoff('2002')),
      ]);
      expect(both.filter((x) => x !== null)).toHaveLength(1);
    });

    it('a claim that lapses (the worker died) is taken over, and the old claim can no longer finish or renew it', async () => {
      store = await open({ leaseMs: 1_000 });
      const id = (await store.enqueueHandoff(handoff('3001'))) ?? 0;
      const crashed = await store.claimHandoff(id);
      time.t += 999;
      expect(await store.openHandoffs(10)).toEqual([]);
      time.t += 1;
      const taken = await store.claimHandoff(id);
      expect(taken?.attempts).toBe(2);
      expect(await store.renewHandoff(id, crashed?.claimToken ?? '')).toBe(false);
      expect(await store.finishHandoff(id, crashed?.claimToken ?? '')).toBe(false);
      expect(await store.finishHandoff(id, taken?.claimToken ?? '')).toBe(true);
    });

    it('a claim taken over names the dead holder; of two workers taking it over at once, one gets it', async () => {
      store = await open({ leaseMs: 1_000 });
      const id = (await store.enqueueHandoff(handoff('3101'))) ?? 0;
      const first = await store.claimHandoff(id, 'host:1:dead');
      expect(first?.takenFrom).toBeNull();
      time.t += 1_000;
      const other = await open({ leaseMs: 1_000 });
      const both = await Promise.all([
        store.claimHandoff(id, 'host:2:a'),
        other.claimHandoff(id, 'host:3:b'),
      ]);
      const won = both.filter((c) => c !== null);
      expect(won).toHaveLength(1);
      expect(won[0]).toMatchObject({ attempts: 2, takenFrom: 'host:1:dead' });
      // A claim that names nobody (a worker from before) is taken over without a name.
      time.t += 1_000;
      const later = await store.claimHandoff(id);
      expect(later?.takenFrom).toBe(won[0] === both[0] ? 'host:2:a' : 'host:3:b');
      time.t += 1_000;
      expect((await store.claimHandoff(id, 'host:4:c'))?.takenFrom).toBeNull();
    });

    it('a renewed claim stays its holder’s past the first lease', async () => {
      store = await open({ leaseMs: 1_000 });
      const id = (await store.enqueueHandoff(handoff('4001'))) ?? 0;
      const claim = await store.claimHandoff(id);
      time.t += 600;
      expect(await store.renewHandoff(id, claim?.claimToken ?? '')).toBe(true);
      time.t += 600;
      expect(await store.openHandoffs(10)).toEqual([]);
      expect(await store.claimHandoff(id)).toBeNull();
      time.t += 400;
      expect((await store.openHandoffs(10)).map((h) => h.id)).toEqual([id]);
    });

    it('open hand-offs are those of the asking shards, chosen before the limit: 40 of another shard hide none of ours', async () => {
      // (guild_id >> 22) % 2 is the guild's shard of 2.
      const guildOf = (key: bigint) => String((key << 22n) + 1_234n);
      for (let i = 0; i < 40; i++)
        await store.enqueueHandoff(handoff(String(5_000 + i), guildOf(2n * BigInt(i) + 1n)));
      const ours = (await store.enqueueHandoff(handoff('5100', guildOf(1_000_000n)))) ?? 0;
      const dm = (await store.enqueueHandoff(handoff('5101', ''))) ?? 0;
      expect(await store.openHandoffs(32, { ids: [0], count: 2 })).toEqual([
        { id: ours, guildId: guildOf(1_000_000n) },
        { id: dm, guildId: '' },
      ]);
      expect(await store.openHandoffs(32, { ids: [1], count: 2 })).toHaveLength(32);
      expect(await store.openHandoffs(100, { ids: [0, 1], count: 2 })).toHaveLength(42);
      expect(await store.openHandoffs(100, { ids: [], count: 2 })).toEqual([]);
      expect(await store.openHandoffs(100)).toHaveLength(42);
    });

    it('prune deletes what was queued before the cut, answered or not', async () => {
      store = await open({ leaseMs: 1_000 });
      const answered = (await store.enqueueHandoff(handoff('6001'))) ?? 0;
      const claim = await store.claimHandoff(answered);
      await store.finishHandoff(answered, claim?.claimToken ?? '');
      await store.enqueueHandoff(handoff('6002'));
      time.t += 10_000;
      const recent = (await store.enqueueHandoff(handoff('6003'))) ?? 0;
      expect(await store.pruneHandoffs(time.t - 5_000)).toBe(2);
      expect(await store.openHandoffs(10)).toEqual([{ id: recent, guildId: G }]);
      // Pruned, the mark is gone: the id could be queued again (its token is long dead by then).
      expect(await store.enqueueHandoff(handoff('6001'))).not.toBeNull();
    });
  });

  describe('verify panels', () => {
    it('remember one panel message per guild and channel; saving again replaces it', async () => {
      expect(await store.getVerifyPanel(G, 'chan-1')).toBeUndefined();
      await store.saveVerifyPanel(G, 'chan-1', 'msg-1');
      await store.saveVerifyPanel(G, 'chan-2', 'msg-2');
      await store.saveVerifyPanel('guild-2', 'chan-1', HOSTILE);
      await store.saveVerifyPanel(G, 'chan-1', 'msg-3');
      expect(await store.getVerifyPanel(G, 'chan-1')).toBe('msg-3');
      expect(await store.getVerifyPanel(G, 'chan-2')).toBe('msg-2');
      expect(await store.getVerifyPanel('guild-2', 'chan-1')).toBe(HOSTILE);
      await store.close();
      expect(await (await open()).getVerifyPanel(G, 'chan-1')).toBe('msg-3');
    });
  });

  describe('guild settings', () => {
    it('round-trips every field and updates in place', async () => {
      expect(await store.getGuildSettings(G)).toBeUndefined();
      const saved = await store.saveGuildSettings(SETTINGS);
      expect(saved).toEqual({ ...SETTINGS, lastFullSyncAt: null, updatedAt: time.t });
      expect(await store.getGuildSettings(G)).toEqual(saved);

      time.t += 5;
      await store.saveGuildSettings({ ...SETTINGS, enabled: false, minScore: null, spamRemovesHuman: false });
      const updated = await store.getGuildSettings(G);
      expect(updated).toMatchObject({ enabled: false, minScore: null, spamRemovesHuman: false });
      expect(updated?.updatedAt).toBe(time.t);
    });

    it('keeps the account and join ages, 0 as off', async () => {
      expect(await store.saveGuildSettings(SETTINGS)).toMatchObject({
        minAccountAgeDays: 30,
        minJoinAgeDays: 1,
      });
      await store.saveGuildSettings({ ...SETTINGS, minAccountAgeDays: 0, minJoinAgeDays: null });
      expect(await store.getGuildSettings(G)).toMatchObject({
        minAccountAgeDays: null,
        minJoinAgeDays: null,
      });
      await store.saveGuildSettings({ ...SETTINGS, minAccountAgeDays: 3650, minJoinAgeDays: 7 });
      expect(await store.getGuildSettings(G)).toMatchObject({ minAccountAgeDays: 3650, minJoinAgeDays: 7 });
    });

    it('lists enabled guilds and keeps the last full sync across saves', async () => {
      await store.saveGuildSettings(SETTINGS);
      await store.saveGuildSettings({ ...SETTINGS, guildId: 'guild-2', enabled: false });
      await store.markFullSync(G, 42);
      await store.saveGuildSettings({ ...SETTINGS, logChannelId: null });
      expect((await store.listGuildSettings()).map((s) => s.guildId)).toEqual([G, 'guild-2']);
      const enabled = await store.listGuildSettings({ enabledOnly: true });
      expect(enabled.map((s) => s.guildId)).toEqual([G]);
      expect(enabled[0]?.lastFullSyncAt).toBe(42);
      expect(enabled[0]?.logChannelId).toBeNull();
    });

    it('writes a settings_changed audit event when an actor is given', async () => {
      await store.saveGuildSettings(SETTINGS, { userId: 'admin', reason: '/gating setup' });
      await store.saveGuildSettings(SETTINGS);
      const events = await store.listAuditEvents({ guildId: G });
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({
        kind: 'settings_changed',
        userId: 'admin',
        reason: '/gating setup',
        details: { humanRoleId: 'role-human', minScore: 20.5 },
      });
    });
  });

  describe('due checks', () => {
    it('keep one time per member, list the due ones earliest first, and delete only the time listed', async () => {
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 3_000 });
      await store.saveDueCheck({ guildId: G, userId: 'u2', dueAt: 1_000 });
      await store.saveDueCheck({ guildId: 'guild-2', userId: 'u1', dueAt: 9_000 });
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 2_000 });
      expect(await store.listDueChecks(2_500, 10)).toEqual([
        { guildId: G, userId: 'u2', dueAt: 1_000 },
        { guildId: G, userId: 'u1', dueAt: 2_000 },
      ]);
      expect(await store.listDueChecks(2_500, 1)).toHaveLength(1);
      // A sync since saved a later time: deleting the listed one leaves it.
      await store.saveDueCheck({ guildId: G, userId: 'u2', dueAt: 5_000 });
      await store.deleteDueCheck({ guildId: G, userId: 'u2', dueAt: 1_000 });
      await store.deleteDueCheck({ guildId: G, userId: 'u1', dueAt: 2_000 });
      expect(await store.listDueChecks(10_000, 10)).toEqual([
        { guildId: G, userId: 'u2', dueAt: 5_000 },
        { guildId: 'guild-2', userId: 'u1', dueAt: 9_000 },
      ]);
    });

    it("carry the member's own request (an /unverify another process asked for) through a later time, until done", async () => {
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 1_000, memberAsked: true });
      await store.saveDueCheck({ guildId: G, userId: 'u2', dueAt: 1_000 });
      expect(await store.listDueChecks(1_000, 10)).toEqual([
        { guildId: G, userId: 'u1', dueAt: 1_000, memberAsked: true },
        { guildId: G, userId: 'u2', dueAt: 1_000 },
      ]);
      // A sync that found u1 too new saved a later time: the request stays with it.
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 4_000 });
      expect(await store.listDueChecks(4_000, 10)).toContainEqual({
        guildId: G,
        userId: 'u1',
        dueAt: 4_000,
        memberAsked: true,
      });
      await store.deleteDueCheck({ guildId: G, userId: 'u1', dueAt: 4_000 });
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 6_000 });
      expect(await store.listDueChecks(6_000, 10)).toContainEqual({ guildId: G, userId: 'u1', dueAt: 6_000 });
    });

    it('survive re-opening the store', async () => {
      await store.saveDueCheck({ guildId: G, userId: 'u1', dueAt: 1_000 });
      await store.close();
      store = await open();
      expect(await store.listDueChecks(1_000, 10)).toEqual([{ guildId: G, userId: 'u1', dueAt: 1_000 }]);
    });
  });

  describe('links', () => {
    it('saves, refreshes and removes links with audit events', async () => {
      const saved = await store.saveLink(link('u1', 'vitalik.eth'), 'verified by record');
      expect(saved).toEqual({
        ...link('u1', 'vitalik.eth'),
        lastCheckAt: null,
        lastCheckOk: null,
        lastResult: null,
        releasedAt: null,
      });
      await store.saveLink({ ...link('u1', 'vitalik.eth', 2_000), proofMethod: 'signature' }, 'signed');
      expect(await store.getUserLinks(G, 'u1')).toEqual([
        expect.objectContaining({ proofMethod: 'signature', provenAt: 2_000 }),
      ]);

      expect(
        await store.removeLink({ guildId: G, userId: 'u1', identity: 'vitalik.eth' }, 'record gone'),
      ).toBe(true);
      expect(await store.removeLink({ guildId: G, userId: 'u1', identity: 'vitalik.eth' }, 'again')).toBe(
        false,
      );
      expect(await store.getLink({ guildId: G, userId: 'u1', identity: 'vitalik.eth' })).toBeUndefined();

      const kinds = (await store.listAuditEvents({ guildId: G, userId: 'u1' })).map((e) => [
        e.kind,
        e.reason,
      ]);
      expect(kinds).toEqual([
        ['unlinked', 'record gone'],
        ['linked', 'signed'],
        ['linked', 'verified by record'],
      ]);
      const [removed] = await store.listAuditEvents({ guildId: G, userId: 'u1' });
      expect(removed?.details).toEqual({ identity: 'vitalik.eth', proofMethod: 'signature' });
    });

    it('keeps the last result when a check fails', async () => {
      const key = { guildId: G, userId: 'u1', identity: 'vitalik.eth' };
      await store.saveLink(link('u1', 'vitalik.eth'), 'verified');
      expect(await store.recordLinkCheck(key, { at: 10, ok: true, result: CREDENTIALS })).toBe(true);
      expect(await store.recordLinkCheck(key, { at: 20, ok: false, result: null })).toBe(true);
      expect(await store.getLink(key)).toMatchObject({
        lastCheckAt: 20,
        lastCheckOk: false,
        lastResult: CREDENTIALS,
      });
      expect(await store.recordLinkCheck({ ...key, identity: 'gone.eth' }, { at: 30, ok: true })).toBe(false);
    });

    it('lists link summaries as listLinks pages them, without the stored credentials', async () => {
      for (const [user, identity] of [
        ['u2', 'b.eth'],
        ['u1', 'a.eth'],
        ['u1', 'c.eth'],
      ] as const) {
        await store.saveLink(link(user, identity), 'verified');
      }
      const key = { guildId: G, userId: 'u1', identity: 'a.eth' };
      await store.recordLinkCheck(key, { at: 10, ok: true, result: CREDENTIALS });
      const full = await store.listLinks(G, { limit: 1 });
      const summaries = await store.listLinkSummaries(G, { limit: 1 });
      expect(full.map((l) => l.lastResult)).toEqual([CREDENTIALS, null]);
      expect(summaries).toEqual(full.map(({ lastResult: _, ...summary }) => summary));
      expect(summaries.every((l) => !('lastResult' in l))).toBe(true);
      expect(await store.listLinkSummaries(G, { afterUserId: 'u1', limit: 5 })).toEqual([
        expect.objectContaining({ userId: 'u2', identity: 'b.eth', lastCheckAt: null }),
      ]);
      expect(await store.listLinkSummaries(G)).toHaveLength(3);
    });

    it('pages a guild by whole members and counts them', async () => {
      for (const [user, identity] of [
        ['u3', 'c.eth'],
        ['u1', 'a.eth'],
        ['u1', 'b.eth'],
        ['u2', 'a.eth'],
      ] as const) {
        await store.saveLink(link(user, identity), 'verified');
      }
      await store.saveLink({ ...link('u9', 'z.eth'), guildId: 'other' }, 'verified');
      const page1 = await store.listLinks(G, { limit: 1 });
      expect(page1.map((l) => `${l.userId}:${l.identity}`)).toEqual(['u1:a.eth', 'u1:b.eth']);
      const page2 = await store.listLinks(G, { afterUserId: 'u1', limit: 5 });
      expect(page2.map((l) => l.userId)).toEqual(['u2', 'u3']);
      expect(await store.listLinks(G)).toHaveLength(4);
      expect(await store.countLinkedUsers(G)).toBe(3);
      // One identity, one member: u2's proof of a.eth released u1's link (kept for its flags, proving nothing).
      expect(
        (await store.getIdentityLinks(G, 'a.eth')).map((l) => [l.userId, l.releasedAt !== null]),
      ).toEqual([
        ['u1', true],
        ['u2', false],
      ]);
      expect((await store.getHolding(G, 'identity', 'a.eth'))?.userId).toBe('u2');
    });

    it('stores hostile text verbatim', async () => {
      await store.saveLink(link('u1', HOSTILE), HOSTILE);
      expect((await store.getUserLinks(G, 'u1'))[0]?.identity).toBe(HOSTILE);
      expect((await store.listAuditEvents({ guildId: G }))[0]?.reason).toBe(HOSTILE);
    });

    it('stores U+0000 as U+FFFD in text and JSON, and still finds the row by its original key', async () => {
      const key = { guildId: G, userId: 'u1', identity: 'a\0b.eth' };
      await store.saveLink(link('u1', key.identity), 'nul\0reason');
      expect(
        await store.recordLinkCheck(key, { at: 1, ok: true, result: { ...CREDENTIALS, isSpam: [] } }),
      ).toBe(true);
      await store.addAuditEvent({ guildId: G, kind: 'x', reason: 'r', details: { text: 'x\0y' } });
      expect((await store.getLink(key))?.identity).toBe('a\uFFFDb.eth');
      const [custom, linked] = await store.listAuditEvents({ guildId: G });
      expect(custom?.details).toEqual({ text: 'x\uFFFDy' });
      expect(linked?.reason).toBe('nul\uFFFDreason');
    });
  });

  describe('audit events', () => {
    it('lists newest first, by member, with limit and paging', async () => {
      for (let i = 1; i <= 5; i += 1) {
        time.t += 1;
        await store.addAuditEvent({
          guildId: G,
          userId: i % 2 ? 'odd' : 'even',
          kind: 'role_added',
          roleId: 'r',
          reason: `event ${i}`,
          details: { i, nested: [true, null, 'x'] },
        });
      }
      await store.addAuditEvent({ guildId: 'other', kind: 'linked', reason: 'elsewhere' });

      const all = await store.listAuditEvents({ guildId: G });
      expect(all.map((e) => e.reason)).toEqual(['event 5', 'event 4', 'event 3', 'event 2', 'event 1']);
      expect(all[0]).toMatchObject({
        userId: 'odd',
        roleId: 'r',
        details: { i: 5, nested: [true, null, 'x'] },
      });
      expect(all[0]?.createdAt).toBe(time.t);

      const odd = await store.listAuditEvents({ guildId: G, userId: 'odd', limit: 2 });
      expect(odd.map((e) => e.reason)).toEqual(['event 5', 'event 3']);
      const older = await store.listAuditEvents({ guildId: G, beforeId: all[1]?.id ?? 0 });
      expect(older.map((e) => e.reason)).toEqual(['event 3', 'event 2', 'event 1']);
      const other = await store.listAuditEvents({ guildId: 'other' });
      expect(other).toEqual([expect.objectContaining({ userId: null, roleId: null, details: null })]);
    });
  });

  describe('export pages', () => {
    it('pages a period of audit events oldest first by (createdAt, id), ties included', async () => {
      await store.addAuditEvent({ guildId: G, kind: 'linked', reason: 'too old', createdAt: 5 });
      for (const [i, at] of [10, 10, 10, 11, 12].entries())
        await store.addAuditEvent({ guildId: G, kind: 'linked', reason: `e${i}`, createdAt: at });
      await store.addAuditEvent({ guildId: 'other', kind: 'linked', reason: 'elsewhere', createdAt: 10 });
      const seen: string[] = [];
      let after: { createdAt: number; id: number } | undefined;
      for (;;) {
        const page = await store.pageAuditEvents({
          guildId: G,
          since: 10,
          limit: 2,
          ...(after ? { after } : {}),
        });
        seen.push(...page.map((e) => e.reason));
        const last = page.at(-1);
        if (!last) break;
        after = { createdAt: last.createdAt, id: last.id };
      }
      expect(seen).toEqual(['e0', 'e1', 'e2', 'e3', 'e4']);
    });

    it('lists the roles whose latest role event is an add, by (member, role), paged', async () => {
      const role = (userId: string, roleId: string, kind: string, reason: string, createdAt: number) =>
        store.addAuditEvent({ guildId: G, userId, roleId, kind, reason, createdAt });
      await role('u1', 'r1', 'role_added', 'first', 1);
      await role('u1', 'r1', 'role_removed', 'lost', 2);
      await role('u1', 'r1', 'role_added', HOSTILE, 3);
      await role('u1', 'r2', 'role_added', 'gone', 1);
      await role('u1', 'r2', 'role_removed', 'gone now', 2);
      await role('u1', 'r3', 'role_added', 'kept', 1);
      await role('u1', 'r3', 'role_failed', 'a failed retry does not count', 2);
      await role('u2', 'r1', 'role_added', 'u2 r1', 4);
      await store.addAuditEvent({
        guildId: 'other',
        userId: 'u3',
        roleId: 'r1',
        kind: 'role_added',
        reason: 'x',
      });

      const first = await store.listHeldRoles(G, { limit: 2 });
      expect(first.map((r) => [r.userId, r.roleId, r.reason, r.at])).toEqual([
        ['u1', 'r1', HOSTILE, 3],
        ['u1', 'r3', 'kept', 1],
      ]);
      const rest = await store.listHeldRoles(G, { limit: 2, after: { userId: 'u1', roleId: 'r3' } });
      expect(rest.map((r) => r.reason)).toEqual(['u2 r1']);
      expect(await store.listHeldRoles(G, { after: { userId: 'u2', roleId: 'r1' } })).toEqual([]);
    });
  });

  describe('oauth states', () => {
    const STATE = { stateHash: 'h-1', purpose: 'verify' as const, nonce: 'n-1', expiresAt: 10_000 };

    it('gives a state back once, never at or after its expiry, and drops expired ones', async () => {
      await store.createOAuthState(STATE, 1_000);
      await store.createOAuthState(
        { ...STATE, stateHash: 'h-2', nonce: null, purpose: 'linked-role' },
        1_000,
      );
      await store.createOAuthState({ ...STATE, stateHash: 'h-3' }, 1_000);
      expect(await store.consumeOAuthState('h-1', 9_999)).toEqual(STATE);
      expect(await store.consumeOAuthState('h-1', 9_999)).toBeUndefined();
      expect(await store.consumeOAuthState('h-2', 5_000)).toEqual({
        stateHash: 'h-2',
        purpose: 'linked-role',
        nonce: null,
        expiresAt: 10_000,
      });
      expect(await store.consumeOAuthState('h-3', 10_000)).toBeUndefined();
      // A dashboard sign-in's state comes back as the dashboard's (never as a signing page's).
      await store.createOAuthState({ ...STATE, stateHash: 'h-6', purpose: 'dashboard', nonce: '/1' }, 1_000);
      expect(await store.consumeOAuthState('h-6', 5_000)).toMatchObject({
        purpose: 'dashboard',
        nonce: '/1',
      });
      await store.createOAuthState({ ...STATE, stateHash: 'h-4' }, 1_000);
      await store.createOAuthState({ ...STATE, stateHash: 'h-5', expiresAt: 30_000 }, 20_000);
      expect(await store.consumeOAuthState('h-4', 1_000)).toBeUndefined();
      expect(await store.consumeOAuthState('missing', 1)).toBeUndefined();
    });

    it('lets exactly one of many concurrent callbacks win', async () => {
      const other = await open();
      await store.createOAuthState(STATE, 1_000);
      const results = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? store : other).consumeOAuthState('h-1', 5_000)),
      );
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });
  });

  describe('nonces', () => {
    const NONCE = {
      nonce: 'n-1',
      guildId: G,
      userId: 'u1',
      userName: 'alice',
      guildName: 'The Guild',
      identity: 'vitalik.eth',
      address: '0xABCdef',
      expiresAt: 10_000,
    };

    it('creates, reads and consumes once', async () => {
      await store.createNonce(NONCE);
      expect(await store.getNonce('n-1')).toEqual({
        ...NONCE,
        address: '0xabcdef',
        usedAt: null,
        failedAttempts: 0,
      });
      expect(await store.consumeNonce('n-1', 9_999)).toEqual({
        ...NONCE,
        address: '0xabcdef',
        usedAt: 9_999,
        failedAttempts: 0,
      });
      expect(await store.consumeNonce('n-1', 9_999)).toBeUndefined();
      expect((await store.getNonce('n-1'))?.usedAt).toBe(9_999);
      expect(await store.consumeNonce('missing', 1)).toBeUndefined();
      expect(await store.getNonce('missing')).toBeUndefined();
    });

    it('refuses a duplicate nonce', async () => {
      await store.createNonce(NONCE);
      await expect(store.createNonce({ ...NONCE, userId: 'attacker' })).rejects.toThrow();
      expect((await store.getNonce('n-1'))?.userId).toBe('u1');
    });

    it('treats a nonce as expired from its expiry instant', async () => {
      await store.createNonce(NONCE);
      expect(await store.consumeNonce('n-1', 10_000)).toBeUndefined();
      expect((await store.getNonce('n-1'))?.usedAt).toBeNull();
    });

    it('lets exactly one of many concurrent consumers win', async () => {
      const other = await open();
      await store.createNonce(NONCE);
      const attempts = Array.from({ length: 12 }, (_, i) =>
        (i % 2 ? store : other).consumeNonce('n-1', 5_000),
      );
      const results = await Promise.all(attempts);
      expect(results.filter((r) => r !== undefined)).toHaveLength(1);
    });

    it('keeps a Solana signer as written (base58 is case-sensitive)', async () => {
      const solana = '7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV';
      await store.createNonce({ ...NONCE, address: solana });
      expect((await store.getNonce('n-1'))?.address).toBe(solana);
    });

    it('counts refused signatures and burns the challenge at the limit', async () => {
      await store.createNonce(NONCE);
      expect(await store.countFailedAttempt('n-1', 3, 5_000)).toBe(1);
      expect(await store.countFailedAttempt('n-1', 3, 5_000)).toBe(2);
      expect((await store.getNonce('n-1'))?.usedAt).toBeNull();
      expect(await store.countFailedAttempt('n-1', 3, 5_000)).toBe(3);
      expect((await store.getNonce('n-1'))?.usedAt).toBe(5_000);
      expect(await store.countFailedAttempt('n-1', 3, 5_000)).toBeUndefined();
      expect(await store.consumeNonce('n-1', 5_000)).toBeUndefined();
      expect(await store.countFailedAttempt('missing', 3, 5_000)).toBeUndefined();
    });

    it('deletes expired nonces only', async () => {
      await store.createNonce({ ...NONCE, nonce: 'old', expiresAt: 100 });
      await store.createNonce({ ...NONCE, nonce: 'edge', expiresAt: 200 });
      await store.createNonce({ ...NONCE, nonce: 'live', expiresAt: 300 });
      expect(await store.deleteExpiredNonces(200)).toBe(2);
      expect(await store.getNonce('old')).toBeUndefined();
      expect(await store.getNonce('live')).toBeDefined();
      expect(await store.deleteExpiredNonces(200)).toBe(0);
    });

    describe('the cap on open challenges per account', () => {
      const CAP = { maxOpenPerUser: 5, now: 1_000 };
      const rec = (nonce: string, expiresAt: number, userId = 'u1') => ({
        ...NONCE,
        nonce,
        userId,
        expiresAt,
      });

      it('keeps the newest open ones and retires the oldest, oldest first', async () => {
        const retired: number[] = [];
        for (let i = 1; i <= 7; i += 1) retired.push(await store.createNonce(rec(`n-${i}`, 10_000 + i), CAP));
        expect(retired).toEqual([0, 0, 0, 0, 0, 1, 1]);
        expect(await store.getNonce('n-1')).toBeUndefined();
        expect(await store.getNonce('n-2')).toBeUndefined();
        for (let i = 3; i <= 7; i += 1) expect((await store.getNonce(`n-${i}`))?.usedAt).toBeNull();
      });

      it('breaks a tie in expiry by nonce, and always keeps the one just made', async () => {
        for (const n of ['b', 'a', 'e', 'd', 'c']) await store.createNonce(rec(n, 10_000), CAP);
        // Expires before the others (say a shorter TTL since): still kept, being the one asked for.
        expect(await store.createNonce(rec('early', 5_000), CAP)).toBe(1);
        expect(await store.getNonce('early')).toBeDefined();
        expect(await store.getNonce('a')).toBeUndefined();
        for (const n of ['b', 'c', 'd', 'e']) expect(await store.getNonce(n)).toBeDefined();
        // Then it is the oldest, and the next one replaces it.
        expect(await store.createNonce(rec('f', 10_000), CAP)).toBe(1);
        expect(await store.getNonce('early')).toBeUndefined();
        for (const n of ['b', 'c', 'd', 'e', 'f']) expect(await store.getNonce(n)).toBeDefined();
      });

      it("leaves other accounts' challenges and the account's used or expired ones alone", async () => {
        for (let i = 1; i <= 3; i += 1) await store.createNonce(rec(`other-${i}`, 10_000 + i, 'u2'), CAP);
        await store.createNonce(rec('used', 10_000), CAP);
        expect(await store.consumeNonce('used', 500)).toBeDefined();
        await store.createNonce(rec('burned', 10_000), CAP);
        expect(await store.countFailedAttempt('burned', 1, 500)).toBe(1);
        await store.createNonce(rec('expired', 900));
        await store.createNonce(rec('edge', 1_000));
        for (let i = 1; i <= 8; i += 1) await store.createNonce(rec(`n-${i}`, 10_000 + i), CAP);

        for (let i = 1; i <= 3; i += 1) expect(await store.getNonce(`n-${i}`)).toBeUndefined();
        for (let i = 4; i <= 8; i += 1) expect((await store.getNonce(`n-${i}`))?.usedAt).toBeNull();
        for (let i = 1; i <= 3; i += 1) expect(await store.getNonce(`other-${i}`)).toBeDefined();
        expect((await store.getNonce('used'))?.usedAt).toBe(500);
        expect((await store.getNonce('burned'))?.usedAt).toBe(500);
        expect(await store.getNonce('expired')).toBeDefined();
        expect(await store.getNonce('edge')).toBeDefined();
      });

      it("counts open as of the store's clock when no instant is given", async () => {
        time.t = 10_003;
        for (let i = 1; i <= 3; i += 1) await store.createNonce(rec(`n-${i}`, 10_000 + i));
        for (let i = 4; i <= 8; i += 1)
          await store.createNonce(rec(`n-${i}`, 20_000 + i), { maxOpenPerUser: 5 });
        // n-1..n-3 had expired by the clock: not counted, not deleted; n-4..n-8 are the five open ones.
        for (let i = 1; i <= 8; i += 1) expect(await store.getNonce(`n-${i}`)).toBeDefined();
        expect(await store.createNonce(rec('n-9', 20_009), { maxOpenPerUser: 5 })).toBe(1);
        expect(await store.getNonce('n-4')).toBeUndefined();
      });

      it('creates nothing and deletes nothing when the new nonce is refused', async () => {
        for (let i = 1; i <= 5; i += 1) await store.createNonce(rec(`n-${i}`, 10_000 + i), CAP);
        await expect(store.createNonce(rec('n-5', 10_010), CAP)).rejects.toThrow();
        for (let i = 1; i <= 5; i += 1) expect(await store.getNonce(`n-${i}`)).toBeDefined();
        await expect(store.createNonce(rec('n-6', 10_010), { maxOpenPerUser: 0 })).rejects.toThrow(
          RangeError,
        );
        expect(await store.getNonce('n-6')).toBeUndefined();
      });

      it('holds under concurrent creations for one account, from two stores', async () => {
        // Stores of its own, closed at the end: their pools must not sit on PostgreSQL connections.
        const stores = [await open(), await open()];
        const id = (i: number) => `c-${String(i).padStart(2, '0')}`;
        try {
          // Connections opened first (PostgreSQL pools), so the creations below really overlap.
          await Promise.all(Array.from({ length: 20 }, (_, i) => stores[i % 2]?.getNonce('none')));
          const results = await Promise.all(
            Array.from({ length: 20 }, (_, i) => stores[i % 2]?.createNonce(rec(id(i), 10_000 + i), CAP)),
          );
          expect(results.reduce((a = 0, b = 0) => a + b, 0)).toBe(15);
          const left = [];
          for (let i = 0; i < 20; i += 1) {
            const found = await store.getNonce(id(i));
            if (found) left.push(found);
          }
          expect(left).toHaveLength(5);
        } finally {
          await Promise.all(stores.map((s) => s.close()));
        }
      });
    });
  });

  describe('role-change queue', () => {
    const ADD = {
      guildId: G,
      userId: 'u1',
      roleId: 'human',
      op: 'add' as const,
      reason: 'isHuman: passport',
    };
    const REMOVE = { ...ADD, op: 'remove' as const, reason: 'isSpam: flagged' };

    it('is idempotent while pending and lets a newer opposite op replace it', async () => {
      const first = await store.enqueueRoleChange(ADD);
      expect(first.outcome).toBe('created');
      expect(first.change).toMatchObject({ ...ADD, status: 'pending', attempts: 0, leaseUntil: null });
      const again = await store.enqueueRoleChange(ADD);
      expect(again).toMatchObject({ outcome: 'duplicate', change: { id: first.change.id } });
      const flipped = await store.enqueueRoleChange(REMOVE);
      expect(flipped).toMatchObject({ outcome: 'replaced', change: { id: first.change.id, op: 'remove' } });
      expect(flipped.change.reason).toBe('isSpam: flagged');
      await store.enqueueRoleChange({ ...ADD, roleId: 'spam' });
      await store.enqueueRoleChange({ ...ADD, guildId: 'guild-2' });
      expect(await store.pendingRoleChanges(G)).toBe(2);
      expect(await store.pendingRoleChanges()).toBe(3);
    });

    it('claims oldest first within a guild and limit, then not again while leased', async () => {
      await store.enqueueRoleChange(ADD);
      await store.enqueueRoleChange({ ...ADD, userId: 'u2' });
      await store.enqueueRoleChange({ ...ADD, userId: 'u3' });
      await store.enqueueRoleChange({ ...ADD, guildId: 'guild-2' });
      const claimed = await store.claimRoleChanges(G, 2);
      expect(claimed.map((c) => c.userId)).toEqual(['u1', 'u2']);
      expect(claimed[0]).toMatchObject({ status: 'in_progress', attempts: 1, leaseUntil: time.t + 60_000 });
      expect((await store.claimRoleChanges(G, 10)).map((c) => c.userId)).toEqual(['u3']);
      expect(await store.claimRoleChanges(G, 10)).toEqual([]);
      expect(await store.pendingRoleChanges(G)).toBe(3);
      expect((await store.claimRoleChanges(undefined, 10)).map((c) => c.guildId)).toEqual(['guild-2']);
    });

    it('does not queue the same op again while it is in progress', async () => {
      const { change } = await store.enqueueRoleChange(ADD);
      await store.claimRoleChanges(G, 10);
      expect(await store.enqueueRoleChange(ADD)).toMatchObject({
        outcome: 'duplicate',
        change: { id: change.id },
      });
      expect(await store.pendingRoleChanges(G)).toBe(1);
    });

    it('holds an opposite op until the in-progress change finishes', async () => {
      await store.enqueueRoleChange(ADD);
      const [inFlight] = await store.claimRoleChanges(G, 10);
      const queued = await store.enqueueRoleChange(REMOVE);
      expect(queued.outcome).toBe('created');
      expect(await store.claimRoleChanges(G, 10)).toEqual([]);
      expect(await store.completeRoleChange(inFlight?.id ?? -1, inFlight?.claimToken ?? '', 'done')).toBe(
        true,
      );
      expect((await store.claimRoleChanges(G, 10)).map((c) => c.op)).toEqual(['remove']);

      // Asking again for what is in flight cancels the stale opposite one still waiting.
      await store.enqueueRoleChange(ADD);
      expect(await store.enqueueRoleChange(REMOVE)).toMatchObject({ outcome: 'duplicate' });
      expect(await store.pendingRoleChanges(G)).toBe(1);
    });

    it('writes the audit event with the outcome, once', async () => {
      await store.enqueueRoleChange(ADD);
      await store.enqueueRoleChange({ ...REMOVE, roleId: 'spam' });
      await store.enqueueRoleChange({ ...ADD, roleId: 'risky' });
      const [add, remove, fail] = await store.claimRoleChanges(G, 10);
      time.t += 7;
      expect(await store.completeRoleChange(add?.id ?? -1, add?.claimToken ?? '', 'done')).toBe(true);
      expect(await store.completeRoleChange(remove?.id ?? -1, remove?.claimToken ?? '', 'done', 'ok')).toBe(
        true,
      );
      expect(
        await store.completeRoleChange(
          fail?.id ?? -1,
          fail?.claimToken ?? '',
          'failed',
          '50013 Missing Permissions',
        ),
      ).toBe(true);
      expect(await store.completeRoleChange(add?.id ?? -1, add?.claimToken ?? '', 'done')).toBe(false);
      expect(await store.completeRoleChange(9_999, 'token', 'done')).toBe(false);
      expect(await store.pendingRoleChanges()).toBe(0);

      const events = await store.listAuditEvents({ guildId: G, userId: 'u1' });
      expect(events.map((e) => [e.kind, e.roleId, e.reason])).toEqual([
        ['role_failed', 'risky', ADD.reason],
        ['role_removed', 'spam', REMOVE.reason],
        ['role_added', 'human', ADD.reason],
      ]);
      expect(events[0]?.details).toMatchObject({
        op: 'add',
        attempts: 1,
        detail: '50013 Missing Permissions',
      });
      expect(events[0]?.createdAt).toBe(time.t);
    });

    it('re-claims a crashed worker’s changes after the lease, after a restart, without duplicates', async () => {
      store = await open({ leaseMs: 1_000 });
      await store.enqueueRoleChange(ADD);
      await store.enqueueRoleChange({ ...ADD, userId: 'u2' });
      const crashed = await store.claimRoleChanges(G, 10);
      expect(crashed).toHaveLength(2);
      await store.close();

      const restarted = await open({ leaseMs: 1_000 });
      expect(await restarted.pendingRoleChanges(G)).toBe(2);
      time.t += 999;
      expect(await restarted.claimRoleChanges(G, 10)).toEqual([]);
      time.t += 1;
      const reclaimed = await restarted.claimRoleChanges(G, 10);
      expect(reclaimed.map((c) => [c.id, c.attempts])).toEqual(crashed.map((c) => [c.id, 2]));
      for (const c of reclaimed)
        expect(await restarted.completeRoleChange(c.id, c.claimToken ?? '', 'done')).toBe(true);
      expect(await restarted.claimRoleChanges(G, 10)).toEqual([]);
      expect(await restarted.listAuditEvents({ guildId: G })).toHaveLength(2);
    });

    it('never hands one change to two concurrent claimers', async () => {
      const other = await open();
      for (let i = 0; i < 20; i += 1) await store.enqueueRoleChange({ ...ADD, userId: `u${i}` });
      const batches = await Promise.all([
        store.claimRoleChanges(G, 7),
        other.claimRoleChanges(G, 7),
        store.claimRoleChanges(G, 7),
        other.claimRoleChanges(G, 7),
      ]);
      const ids = batches.flat().map((c) => c.id);
      expect(ids).toHaveLength(20);
      expect(new Set(ids).size).toBe(20);
    });

    it('completes, renews and defers only under the claim that holds it', async () => {
      store = await open({ leaseMs: 1_000 });
      await store.enqueueRoleChange(ADD);
      const [stale] = await store.claimRoleChanges(G, 1);
      time.t += 1_000;
      const [current] = await store.claimRoleChanges(G, 1);
      expect(current?.id).toBe(stale?.id);
      expect(current?.claimToken).not.toBe(stale?.claimToken);
      // The worker whose lease lapsed can no longer touch the change.
      expect(await store.renewRoleChange(stale?.id ?? -1, stale?.claimToken ?? '')).toBe(false);
      expect(await store.completeRoleChange(stale?.id ?? -1, stale?.claimToken ?? '', 'done')).toBe(false);
      expect(await store.deferRoleChange(stale?.id ?? -1, stale?.claimToken ?? '', time.t)).toBe(false);
      // The holder renews its lease: nobody can claim it meanwhile.
      time.t += 900;
      expect(await store.renewRoleChange(current?.id ?? -1, current?.claimToken ?? '')).toBe(true);
      time.t += 900;
      expect(await store.claimRoleChanges(G, 1)).toEqual([]);
      expect(await store.completeRoleChange(current?.id ?? -1, current?.claimToken ?? '', 'done')).toBe(true);
    });

    it('defers a change without counting an attempt, and a newer pending change supersedes it', async () => {
      await store.enqueueRoleChange(ADD);
      const [claimed] = await store.claimRoleChanges(G, 1);
      expect(await store.deferRoleChange(claimed?.id ?? -1, claimed?.claimToken ?? '', time.t + 500)).toBe(
        true,
      );
      expect(await store.claimRoleChanges(G, 1)).toEqual([]);
      expect(await store.pendingRoleChanges(G)).toBe(1);
      time.t += 500;
      const [again] = await store.claimRoleChanges(G, 1);
      expect(again).toMatchObject({ id: claimed?.id, attempts: 1 });

      await store.enqueueRoleChange(REMOVE);
      expect(await store.deferRoleChange(again?.id ?? -1, again?.claimToken ?? '', time.t)).toBe(true);
      const rest = await store.claimRoleChanges(G, 10);
      expect(rest.map((c) => c.op)).toEqual(['remove']);
    });

    it('tells when the oldest unfinished change was queued', async () => {
      expect(await store.oldestOpenRoleChangeAt()).toBeNull();
      const first = time.t;
      await store.enqueueRoleChange(ADD);
      time.t += 500;
      await store.enqueueRoleChange({ ...ADD, userId: 'u2' });
      expect(await store.oldestOpenRoleChangeAt()).toBe(first);
      const [claimed] = await store.claimRoleChanges(G, 1);
      await store.completeRoleChange(claimed?.id ?? -1, claimed?.claimToken ?? '', 'done');
      expect(await store.oldestOpenRoleChangeAt()).toBe(first + 500);
    });

    it('lists open changes, oldest first, for a guild or one member', async () => {
      await store.enqueueRoleChange(ADD);
      await store.enqueueRoleChange({ ...REMOVE, userId: 'u2' });
      await store.enqueueRoleChange({ ...ADD, guildId: 'guild-2' });
      const [claimed] = await store.claimRoleChanges(G, 1);
      expect((await store.openRoleChanges(G)).map((c) => [c.userId, c.op, c.status])).toEqual([
        ['u1', 'add', 'in_progress'],
        ['u2', 'remove', 'pending'],
      ]);
      expect((await store.openRoleChanges(G, 'u2')).map((c) => c.op)).toEqual(['remove']);
      await store.completeRoleChange(claimed?.id ?? -1, claimed?.claimToken ?? '', 'done');
      expect(await store.openRoleChanges(G, 'u1')).toEqual([]);
    });

    it('prunes finished changes only', async () => {
      await store.enqueueRoleChange(ADD);
      await store.enqueueRoleChange({ ...ADD, userId: 'u2' });
      const [done] = await store.claimRoleChanges(G, 1);
      await store.completeRoleChange(done?.id ?? -1, done?.claimToken ?? '', 'done');
      expect(await store.deleteFinishedRoleChanges(time.t)).toBe(0);
      expect(await store.deleteFinishedRoleChanges(time.t + 1)).toBe(1);
      expect(await store.pendingRoleChanges(G)).toBe(1);
    });
  });

  describe('released links, address links and pending losses', () => {
    it('releases an active link once, keeps it listed, and a new proof makes it active again', async () => {
      await store.saveLink(link('u1', 'flagged.eth'), 'proof');
      expect(await store.releaseLink({ guildId: G, userId: 'u1', identity: 'flagged.eth' }, 'unverify')).toBe(
        true,
      );
      expect(await store.releaseLink({ guildId: G, userId: 'u1', identity: 'flagged.eth' }, 'again')).toBe(
        false,
      );
      const [released] = await store.getUserLinks(G, 'u1');
      expect(released?.releasedAt).toBe(time.t);
      expect(await store.countLinkedUsers(G)).toBe(0);
      expect((await store.listLinks(G)).map((l) => l.identity)).toEqual(['flagged.eth']);
      const events = await store.listAuditEvents({ guildId: G, userId: 'u1' });
      expect(events[0]).toMatchObject({ kind: 'unlinked', reason: 'unverify' });
      expect(events[0]?.details).toEqual({ identity: 'flagged.eth', proofMethod: 'record', flagKept: true });
      await store.saveLink(link('u1', 'flagged.eth'), 'proof again');
      expect((await store.getUserLinks(G, 'u1'))[0]?.releasedAt).toBeNull();
    });

    it('finds links by address and a user’s links in every guild', async () => {
      await store.saveLink({ ...link('u1', 'a.eth'), address: '0xaaa' }, 'p');
      await store.saveLink({ ...link('u2', 'sub.a.eth'), address: '0xaaa' }, 'p');
      await store.saveLink({ ...link('u2', 'b.eth'), address: '0xbbb' }, 'p');
      await store.saveLink({ ...link('u1', 'c.eth'), guildId: 'guild-2' }, 'p');
      expect((await store.getAddressLinks(G, '0xaaa')).map((l) => l.userId)).toEqual(['u1', 'u2']);
      expect((await store.getLinksOfUser('u1')).map((l) => [l.guildId, l.identity])).toEqual([
        [G, 'a.eth'],
        ['guild-2', 'c.eth'],
      ]);
    });

    it('keeps the first sighting of a loss, holds and clears it', async () => {
      const loss = { guildId: G, userId: 'u1', subject: 'role:human', reason: 'no isHuman' };
      expect(await store.notePendingLoss({ ...loss, firstSeenAt: 100 })).toMatchObject({
        firstSeenAt: 100,
        heldAt: null,
      });
      expect(await store.notePendingLoss({ ...loss, firstSeenAt: 900, reason: 'later' })).toMatchObject({
        firstSeenAt: 100,
        reason: 'later',
      });
      await store.notePendingLoss({ ...loss, userId: 'u2', firstSeenAt: 200 });
      await store.holdPendingLosses(G, [{ userId: 'u2', subject: 'role:human' }], 300);
      expect((await store.listPendingLosses(G)).map((l) => [l.userId, l.heldAt])).toEqual([
        ['u1', null],
        ['u2', 300],
      ]);
      expect(await store.clearPendingLoss(G, 'u1', 'role:human')).toBe(true);
      expect(await store.clearPendingLoss(G, 'u1', 'role:human')).toBe(false);
      expect((await store.listPendingLosses(G, 'u2')).map((l) => l.subject)).toEqual(['role:human']);
    });

    it('prunes audit events older than the retention', async () => {
      await store.addAuditEvent({ guildId: G, kind: 'linked', reason: 'old', createdAt: 100 });
      await store.addAuditEvent({ guildId: G, kind: 'linked', reason: 'new', createdAt: 200 });
      expect(await store.deleteAuditEvents(200)).toBe(1);
      expect((await store.listAuditEvents({ guildId: G })).map((e) => e.reason)).toEqual(['new']);
    });
  });

  describe('the ownership registry', () => {
    const signed = (userId: string, identity: string, address: string | null): LinkInput => ({
      ...link(userId, identity),
      address,
      proofMethod: 'signature',
    });

    it('a signature takes an identity and an address over; the loser’s links are released and returned', async () => {
      await store.proveLink(link('u1', 'a.eth'), 'record');
      const taken = await store.proveLink(signed('u2', '0xabc-u1', '0xabc-u1'), 'signature');
      if ('refusal' in taken) throw new Error('refused');
      expect(taken.displaced.map((l) => [l.userId, l.identity, l.releasedAt !== null])).toEqual([
        ['u1', 'a.eth', true],
      ]);
      expect((await store.getHolding(G, 'address', '0xabc-u1'))?.userId).toBe('u2');
      // The loser's identity is free again: nobody holds a.eth now.
      expect(await store.getHolding(G, 'identity', 'a.eth')).toBeUndefined();
    });

    it('a record proof never takes another member’s address, and changes nothing when refused', async () => {
      await store.proveLink(signed('u1', 'w.eth', '0xwallet'), 'signature');
      const refused = await store.proveLink({ ...link('u2', 'sub.w.eth'), address: '0xwallet' }, 'record');
      expect(refused).toMatchObject({ refusal: { code: 'address_taken', holding: { userId: 'u1' } } });
      expect(await store.getUserLinks(G, 'u2')).toEqual([]);
      expect(await store.getHolding(G, 'identity', 'sub.w.eth')).toBeUndefined();
    });

    it('a signature whose challenge is older than the holder’s signature is refused as raced', async () => {
      time.t = 5_000;
      await store.proveLink(signed('u1', '0xw', '0xw'), 'signature', { challengeIssuedAt: 4_000 });
      const late = await store.proveLink(signed('u2', '0xw', '0xw'), 'signature', {
        challengeIssuedAt: 4_500,
      });
      expect(late).toMatchObject({ refusal: { code: 'raced' } });
      time.t = 7_000;
      const fresh = await store.proveLink(signed('u2', '0xw', '0xw'), 'signature', {
        challengeIssuedAt: 6_000,
      });
      expect('refusal' in fresh).toBe(false);
      expect((await store.getHolding(G, 'address', '0xw'))?.userId).toBe('u2');
    });

    it('20 concurrent signatures for one wallet from two store connections: exactly one holds it', async () => {
      const other = await open();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? store : other).proveLink(signed(`racer${i}`, '0xrace', '0xrace'), 'signature', {
            challengeIssuedAt: time.t - 1,
          }),
        ),
      );
      await other.close();
      const won = results.filter((r) => !('refusal' in r));
      expect(won).toHaveLength(1);
      expect(results.filter((r) => 'refusal' in r && r.refusal.code === 'raced')).toHaveLength(19);
      const active = (await store.getAddressLinks(G, '0xrace')).filter((l) => l.releasedAt === null);
      expect(active).toHaveLength(1);
      // Both pools filled up: give their connections back before the next test.
      await store.close();
    });

    it('20 concurrent Linked Roles proofs of one wallet from two store connections: exactly one holds it', async () => {
      const other = await open();
      const connection = (userId: string) => ({
        userId,
        identity: '0xrace',
        platform: 'ethereum',
        address: '0xrace',
        proofMethod: 'signature' as const,
        provenAt: time.t,
        sealedAccessToken: 'v1.a',
        sealedRefreshToken: 'v1.r',
        accessExpiresAt: time.t + 1_000,
        metadata: null,
        writtenAt: null,
        staleSince: null,
      });
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 === 0 ? store : other).proveRoleConnection(connection(`racer${i}`), {
            reason: 'taken',
            challengeIssuedAt: time.t - 1,
          }),
        ),
      );
      await other.close();
      expect(results.filter((r) => !('refusal' in r))).toHaveLength(1);
      const live = (await store.listRoleConnections()).filter((c) => c.releasedAt === null);
      expect(live).toHaveLength(1);
      await store.close();
    });

    it('a Linked Roles signature takes over another account’s connection, which is released with the reason', async () => {
      const base = {
        platform: 'ens',
        provenAt: 1,
        sealedAccessToken: 'v1.a',
        sealedRefreshToken: 'v1.r',
        accessExpiresAt: 9,
        metadata: null,
        writtenAt: null,
        staleSince: null,
      };
      await store.proveRoleConnection(
        { ...base, userId: 'alt1', identity: 'n.eth', address: '0xn', proofMethod: 'record' },
        { reason: 'x' },
      );
      const taken = await store.proveRoleConnection(
        { ...base, userId: 'alt2', identity: '0xn', address: '0xn', proofMethod: 'signature' },
        { reason: 'its wallet was proven by another account' },
      );
      if ('refusal' in taken) throw new Error('refused');
      expect(taken.displaced.map((c) => [c.userId, c.releasedReason])).toEqual([
        ['alt1', 'its wallet was proven by another account'],
      ]);
      expect((await store.getRoleConnection('alt1'))?.releasedAt).not.toBeNull();
      const refused = await store.proveRoleConnection(
        { ...base, userId: 'alt3', identity: 'm.eth', address: '0xn', proofMethod: 'record' },
        { reason: 'x' },
      );
      expect(refused).toMatchObject({ refusal: { code: 'address_taken' } });
      expect(await store.getRoleConnection('alt3')).toBeUndefined();
    });
  });

  describe('guild re-check leases', () => {
    it('one holder at a time: renewed by its holder, taken over once it lapses, released early', async () => {
      const other = await open();
      expect(await store.acquireGuildLease(G, 'process-a', time.t + 1_000)).toBe(true);
      expect(await other.acquireGuildLease(G, 'process-b', time.t + 1_000)).toBe(false);
      expect(await store.acquireGuildLease(G, 'process-a', time.t + 2_000)).toBe(true);
      expect(await other.acquireGuildLease('guild-2', 'process-b', time.t + 1_000)).toBe(true);
      time.t += 2_000;
      expect(await other.acquireGuildLease(G, 'process-b', time.t + 1_000)).toBe(true);
      await store.releaseGuildLease(G, 'process-a');
      expect(await store.acquireGuildLease(G, 'process-a', time.t + 1_000)).toBe(false);
      await other.releaseGuildLease(G, 'process-b');
      expect(await store.acquireGuildLease(G, 'process-a', time.t + 1_000)).toBe(true);
    });

    it("a dead process's lease ends at once, by its process id only; a lapsed one is listed until released or taken", async () => {
      await store.acquireGuildLease(G, 'host:1:dead/a', time.t + 60_000);
      await store.acquireGuildLease('guild-2', 'host:1:deadish/a', time.t + 60_000);
      await store.acquireGuildLease('guild-3', 'host:2:live/a', time.t + 60_000);
      expect(await store.lapsedGuildLeases(10)).toEqual([]);
      // A live process's lease: neither another process id nor a prefix of one ends it.
      expect(await store.expireGuildLease(G, 'host:2:live')).toBe(false);
      expect(await store.expireGuildLease(G, 'host:1')).toBe(false);
      expect(await store.expireGuildLease(G, 'host:1:dead')).toBe(true);
      expect(await store.expireGuildLease(G, 'host:1:dead')).toBe(false);
      expect(await store.lapsedGuildLeases(10)).toEqual([{ guildId: G, holder: 'host:1:dead/a' }]);
      // Only that guild's: the same process's lease elsewhere runs on (it is ended with its own hand-off).
      expect(await store.acquireGuildLease('guild-2', 'host:9:new/a', time.t + 60_000)).toBe(false);
      expect(await store.acquireGuildLease(G, 'host:9:new/a', time.t + 60_000)).toBe(true);
      expect(await store.lapsedGuildLeases(10)).toEqual([]);
      time.t += 60_000;
      expect(await store.lapsedGuildLeases(10)).toEqual([
        { guildId: G, holder: 'host:9:new/a' },
        { guildId: 'guild-2', holder: 'host:1:deadish/a' },
        { guildId: 'guild-3', holder: 'host:2:live/a' },
      ]);
      expect(await store.lapsedGuildLeases(1)).toHaveLength(1);
      await store.releaseGuildLease('guild-3', 'host:2:live/a');
      expect((await store.lapsedGuildLeases(10)).map((l) => l.guildId)).toEqual([G, 'guild-2']);
    });

    it('lets exactly one of many concurrent takers win', async () => {
      const other = await open();
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          (i % 2 ? store : other).acquireGuildLease(G, `p${i}`, time.t + 1_000),
        ),
      );
      expect(results.filter(Boolean)).toHaveLength(1);
    });
  });

  describe('gating exemptions', () => {
    it('adds, lists members first with who added them, removes, and audits each change', async () => {
      const added = await store.addExemption({
        guildId: G,
        kind: 'role',
        targetId: 'role-staff',
        addedBy: 'mod-1',
      });
      expect(added).toEqual({
        created: true,
        exemption: { guildId: G, kind: 'role', targetId: 'role-staff', addedBy: 'mod-1', addedAt: time.t },
      });
      time.t += 10;
      await store.addExemption({ guildId: G, kind: 'member', targetId: HOSTILE, addedBy: 'mod-2' });
      await store.addExemption({ guildId: 'other', kind: 'member', targetId: 'u-9', addedBy: 'mod-9' });
      // The same target again: nothing new, the first adder stays.
      time.t += 10;
      const again = await store.addExemption({
        guildId: G,
        kind: 'role',
        targetId: 'role-staff',
        addedBy: 'mod-3',
      });
      expect(again.created).toBe(false);
      expect(again.exemption.addedBy).toBe('mod-1');

      const list = await store.listExemptions(G);
      expect(list.map((e) => [e.kind, e.targetId, e.addedBy])).toEqual([
        ['member', HOSTILE, 'mod-2'],
        ['role', 'role-staff', 'mod-1'],
      ]);
      expect(await store.removeExemption({ guildId: G, kind: 'member', targetId: HOSTILE }, 'mod-1')).toBe(
        true,
      );
      expect(await store.removeExemption({ guildId: G, kind: 'member', targetId: HOSTILE }, 'mod-1')).toBe(
        false,
      );
      // A role exemption is not a member exemption of the same id.
      expect(
        await store.removeExemption({ guildId: G, kind: 'member', targetId: 'role-staff' }, 'mod-1'),
      ).toBe(false);
      expect((await store.listExemptions(G)).map((e) => e.targetId)).toEqual(['role-staff']);
      expect(await store.listExemptions('other')).toHaveLength(1);

      const audit = await store.listAuditEvents({ guildId: G });
      expect(audit.map((e) => [e.kind, e.userId])).toEqual([
        ['exemption_removed', 'mod-1'],
        ['exemption_added', 'mod-2'],
        ['exemption_added', 'mod-1'],
      ]);
    });

    it('keeps one row when two stores add the same exemption at once', async () => {
      const other = await open();
      try {
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            (i % 2 ? store : other).addExemption({
              guildId: G,
              kind: 'member',
              targetId: 'u-1',
              addedBy: `mod-${i}`,
            }),
          ),
        );
        expect(results.filter((r) => r.created)).toHaveLength(1);
        expect(await store.listExemptions(G)).toHaveLength(1);
      } finally {
        await other.close();
      }
    });
  });

  describe('Linked Roles connections', () => {
    const CONNECTION = {
      userId: 'user-9',
      identity: HOSTILE,
      platform: 'ens',
      address: '0xabc',
      proofMethod: 'record' as const,
      provenAt: 1_000,
      sealedAccessToken: 'v1.access',
      sealedRefreshToken: 'v1.refresh',
      accessExpiresAt: 5_000,
      metadata: null,
      writtenAt: null,
      staleSince: null,
    };

    it('round-trips, records writes and rotated tokens, and replaces on a new sign-in', async () => {
      expect(await store.getRoleConnection('user-9')).toBeUndefined();
      const saved = await store.saveRoleConnection(CONNECTION);
      expect(saved).toEqual({
        ...CONNECTION,
        lossSeenAt: null,
        releasedAt: null,
        releasedReason: null,
        recordLossSeenAt: null,
        updatedAt: time.t,
      });
      expect(await store.noteRoleConnectionLoss('user-9', 33)).toBe(true);
      expect((await store.getRoleConnection('user-9'))?.lossSeenAt).toBe(33);
      expect(await store.noteRoleConnectionLoss('user-9', null)).toBe(true);
      expect(await store.noteRoleConnectionLoss('nobody', 1)).toBe(false);
      expect(await store.noteRoleConnectionRecordLoss('user-9', 44)).toBe(true);
      expect((await store.getRoleConnection('user-9'))?.recordLossSeenAt).toBe(44);
      expect(await store.noteRoleConnectionRecordLoss('user-9', null)).toBe(true);
      expect(await store.noteRoleConnectionRecordLoss('nobody', 1)).toBe(false);
      time.t += 10;
      expect(await store.recordRoleConnectionWrite('user-9', { likely_human: '1', note: HOSTILE }, 77)).toBe(
        true,
      );
      expect(
        await store.updateRoleConnectionTokens('user-9', {
          sealedAccessToken: 'v1.access2',
          sealedRefreshToken: 'v1.refresh2',
          accessExpiresAt: 9_000,
        }),
      ).toBe(true);
      expect(await store.getRoleConnection('user-9')).toEqual({
        ...CONNECTION,
        sealedAccessToken: 'v1.access2',
        sealedRefreshToken: 'v1.refresh2',
        accessExpiresAt: 9_000,
        metadata: { likely_human: '1', note: HOSTILE },
        writtenAt: 77,
        lossSeenAt: null,
        releasedAt: null,
        releasedReason: null,
        recordLossSeenAt: null,
        updatedAt: time.t,
      });
      expect(await store.recordRoleConnectionWrite('nobody', {}, 1)).toBe(false);
      expect(
        await store.updateRoleConnectionTokens('nobody', {
          sealedAccessToken: 'x',
          sealedRefreshToken: null,
          accessExpiresAt: 1,
        }),
      ).toBe(false);
    });

    it('marks stale (dropping the tokens), lists only live ones by default, pages, and deletes', async () => {
      await store.saveRoleConnection(CONNECTION);
      await store.saveRoleConnection({ ...CONNECTION, userId: 'user-1' });
      await store.saveRoleConnection({ ...CONNECTION, userId: 'user-5' });
      expect(await store.markRoleConnectionStale('user-5', 42)).toBe(true);
      expect(await store.markRoleConnectionStale('user-5', 50)).toBe(true);
      expect(await store.getRoleConnection('user-5')).toMatchObject({
        staleSince: 42,
        sealedAccessToken: null,
        sealedRefreshToken: null,
      });
      expect((await store.listRoleConnections()).map((c) => c.userId)).toEqual(['user-1', 'user-9']);
      expect((await store.listRoleConnections({ includeStale: true })).map((c) => c.userId)).toEqual([
        'user-1',
        'user-5',
        'user-9',
      ]);
      expect(
        (await store.listRoleConnections({ afterUserId: 'user-1', limit: 1 })).map((c) => c.userId),
      ).toEqual(['user-9']);
      // A new sign-in clears the stale mark.
      await store.saveRoleConnection({ ...CONNECTION, userId: 'user-5' });
      expect((await store.getRoleConnection('user-5'))?.staleSince).toBeNull();
      expect(await store.deleteRoleConnection('user-5')).toBe(true);
      expect(await store.deleteRoleConnection('user-5')).toBe(false);
      expect(await store.getRoleConnection('user-5')).toBeUndefined();
    });

    const proof = (
      userId: string,
      identity: string,
      address: string | null,
      method: 'record' | 'signature',
    ) => ({
      ...CONNECTION,
      userId,
      identity,
      address,
      proofMethod: method,
      metadata: { likely_human: '1', not_spam: '1', not_risky: '1' },
    });

    it('one identity and one address app-wide: a signature takes them, a record takes a re-pointed name but no other wallet', async () => {
      expect(
        await store.proveRoleConnection(proof('a1', 'w.eth', '0xw', 'record'), { reason: 'x' }),
      ).toMatchObject({ displaced: [] });
      // The name's record now names a2: the name moves, with the address it brought.
      time.t += 1;
      const moved = await store.proveRoleConnection(proof('a2', 'w.eth', '0xw', 'record'), {
        reason: 'proven_elsewhere',
      });
      expect(moved).toMatchObject({ displaced: [{ userId: 'a1', releasedAt: time.t }] });
      expect(await store.getRoleConnection('a1')).toMatchObject({
        releasedAt: time.t,
        releasedReason: 'proven_elsewhere',
      });
      expect((await store.getHolding('0', 'address', '0xw'))?.userId).toBe('a2');
      // Another name pointing at the wallet proves nothing of it.
      expect(
        await store.proveRoleConnection(proof('a3', 'sub.w.eth', '0xw', 'record'), { reason: 'x' }),
      ).toMatchObject({ refusal: { code: 'address_taken', holding: { userId: 'a2' } } });
      // The wallet signs for a3: it takes the address, and a2 (whose name resolves to it) is released.
      time.t += 1;
      const signed = await store.proveRoleConnection(proof('a3', '0xw', '0xw', 'signature'), {
        reason: 'signed_elsewhere',
        challengeIssuedAt: time.t - 5,
      });
      expect(signed).toMatchObject({ displaced: [{ userId: 'a2', releasedReason: 'signed_elsewhere' }] });
      // A name held by signature is never taken by a record proof of its address.
      expect(
        await store.proveRoleConnection(proof('a2', 'w.eth', '0xw', 'record'), { reason: 'x' }),
      ).toMatchObject({
        refusal: { code: 'address_taken', holding: { userId: 'a3', proofMethod: 'signature' } },
      });
      // A signature whose challenge was made before a3 signed is refused: the first completion won.
      expect(
        await store.proveRoleConnection(proof('a4', '0xw', '0xw', 'signature'), {
          reason: 'x',
          challengeIssuedAt: time.t - 10,
        }),
      ).toMatchObject({ refusal: { code: 'raced', holding: { userId: 'a3' } } });
      expect(await store.getRoleConnection('a4')).toBeUndefined();
    });

    it('keeps an identity that may carry a flag as a hold when it is replaced, displaced, released or deleted', async () => {
      const flagged = { likely_human: '1', not_spam: '0', not_risky: '1' };
      await store.proveRoleConnection(
        { ...proof('u1', 'flagged.eth', '0xf', 'record'), metadata: flagged },
        {
          reason: 'x',
        },
      );
      await store.proveRoleConnection(proof('u1', 'clean.eth', '0xc', 'record'), { reason: 'x' });
      await store.proveRoleConnection(proof('u1', 'clean2.eth', '0xc2', 'record'), { reason: 'x' });
      expect(await store.listRoleConnectionHolds('u1')).toEqual([
        {
          userId: 'u1',
          identity: 'flagged.eth',
          platform: 'ens',
          address: '0xf',
          flags: ['isSpam'],
          since: time.t,
          clearSeenAt: null,
        },
      ]);
      // Never written (metadata null): both flags may be there.
      await store.proveRoleConnection(
        { ...proof('u2', 'x.eth', '0xx', 'record'), metadata: null },
        {
          reason: 'x',
        },
      );
      await store.proveRoleConnection(proof('u3', 'x.eth', '0xx', 'record'), { reason: 'proven_elsewhere' });
      expect((await store.listRoleConnectionHolds('u2')).map((h) => [h.identity, h.flags])).toEqual([
        ['x.eth', ['isSpam', 'isRisky']],
      ]);
      await store.proveRoleConnection(
        { ...proof('u4', 'r.eth', null, 'record'), metadata: { not_risky: '0', not_spam: '1' } },
        {
          reason: 'x',
        },
      );
      expect(await store.releaseRoleConnection('u4', 'record_gone', time.t)).toBe(true);
      expect((await store.listRoleConnectionHolds('u4')).map((h) => [h.identity, h.flags])).toEqual([
        ['r.eth', ['isRisky']],
      ]);
      // A clean connection deleted leaves nothing; a flagged one its hold; a released one nothing more.
      expect(await store.deleteRoleConnection('u3')).toBe(true);
      expect(await store.listRoleConnectionHolds('u3')).toEqual([]);
      expect(await store.deleteRoleConnection('u4')).toBe(true);
      expect(await store.listRoleConnectionHolds('u4')).toHaveLength(1);
      await store.proveRoleConnection(
        { ...proof('u5', 'f.eth', null, 'record'), metadata: flagged },
        { reason: 'x' },
      );
      expect(await store.deleteRoleConnection('u5', { notWrittenAfter: time.t })).toBe(true);
      expect((await store.listRoleConnectionHolds('u5')).map((h) => h.identity)).toEqual(['f.eth']);

      // A clear sighting is noted and forgotten; the hold goes once removed.
      expect(await store.noteRoleConnectionHoldClear('u1', 'flagged.eth', 55)).toBe(true);
      expect((await store.listRoleConnectionHolds('u1'))[0]?.clearSeenAt).toBe(55);
      expect(await store.noteRoleConnectionHoldClear('u1', 'other.eth', 55)).toBe(false);
      // Held again (proven and replaced while flagged): the flags merge and the sighting no longer stands.
      await store.proveRoleConnection(
        { ...proof('u1', 'flagged.eth', '0xf', 'record'), metadata: { not_spam: '1', not_risky: '0' } },
        {
          reason: 'x',
        },
      );
      await store.proveRoleConnection(proof('u1', 'clean.eth', '0xc', 'record'), { reason: 'x' });
      expect((await store.listRoleConnectionHolds('u1')).map((h) => [h.flags, h.clearSeenAt])).toEqual([
        [['isSpam', 'isRisky'], null],
      ]);
      expect(await store.removeRoleConnectionHold('u1', 'flagged.eth')).toBe(true);
      expect(await store.removeRoleConnectionHold('u1', 'flagged.eth')).toBe(false);
      await store.addRoleConnectionHold({
        userId: 'u9',
        identity: HOSTILE,
        platform: 'ens',
        address: null,
        flags: ['isRisky'],
        since: 7,
      });
      expect(await store.listRoleConnectionHolds('u9')).toEqual([
        {
          userId: 'u9',
          identity: HOSTILE,
          platform: 'ens',
          address: null,
          flags: ['isRisky'],
          since: 7,
          clearSeenAt: null,
        },
      ]);
    });

    it('deletes on a deauthorization only a connection not written to Discord after it', async () => {
      await store.saveRoleConnection({ ...CONNECTION, writtenAt: 1_000 });
      expect(await store.deleteRoleConnection('user-9', { notWrittenAfter: 999 })).toBe(false);
      expect(await store.getRoleConnection('user-9')).toBeDefined();
      expect(await store.deleteRoleConnection('user-9', { notWrittenAfter: 1_000 })).toBe(true);
      await store.saveRoleConnection({ ...CONNECTION, writtenAt: null });
      expect(await store.deleteRoleConnection('user-9', { notWrittenAfter: 1 })).toBe(true);
      expect(await store.getRoleConnection('user-9')).toBeUndefined();
    });
  });
});
