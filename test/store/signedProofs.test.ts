import { describe, expect, it } from 'vitest';
import type { GatingStore, NonceRecord } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS, type StoreHarness } from './harness.ts';

const RECORD: NonceRecord = {
  nonce: 'n-1',
  guildId: 'guild-7',
  userId: 'user-7',
  userName: `alice'); DROP TABLE signed_proofs; -- \u0000`,
  guildName: 'Guild',
  identity: 'alice.eth',
  address: '0xabc',
  expiresAt: 2_000,
  usedAt: 1_500,
  failedAttempts: 0,
};

describe.each(STORE_BACKENDS)('signed-proof queue (%s)', (_name, makeHarness) => {
  let h: StoreHarness;
  let store: GatingStore;
  const time = { t: 1_700_000_000_000 };

  freshDatabaseEachTest(makeHarness, async (harness) => {
    h = harness;
    time.t = 1_700_000_000_000;
    store = await h.open({ now: () => time.t, leaseMs: 1_000 });
  });

  it('hands a proof to one claimant, keeps the record intact, and answers its result once finished', async () => {
    const id = await store.enqueueSignedProof({ record: RECORD, address: '0xabc' });
    expect(await store.openSignedProofs(10)).toEqual([{ id, guildId: 'guild-7' }]);
    expect(await store.signedProofResult(id)).toBeNull();
    const other = await h.open({ now: () => time.t, leaseMs: 1_000 });
    const [a, b] = await Promise.all([store.claimSignedProof(id), other.claimSignedProof(id)]);
    const claim = a ?? b;
    expect([a, b].filter(Boolean)).toHaveLength(1);
    expect(claim?.record).toEqual({ ...RECORD, userName: RECORD.userName?.replace('\u0000', '\uFFFD') });
    expect(claim?.attempts).toBe(1);
    expect(await store.openSignedProofs(10)).toEqual([]);
    expect(await store.finishSignedProof(id, 'wrong-token', { ok: true })).toBe(false);
    expect(await store.finishSignedProof(id, claim?.claimToken ?? '', { ok: false, code: 'x' })).toBe(true);
    expect(await store.signedProofResult(id)).toEqual({ ok: false, code: 'x' });
    expect(await store.claimSignedProof(id)).toBeNull();
    expect(await store.signedProofResult(id + 1000)).toBeUndefined();
  });

  it('lets a lapsed claim be taken over (a shard died mid-proof), and the late finisher is refused', async () => {
    const id = await store.enqueueSignedProof({ record: RECORD, address: '0xabc' });
    const first = await store.claimSignedProof(id);
    time.t += 999;
    expect(await store.claimSignedProof(id)).toBeNull();
    time.t += 1;
    expect(await store.openSignedProofs(10)).toEqual([{ id, guildId: 'guild-7' }]);
    const second = await store.claimSignedProof(id);
    expect(second?.attempts).toBe(2);
    expect(await store.finishSignedProof(id, first?.claimToken ?? '', { ok: true })).toBe(false);
    expect(await store.finishSignedProof(id, second?.claimToken ?? '', { ok: true })).toBe(true);
  });

  it('prunes finished proofs past the cut-off only', async () => {
    const done = await store.enqueueSignedProof({ record: RECORD, address: '0xabc' });
    const open = await store.enqueueSignedProof({ record: { ...RECORD, nonce: 'n-2' }, address: '0xabc' });
    const claim = await store.claimSignedProof(done);
    await store.finishSignedProof(done, claim?.claimToken ?? '', { ok: true });
    time.t += 10_000;
    expect(await store.deleteFinishedSignedProofs(time.t - 20_000)).toBe(0);
    expect(await store.deleteFinishedSignedProofs(time.t)).toBe(1);
    expect(await store.signedProofResult(done)).toBeUndefined();
    expect((await store.openSignedProofs(10)).map((p) => p.id)).toEqual([open]);
  });
});
