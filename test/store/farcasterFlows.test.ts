/**
 * Sign In With Farcaster flows in the store, on SQLite and PostgreSQL: a channel opened (and opened again
 * after a refusal), one approval settled by one reader only, claimed once, burned after the refusal limit,
 * an account's open flows capped, expired ones pruned, a Linked Roles flow's sealed grant kept until its
 * outcome.
 */
import { describe, expect, it } from 'vitest';
import type { GatingStore, NewFarcasterFlow } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS } from './harness.ts';

const T0 = 1_700_000_000_000;

function flow(nonce: string, more: Partial<NewFarcasterFlow> = {}): NewFarcasterFlow {
  return {
    nonce,
    guildId: '200000000000000001',
    userId: '300000000000000001',
    userName: `alice'); DROP TABLE farcaster_flows; -- \u0000`,
    guildName: 'Guild',
    identity: 'dwr.farcaster',
    fid: 3,
    createdAt: T0,
    expiresAt: T0 + 600_000,
    ...more,
  };
}

describe.each(STORE_BACKENDS)('farcaster flows (%s)', (_name, makeHarness) => {
  let store: GatingStore;
  freshDatabaseEachTest(makeHarness, async (h) => {
    store = await h.open({ now: () => T0 });
  });

  it('opens a channel, settles its approval once (only from that channel), and is claimed once', async () => {
    await store.createFarcasterFlow(flow('a'));
    expect(await store.getFarcasterFlow('a')).toMatchObject({
      state: 'new',
      fid: 3,
      channelToken: null,
      userName: `alice'); DROP TABLE farcaster_flows; -- \uFFFD`,
    });
    expect(
      await store.openFarcasterChannel('a', { token: 'T1', url: 'https://x/?t=T1' }, T0 + 1, 5),
    ).toMatchObject({ state: 'open', channelToken: 'T1', channelUrl: 'https://x/?t=T1' });
    const approved = { state: 'approved' as const, signer: '0xABC', authMethod: 'custody' as const };
    // A reader of another (older) channel settles nothing.
    expect(await store.settleFarcasterFlow('a', 'T0', approved, T0 + 2)).toBeUndefined();
    const [first, second] = await Promise.all([
      store.settleFarcasterFlow('a', 'T1', approved, T0 + 2),
      store.settleFarcasterFlow('a', 'T1', approved, T0 + 2),
    ]);
    expect([first, second].filter(Boolean)).toHaveLength(1);
    expect(await store.getFarcasterFlow('a')).toMatchObject({
      state: 'approved',
      signer: '0xabc',
      channelToken: null,
    });
    // Approved: no channel may be opened again.
    expect(await store.openFarcasterChannel('a', { token: 'T2', url: 'u' }, T0 + 3, 5)).toBeUndefined();
    const claims = await Promise.all([
      store.claimFarcasterApproval('a', T0 + 4),
      store.claimFarcasterApproval('a', T0 + 4),
    ]);
    expect(claims.filter(Boolean)).toHaveLength(1);
    await store.recordFarcasterOutcome('a', { ok: true }, T0 + 5);
    expect(await store.getFarcasterFlow('a')).toMatchObject({ state: 'done', outcome: { ok: true } });
  });

  it("keeps a Linked Roles flow's sealed grant through its approval and claim, and drops it with the outcome", async () => {
    await store.createFarcasterFlow(flow('g', { guildId: '0', sealedGrant: 'sealed:v1:grant' }));
    await store.createFarcasterFlow(flow('h'));
    expect(await store.getFarcasterFlow('h')).toMatchObject({ sealedGrant: null });
    await store.openFarcasterChannel('g', { token: 'G1', url: 'u' }, T0 + 1, 5);
    const approved = { state: 'approved' as const, signer: '0xabc', authMethod: 'custody' as const };
    expect(await store.settleFarcasterFlow('g', 'G1', approved, T0 + 2)).toMatchObject({
      sealedGrant: 'sealed:v1:grant',
    });
    // The claim hands the grant to whoever finishes the flow; the outcome then drops it.
    expect(await store.claimFarcasterApproval('g', T0 + 3)).toMatchObject({
      state: 'done',
      sealedGrant: 'sealed:v1:grant',
    });
    await store.recordFarcasterOutcome('g', { kind: 'connected' }, T0 + 4);
    expect(await store.getFarcasterFlow('g')).toMatchObject({
      state: 'done',
      outcome: { kind: 'connected' },
      sealedGrant: null,
    });
  });

  it('a refused approval can be retried on a new channel until the refusal limit burns the flow', async () => {
    await store.createFarcasterFlow(flow('b'));
    for (let i = 1; i <= 2; i += 1) {
      expect(await store.openFarcasterChannel('b', { token: `T${i}`, url: 'u' }, T0 + i, 2)).toBeDefined();
      expect(
        await store.settleFarcasterFlow(
          'b',
          `T${i}`,
          { state: 'refused', outcome: { reason: 'wrong_fid' }, counted: true },
          T0 + i,
        ),
      ).toMatchObject({ state: 'refused', refusals: i, outcome: { reason: 'wrong_fid' } });
    }
    expect(await store.openFarcasterChannel('b', { token: 'T3', url: 'u' }, T0 + 3, 2)).toBeUndefined();
    // A refusal that was not the member's doing (the chain was down) is not counted.
    await store.createFarcasterFlow(flow('c'));
    await store.openFarcasterChannel('c', { token: 'C1', url: 'u' }, T0, 2);
    await store.settleFarcasterFlow(
      'c',
      'C1',
      { state: 'refused', outcome: { reason: 'chain_unavailable' }, counted: false },
      T0,
    );
    expect(await store.getFarcasterFlow('c')).toMatchObject({ refusals: 0 });
  });

  it('an expired flow opens no channel, and upkeep deletes it', async () => {
    await store.createFarcasterFlow(flow('d', { expiresAt: T0 + 10 }));
    expect(await store.openFarcasterChannel('d', { token: 'T', url: 'u' }, T0 + 10, 5)).toBeUndefined();
    expect(await store.deleteExpiredFarcasterFlows(T0 + 10)).toBe(1);
    expect(await store.getFarcasterFlow('d')).toBeUndefined();
  });

  it("caps an account's unfinished flows, dropping the oldest", async () => {
    for (const [i, nonce] of ['e1', 'e2', 'e3'].entries())
      await store.createFarcasterFlow(flow(nonce, { expiresAt: T0 + 600_000 + i }), {
        maxOpenPerUser: 2,
        now: T0,
      });
    expect(await store.getFarcasterFlow('e1')).toBeUndefined();
    expect(await store.getFarcasterFlow('e2')).toBeDefined();
    expect(await store.getFarcasterFlow('e3')).toBeDefined();
  });
});

describe.each(STORE_BACKENDS)(
  "the registry's aliases: a Farcaster name's record claims its FID (%s)",
  (_name, makeHarness) => {
    let store: GatingStore;
    const link = (
      userId: string,
      identity: string,
      proofMethod: 'record' | 'signature',
      address: string,
    ) => ({
      guildId: 'g1',
      userId,
      identity,
      platform: 'farcaster',
      address,
      proofMethod,
      provenAt: T0,
    });

    freshDatabaseEachTest(makeHarness, async (h) => {
      store = await h.open({ now: () => T0 });
    });

    it('a sign-in of the FID releases the record link that claimed it; the record cannot take it back', async () => {
      const byRecord = await store.proveLink(
        { ...link('alice', 'alice.farcaster', 'record', '0xaa'), aliases: ['farcaster,#3'] },
        'record',
      );
      expect('link' in byRecord).toBe(true);
      expect(await store.getHolding('g1', 'identity', 'farcaster,#3')).toMatchObject({
        userId: 'alice',
        identity: 'alice.farcaster',
      });
      const signed = await store.proveLink(link('bob', 'farcaster,#3', 'signature', '0xbb'), 'farcaster');
      if (!('link' in signed)) throw new Error('refused');
      expect(signed.displaced.map((d) => [d.userId, d.identity])).toEqual([['alice', 'alice.farcaster']]);
      expect(
        (await store.getLink({ guildId: 'g1', userId: 'alice', identity: 'alice.farcaster' }))?.releasedAt,
      ).toBe(T0);
      const back = await store.proveLink(
        { ...link('alice', 'alice.farcaster', 'record', '0xaa'), aliases: ['farcaster,#3'] },
        'record',
      );
      expect(back).toMatchObject({
        refusal: { code: 'fid_taken', holding: { userId: 'bob', subject: 'farcaster,#3' } },
      });
      expect(await store.getHolding('g1', 'identity', 'alice.farcaster')).toBeUndefined();
    });

    it('a record of another name of the same FID takes the alias from an earlier record, releasing its link', async () => {
      await store.proveLink(
        { ...link('alice', 'alice.farcaster', 'record', '0xaa'), aliases: ['farcaster,#3'] },
        'r',
      );
      const moved = await store.proveLink(
        { ...link('carol', 'farcaster,#3', 'record', '0xcc'), aliases: ['farcaster,#3'] },
        'r',
      );
      if (!('link' in moved)) throw new Error('refused');
      expect(moved.displaced.map((d) => d.userId)).toEqual(['alice']);
    });
  },
);
